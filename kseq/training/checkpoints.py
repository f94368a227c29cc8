"""Training checkpoints that a kill, a full disk or a torn file cannot make unusable.

A checkpoint is two files in `OUTPUT/backup/`, both written under a temporary
name and moved into place (`kseq.atomic_files`):

- `step-000000120.weights.h5`: model weights with the optimizer's state and
  step counter (Keras `save_weights` of a compiled model);
- `step-000000120.json`: the position (`step`, `epoch`, `batch`), the target
  epoch, how batches were made (`batching`: seed, boundaries, batch size or
  token budget, batches per epoch), the random-seed states of the dropout
  layers (Keras's `save_weights` leaves them out, and a resumed run must draw
  the same masks), whether training had `finished`, and the weights file's
  size and SHA-256. It is written last, so a checkpoint without it never
  existed.

Reading validates every file: unparsable JSON, a missing weights file, or one
whose size or hash differs is reported by name and the next older checkpoint
is tried. The two newest checkpoints are kept. Keras's own
`BackupAndRestore` falls back to its `.bkp` copy only on `OSError`, writes in
place and deletes its backup before the final save; this store does none of
that.

Example:
>>> import keras, numpy as np, tempfile
>>> from kseq.training.checkpoints import CheckpointStore
>>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
>>> model.compile("sgd", "mse")
>>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0)
>>> store = CheckpointStore(tempfile.mkdtemp())
>>> store.save(model, steps_per_epoch=4, target_epochs=3)["step"]
1
>>> store.latest()["epoch"], store.latest()["batch"]
(0, 1)
"""

import contextlib
import glob
import json
import math
import os
import re
import shutil

import numpy as np

from kseq.atomic_files import (TEMPORARY_PREFIX, atomic_path, atomic_write_json, file_sha256,
                                reserve_space)
from kseq.errors import KseqError, one_line

KEEP = 2
_NAME = re.compile(r"^step-(\d{9})\.json$")


def estimated_file_bytes(model):
    """Bytes a checkpoint or `.keras` file of `model` needs, with room for HDF5's overhead."""
    variables = list(model.weights)
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None:
        variables += list(optimizer.variables)
    data = sum(math.prod(v.shape) * np.dtype(v.dtype).itemsize for v in variables)
    return int(data * 1.1) + (256 << 10)


def seed_variables(model):
    """The random-seed states of `model` (dropout), which `save_weights` does not save."""
    saved = {id(variable) for variable in model.weights}
    return [variable for variable in model.variables if id(variable) not in saved]


def ensure_optimizer_built(model):
    """Creates the optimizer's variables so `load_weights` can fill them."""
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and not optimizer.built:
        optimizer.build(model.trainable_variables)


def _moments_holder(optimizer):
    """The optimizer that holds the moments (inside a `LossScaleOptimizer`, its inner one)."""
    return getattr(optimizer, "inner_optimizer", optimizer)


def optimizer_state(optimizer):
    """The values of `optimizer`'s step counter and moments, or None before it is built."""
    if optimizer is None or not optimizer.built:
        return None
    return [variable.numpy() for variable in _moments_holder(optimizer).variables]


def restore_optimizer_state(model, state, saved_name):
    """Fills `model`'s optimizer (built here if needed) with `state` from `optimizer_state`;
    an optimizer of another kind or shape (`saved_name`'s) is refused with one line."""
    ensure_optimizer_built(model)
    target = _moments_holder(model.optimizer).variables
    if [tuple(v.shape) for v in target] != [value.shape for value in state]:
        raise KseqError(f"The saved optimizer ({saved_name}, {len(state)} variables) does not "
                        f"fit the recipe's ({type(_moments_holder(model.optimizer)).__name__}, "
                        f"{len(target)}); train into a new --output. "
                        f"Received: {len(state)} variables")
    for variable, value in zip(target, state):
        variable.assign(value)


def compiled_from_recipe(model, training):
    """`model` compiled anew from a recipe's `training` section, keeping its optimizer's
    state (step counter, moments; a loss scale starts afresh).

    A `.keras` file brings back the optimizer and schedule it was saved with; a run
    that continues it must train with the recipe it records (a new peak learning
    rate, warm-up, clipping or label smoothing), not with the file's. An optimizer
    whose state does not fit the recipe's is refused with one line.
    """
    saved = getattr(model, "optimizer", None)
    state = optimizer_state(saved)
    model.compile_from_recipe(training)
    if state is not None:
        restore_optimizer_state(model, state, type(_moments_holder(saved)).__name__)
    return model


class CheckpointStore:
    """The checkpoints of one run folder: save, find the newest valid one, load, clear."""

    def __init__(self, folder, report=print):
        self.folder = folder
        self.report = report

    def _paths(self, step):
        stem = os.path.join(self.folder, f"step-{step:09d}")
        return stem + ".json", stem + ".weights.h5"

    def steps(self):
        """Steps that have a metadata file, newest first."""
        if not os.path.isdir(self.folder):
            return []
        found = [int(m.group(1)) for m in map(_NAME.match, os.listdir(self.folder)) if m]
        return sorted(found, reverse=True)

    def save(self, model, steps_per_epoch, target_epochs, batching=None, finished=False):
        """Writes a checkpoint at the optimizer's current step; returns its metadata.

        Raises `KseqError` naming the folder when a write fails (disk full, read
        only); the previous checkpoints stay as they were.
        """
        step = int(model.optimizer.iterations.numpy())
        epoch, batch = divmod(step, steps_per_epoch)
        metadata_path, weights_path = self._paths(step)
        try:
            os.makedirs(self.folder, exist_ok=True)
            with atomic_path(weights_path) as scratch:
                reserve_space(scratch, estimated_file_bytes(model))
                model.save_weights(scratch)
            metadata = {"step": step, "epoch": epoch, "batch": batch,
                        "steps_per_epoch": steps_per_epoch, "target_epochs": target_epochs,
                        "batching": batching or {}, "finished": bool(finished),
                        "seed_states": [v.numpy().tolist() for v in seed_variables(model)],
                        "weights_file": os.path.basename(weights_path),
                        "weights_bytes": os.path.getsize(weights_path),
                        "weights_sha256": file_sha256(weights_path)}
            atomic_write_json(metadata_path, metadata)
        except Exception as error:  # h5py raises OSError or RuntimeError on a full disk
            raise KseqError(
                f"Could not write a checkpoint in {self.folder} ({one_line(error, 160)}); the previous "
                f"checkpoint is kept, and the same command resumes from it once there is room. "
                f"Received: step {step}") from None
        self._prune()
        return metadata

    def delete(self, step):
        """Removes checkpoint `step` (its weights led to a non-finite loss)."""
        for path in self._paths(step):
            with contextlib.suppress(OSError):
                os.remove(path)

    def _prune(self):
        for step in self.steps()[KEEP:]:
            for path in self._paths(step):
                with contextlib.suppress(OSError):
                    os.remove(path)
        for stray in glob.glob(os.path.join(self.folder, TEMPORARY_PREFIX + "*")):
            with contextlib.suppress(OSError):
                os.remove(stray)

    def _validate(self, step):
        """The metadata of checkpoint `step`, or the reason it cannot be used."""
        metadata_path, weights_path = self._paths(step)
        try:
            with open(metadata_path, encoding="utf-8") as handle:
                metadata = json.load(handle)
            expected = (int(metadata["weights_bytes"]), str(metadata["weights_sha256"]))
            if int(metadata["step"]) != step or int(metadata["target_epochs"]) < 1:
                raise ValueError(f"it describes step {metadata['step']}")
            for key in ("batching", "seed_states"):
                metadata.setdefault(key, {} if key == "batching" else [])
        except (OSError, ValueError, KeyError, TypeError) as error:
            return None, f"{metadata_path} is unreadable ({one_line(error, 160)})"
        if not os.path.isfile(weights_path):
            return None, f"{weights_path} is missing"
        actual = (os.path.getsize(weights_path), file_sha256(weights_path))
        if actual != expected:
            return None, (f"{weights_path} is damaged ({actual[0]} bytes, sha256 "
                          f"{actual[1][:12]}…; expected {expected[0]} bytes, {expected[1][:12]}…)")
        return metadata, None

    def valid(self):
        """Metadata of each valid checkpoint, newest first (reporting each bad one)."""
        for step in self.steps():
            metadata, problem = self._validate(step)
            if metadata is None:
                self.report(f"checkpoint at step {step} skipped: {problem}")
            else:
                yield metadata

    def latest(self):
        """Metadata of the newest valid checkpoint, or None."""
        return next(self.valid(), None)

    def load(self, model, metadata):
        """Loads a checkpoint found by `valid()` into a compiled model."""
        weights_path = self._paths(metadata["step"])[1]
        ensure_optimizer_built(model)
        variables = seed_variables(model)
        try:
            if len(metadata["seed_states"]) not in (0, len(variables)):
                raise ValueError(f"{len(metadata['seed_states'])} seed states for "
                                 f"{len(variables)} dropout seeds")
            model.load_weights(weights_path)
            for variable, state in zip(variables, metadata["seed_states"]):
                variable.assign(np.asarray(state, dtype=variable.dtype))
        except Exception as error:
            raise KseqError(f"Could not load the checkpoint {weights_path} into this model "
                            f"({one_line(error, 160)}); was the recipe changed? Received: "
                            f"{weights_path}") from None

    def load_newest(self, model):
        """Loads the newest checkpoint that validates and loads; returns its metadata or None."""
        for metadata in self.valid():
            try:
                self.load(model, metadata)
                return metadata
            except KseqError as error:
                self.report(f"checkpoint at step {metadata['step']} skipped: {error}")
        return None

    def clear(self):
        """Deletes the folder (after the final model was saved).

        Renamed first, so a kill during the deletion leaves no older checkpoint
        that a later run would resume from.
        """
        if not os.path.isdir(self.folder):
            return
        doomed = os.path.join(os.path.dirname(os.path.abspath(self.folder)),
                              f"{TEMPORARY_PREFIX}backup-{os.getpid()}")
        os.replace(self.folder, doomed)
        shutil.rmtree(doomed, ignore_errors=True)
