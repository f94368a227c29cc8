"""Training any registered task from a recipe: resumable, exact, and unable to lose a model.

The recipe's `"task"` (default "translator") picks the builder
(`kseq.zoo.build`); the model itself brings its preprocessor, compile defaults
and validation callback (`kseq.models.Task`). Data are `(input, target)`
pairs: a builder's splits or a user's TSV or CSV files (one, several, a glob or
a folder, plain or gzip; `read_table_rows`: a header and `columns` pick its
input and target columns), split by a hash of the input, prepared once and
streamed from disk (`kseq.training.training_data`): memory does not grow with
the corpus.

An output folder holds `recipe.json`, `data_source.json` (what it trained on),
`model_config.json` (vocabularies included, so a restart builds the same
model), `backup/` (checkpoints every `save_every_steps` steps: weights,
optimizer state and step counter, see `kseq.training.checkpoints`),
`history.csv`, `curves.png` (loss, and validation BLEU where the task reports
it, redrawn every epoch),
and at the end `model.keras`.

- **Resume continues the data.** Epoch `e` is shuffled with a seed made of
  the recipe's seed and `e`, and every epoch has the same number of batches,
  so optimizer step `s` is batch `s % n` of epoch `s // n`. Started again after
  a kill, a run restores the newest valid checkpoint and trains the remaining
  batches of that epoch, then the rest: the same steps, in the same order, as
  a run that was never interrupted.
- **Nothing is lost.** Every file is written under a temporary name and moved
  into place; `backup/` is deleted only after `model.keras` was saved; a bad
  checkpoint falls back to the previous one; a full disk stops the run with
  one line and keeps the last checkpoint.
- **A non-finite loss stops the run** at the first bad step with a
  `KseqError`; no model is saved, and the last finite checkpoint stays. A run
  left without a checkpoint of its own leaves the folder's records (recipe,
  history, curves) as they were before it.
- **Continuing a finished run**: training into a folder holding `model.keras`
  continues from it (weights, optimizer state, step counter), finishing an
  epoch a time budget interrupted and then `epochs` more.
- **Devices and precision** (`training.strategy`, `training.precision`,
  `training.jit_compile`; see `kseq.training.distribution` and
  `kseq.training.precision`): the model, its optimizer and metrics are built,
  resumed and continued under the strategy's scope and the precision's dtype
  policy; `model_config.json` and `model.keras` are float32 whatever the
  training precision, and a checkpoint resumes only at its own precision.
  Under `multi-worker` only the chief writes this folder and validates; the
  other workers train into a private copy (`distribution.task_output_folder`).
"""

import collections.abc
import contextlib
import json
import logging
import os

import keras
import tensorflow as tf

from kseq import zoo
from kseq.arguments import check_float, check_int
from kseq.atomic_files import atomic_path, atomic_write_json, reserve_space
from kseq.data.corpus.held_out_split import split_of
from kseq.data.corpus.token_store import WINDOW
from kseq.data.pipeline.bucketing import count_fitting_chunks, example_length
from kseq.data.pipeline.parallel_text import check_columns
from kseq.errors import KseqError, one_line
from kseq.models.translator import Translator
from kseq.presets.catalog import is_preset, load_preset_model
from kseq.presets.keras_archive import check_declared_size
from kseq.training.distribution import (CONTINUED, NEW, UNUSABLE,
                                       check_multi_worker_environment,
                                       check_same_start, lost_worker_as_error, make_strategy,
                                       shard_by_data, task_output_folder)
from kseq.training.multi_worker_workaround import patch_for_multi_worker
from kseq.training.precision import config_at_precision, precision_scope, rebuilt_at_precision
from kseq.training.recipe_checks import check_recipe, check_sections
from kseq.training.run_folder import RunFolder, check_output_folder
from kseq.training.callbacks import (Checkpointing, NonFiniteLossGuard, TimeBudget,
                                     weights_are_finite)
from kseq.training.checkpoints import (CheckpointStore, compiled_from_recipe,
                                       ensure_optimizer_built, estimated_file_bytes)
from kseq.training.curves import TrainingCurves
from kseq.training.data_service import served
from kseq.training import fine_tuning
from kseq.training.interruption import Interruption
from kseq.training.progress import Progress
from kseq.training.training_data import (TrainingData, file_source, held_out_warning,
                                         prepared_corpus)


def split_pairs(pairs, valid_percent=2, test_percent=2):
    """Deterministic split by a hash of the source: the same sentence always lands in one split
    (`kseq.data.corpus.held_out_split`, as a training run splits its files)."""
    splits = {"train": [], "valid": [], "test": []}
    for source, target in pairs:
        splits[split_of(source, valid_percent, test_percent)].append((source, target))
    return splits


def load_data(recipe, data_source=None):
    """Splits of a data source (`RunFolder.resolve_data_source`): the recipe's builder's
    splits as built, or a file source's (a path, glob or folder; read with its recorded
    `columns`) `"train"`, `"valid"` and `"test"` splits, each read from the prepared
    corpus into a list when first asked for (a run itself never lists its training
    split: `kseq.training.training_data`)."""
    if isinstance(data_source, (str, os.PathLike)):
        data_source = {"kind": "file", "path": os.fspath(data_source)}
    if data_source is None or data_source["kind"] == "builder":
        if "data" not in recipe:
            raise KseqError("This recipe names no data builder: pass --data FILE.tsv. "
                            "Received: no data")
        return zoo.build_data(recipe)
    if "sha256" not in data_source or "files" not in data_source:  # given by hand, or old
        data_source = file_source(data_source["path"], data_source.get("columns"))
    return CorpusSplits(prepared_corpus(recipe, data_source))


class CorpusSplits(collections.abc.Mapping):
    """A prepared corpus's splits as lists, each read when first asked for."""

    def __init__(self, corpus):
        self.corpus, self._read = corpus, {}

    def __getitem__(self, split):
        if split not in ("train", "valid", "test"):
            raise KeyError(split)
        if split not in self._read:
            self._read[split] = self.corpus.pairs(split)
        return self._read[split]

    def __iter__(self):
        return iter(("train", "valid", "test"))

    def __len__(self):
        return 3


def _new_model(recipe, corpus):
    return zoo.build(recipe, corpus.sample())  # the vocabulary (and labels) from the sample


def _model_from_config(run, recipe, precision="float32"):
    config_path = run.file("model_config.json")
    try:
        with open(config_path, encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError) as error:
        raise KseqError(f"{config_path} is unreadable ({error}); train into a new --output. "
                        f"Received: {config_path}") from None
    if "class_name" in config:  # the serialized model (float32: rebuilt at the run's precision)
        model = keras.saving.deserialize_keras_object(config_at_precision(config, precision))
    else:  # written by kseq before the parts existed: a translator's flat config
        model = Translator.from_config(config)
    return model.compile_from_recipe(recipe.get("training", {}))


def load_trained(model_dir):
    """Loads `model_dir/model.keras` (or a `.keras` path, or a preset name with shipped
    weights) with a clear error when missing or bad; in float32, as saved, whatever the
    global dtype policy (a run continuing at another precision rebuilds it at that one)."""
    if not os.path.exists(model_dir) and is_preset(model_dir):
        return load_preset_model(model_dir)
    path = model_dir if str(model_dir).endswith(".keras") else os.path.join(model_dir, "model.keras")
    if not os.path.isfile(path):
        raise KseqError(f"No trained model here: expected {path}. Received: {model_dir}")
    check_declared_size(path)  # a zip bomb is refused before anything is extracted
    try:  # the file gives no policy to the model itself or its inputs: they would take the
        with precision_scope("float32"):  # global one (mixed_float16: a LossScaleOptimizer)
            return keras.saving.load_model(path)
    except Exception as error:  # a torn zip gives "File not found" from deep inside Keras
        raise KseqError(f"{path} is not a readable Keras model ({one_line(error, 200)}); it may "
                        f"be truncated. Received: {path}") from None


class _Start:
    """Where a run starts: the model, its position, and what it was resumed from."""

    def __init__(self, model, checkpoint=None, continued=False):
        self.model, self.checkpoint, self.continued = model, checkpoint, continued
        self.notes = []  # what a fine-tuning start changed (a new head)


def _start(run, recipe, corpus, store, source=None):
    """A new model (or `source`'s, fine-tuned), the newest checkpoint that loads, or the
    finished `model.keras`; with the recipe's `fine_tuning.freeze` applied before its
    optimizer is built.

    Call it under the run's strategy scope and `precision_scope`.
    """
    training = recipe.get("training", {})
    precision = training.get("precision", "float32")
    part = (recipe.get("fine_tuning") or {}).get("freeze")
    if store.steps() and _has_model(run):
        _check_checkpoint_precision(store, precision)
        if os.path.isfile(run.file("model_config.json")):
            model = _model_from_config(run, recipe, precision)
        else:
            model = _trained_at(run, precision, training)
        fine_tuning.freeze(model, part)
        checkpoint = store.load_newest(model)
        if checkpoint is not None:
            return _Start(model, checkpoint=checkpoint)
    if os.path.isfile(run.model_path):  # compiled with the recipe: its changes apply
        model = _trained_at(run, precision, training)
        fine_tuning.freeze(model, part)
        return _Start(model, continued=True)
    if store.steps():
        raise KseqError(f"No usable checkpoint in {store.folder} (see above) and no model.keras; "
                        f"train into a new --output. Received: {run.path}")
    if source is not None:  # fine-tuning: the source's weights, a fresh optimizer
        model, notes = fine_tuning.start_model(source, recipe, corpus, precision)
        fine_tuning.freeze(model, part)
        start = _Start(model.compile_from_recipe(training))
        start.notes = notes
        return start
    try:
        return _Start(_new_model(recipe, corpus))
    except TypeError as error:  # an unknown or misspelt model option
        raise KseqError(f"The recipe's model section does not fit this architecture "
                        f"({error}). Received: model={recipe.get('model')!r}") from None


def _start_point(run, store):
    """Where `_start` will resume, read from the folder without loading anything: the newest
    valid checkpoint's step, `CONTINUED` (a finished `model.keras`), `NEW`, or `UNUSABLE`
    (checkpoints, none valid, and no model.keras: `_start` refuses the folder). A newest
    checkpoint that validates but fails to load makes `_start` fall back to an older one:
    not foreseen here (identical folders still agree)."""
    if store.steps() and _has_model(run):
        latest = _quietly_latest(store)
        if latest is not None:
            return int(latest["step"])
    if os.path.isfile(run.model_path):
        return CONTINUED
    return UNUSABLE if store.steps() else NEW


def _has_model(run):
    """Whether the run folder holds a model a checkpoint loads into."""
    return os.path.isfile(run.file("model_config.json")) or os.path.isfile(run.model_path)


def _quietly_latest(store):
    """`store`'s newest valid checkpoint's metadata (or None), reporting nothing."""
    return CheckpointStore(store.folder, report=lambda line: None).latest()


def _trained_at(run, precision, training):
    """The run's `model.keras` at `precision`, compiled from the recipe with its optimizer's
    state (a copy at another precision is compiled so already: not compiled twice)."""
    model = load_trained(run.path)
    rebuilt = rebuilt_at_precision(model, precision, training)
    return rebuilt if rebuilt is not model else compiled_from_recipe(model, training)


def _check_checkpoint_precision(store, precision):
    """A checkpoint holds the optimizer of its precision (a loss scale for mixed_float16)."""
    latest = _quietly_latest(store)
    recorded = (latest or {}).get("batching", {}).get("precision", "float32")
    if latest is not None and recorded != precision:
        raise KseqError(f"This run's checkpoint was trained in {recorded}; resume it with "
                        f"--precision {recorded} (the finished model.keras is float32 and "
                        f"continues at any precision). Received: --precision {precision}")


def _batching(training, seed, steps_per_epoch):
    """What decides the batches: a checkpoint made with other values cannot resume exactly."""
    return {"seed": seed, "boundaries": sorted(training.get("boundaries", [16, 32, 48, 64])),
            "batch_size": training.get("batch_size"),
            "token_budget": training.get("token_budget"), "steps_per_epoch": steps_per_epoch,
            "shuffle_window": training.get("shuffle_window", WINDOW),
            "precision": training.get("precision", "float32")}


def _check_same_batching(checkpoint, batching):
    recorded = checkpoint.get("batching") or {}
    changed = sorted(k for k in batching if k in recorded and recorded[k] != batching[k])
    if changed:
        raise KseqError(
            "This run's checkpoint was made with other batching, so the data position cannot "
            "be resumed; restore the recipe or train into a new --output. Received: "
            + ", ".join(f"{k}={batching[k]!r} (checkpoint: {recorded[k]!r})" for k in changed))


def _check_finite(model, store, guard, training):
    """Refuses the model of a run whose loss or weights became non-finite."""
    if guard.bad_step is not None:
        kept = store.latest()
        raise KseqError(
            f"The loss became {guard.bad_loss} at step {guard.bad_step}; training stopped and "
            f"no model was saved. " + (f"The last finite checkpoint (step {kept['step']}) is in "
                                       f"{store.folder}. " if kept else "")
            + "Lower the learning rate or check the data. Received: "
            f"training.peak_learning_rate={training.get('peak_learning_rate')}")
    if not weights_are_finite(model):
        raise KseqError(f"Training ended with non-finite weights; no model was saved and "
                        f"{store.folder} keeps the last finite checkpoint. Lower the learning "
                        f"rate or check the data. Received: step "
                        f"{int(model.optimizer.iterations.numpy())}")


def _forget_discarded_run(run, records, store, start_step, steps_per_epoch):
    """After a non-finite loss: without a checkpoint of its own, the run is discarded and
    the folder's records are put back as they were before it (a refused `recipe.json`
    claimed the rejected values, and `history.csv` gained a NaN row); with one, a resume
    goes on from it under this run's recipe, and only the history after it is dropped."""
    kept = _quietly_latest(store)
    if kept is None or kept["step"] <= start_step:
        run.restore(records)
    else:
        run.keep_history_before(kept["step"] // steps_per_epoch)


def _check_lengths(data):
    """Reports how many training examples are longer than the longest bucket
    (`filter_by_length` leaves them out; counted once, then kept in the token store), and
    refuses a run that would leave out most of its data."""
    if data.model.preprocessor.example_length is not example_length:  # one bucket (images)
        return
    longest = max(data.boundaries)
    kept, dropped = data.store.memo(json.dumps({"fitting": longest}), lambda: list(
        count_fitting_chunks(data.store.chunks(), longest)))
    if dropped > kept:
        raise KseqError(f"{dropped:,} of {kept + dropped:,} training examples are longer than "
                        f"the longest bucket ({longest} tokens) and would be left out; raise "
                        f"training.boundaries or shorten the data. Received: "
                        f"training.boundaries={data.boundaries}")
    if dropped:
        print(f"data: {dropped:,} of {kept + dropped:,} training examples are longer than the "
              f"longest bucket ({longest} tokens, training.boundaries) and are left out",
              flush=True)


def _target_epochs(start, epochs, recipe_epochs, position):
    if start.checkpoint is not None:
        return start.checkpoint["target_epochs"]
    epoch, batch = position
    if start.continued:  # finish an interrupted epoch, then `epochs` more
        return epoch + (1 if batch else 0) + (epochs or recipe_epochs)
    return epochs or recipe_epochs


def _finish_fine_tuning(model, recipe, best, source):
    """The best epoch's weights (`keep_best`), averaged with the source's (`keep_original`,
    when this run started from it), every layer trainable again."""
    line = best.restore(model) if best else None
    if line:
        print(f"fine-tuning: {line}", flush=True)
    keep = recipe["fine_tuning"].get("keep_original", 0.0)
    if keep and source is not None and source.weights is not None:
        fine_tuning.blend_with_source(model, source, keep)
        print(f"fine-tuning: weights averaged with the source's ({keep:g} source)", flush=True)
    for layer in model.layers:
        layer.trainable = True


def _save_final(model, run, store, training, without_optimizer=False):
    """Writes `model.keras` (float32; `without_optimizer`: its weights only, as a fine-tuned
    model) and then clears the checkpoints; returns what was saved."""
    model = rebuilt_at_precision(model, "float32", training)
    if without_optimizer:
        model = _uncompiled_copy(model)
    try:
        with atomic_path(run.model_path) as scratch:
            reserve_space(scratch, estimated_file_bytes(model))
            model.save(scratch)
    except Exception as error:
        raise KseqError(f"Could not save {run.model_path} ({one_line(error, 200)}); the last "
                        f"checkpoint in {store.folder} is kept and the same command finishes "
                        f"the save. Received: {run.path}") from None
    store.clear()  # only now: a kill during the save above resumes from the checkpoint
    return model


def _uncompiled_copy(model):
    """`model` without its optimizer (what `save` would write of it: weights only)."""
    config = keras.saving.serialize_keras_object(model)
    config.pop("compile_config", None)  # else the copy is compiled, and saves an optimizer
    copy = keras.saving.deserialize_keras_object(config)
    copy.set_weights(model.get_weights())
    if hasattr(model, "recipe"):
        copy.recipe = model.recipe
    return copy


def train(recipe_name, output_dir, data_path=None, epochs=None, minutes=None,
          save_every_steps=50, overrides=None, verbose=1, extra_callbacks=(), strategy=None,
          precision=None, jit_compile=None, columns=None, valid_path=None, init_from=None):
    """Trains (or resumes) into `output_dir`; returns `(model, splits, validation_history)`.

    Any registered task trains this way (`kseq.zoo.register_task`; the recipe's
    `"task"` key, default "translator"): the task class supplies the
    preprocessor, the compile defaults and the validation callback (BLEU for
    generative tasks; its per-epoch entries are the history returned).

    Args:
        recipe_name: a preset name or a recipe JSON file; with `init_from`, None (the
            source's recipe) or a recipe of the source's task and shape.
        output_dir: the run folder; resumes or continues when it holds a run.
        data_path: data files instead of the recipe's data: a file, a glob pattern, a
            folder or a list of those; `input<TAB>target` lines, or `.csv` files with a
            header row (`kseq.data.read_table_rows`), plain or gzip-compressed.
        epochs: epochs to train to (a new or resumed run) or to add (a finished run).
        minutes: stop after this much training time (the model is saved).
        save_every_steps: checkpoint interval in optimizer steps.
        overrides: recipe overrides, merged right-most wins.
        verbose: 0 prints only the lines before training; else also one line per epoch
            (`kseq.training.progress`; on a terminal, a bar while the epoch runs).
        extra_callbacks: Keras callbacks run after kseq's own.
        strategy: "auto", "one-device", "mirrored" or "multi-worker" (reads
            `TF_CONFIG`); default: the recipe's `training.strategy`, else "auto".
            The recipe's batch size or token budget is the global batch.
        precision: "float32", "mixed_bfloat16" or "mixed_float16"; default: the
            recipe's `training.precision`, else "float32". The saved model is
            float32 either way.
        jit_compile: compile the train step with XLA; default: the recipe's
            `training.jit_compile`, else False.
        columns: `(input, target)`, the names of `data_path`'s header columns (a `.csv`
            file's default: its first two; a TSV file then has a header row too). Recorded
            in `data_source.json`: a resume without them reads the recorded ones, and other
            columns are refused.
        valid_path: validation files (a file, glob, folder or list) for `data_path`:
            its examples are then all training or test (2%), none held out for validation.
        init_from: fine-tune: a preset that ships weights, a run folder or a `.keras`
            file to start from (`kseq.training.fine_tuning`; the recipe's `fine_tuning`
            section and `overrides["fine_tuning"]` set `freeze` and `keep_original`).

    Raises:
        KseqError: for a bad argument or recipe value, a write that failed, or
            a non-finite loss.
        kseq.training.interruption.TrainingInterrupted: on SIGINT or SIGTERM during
            training (not under `multi-worker`), after a checkpoint at that step; the
            same call resumes there.
    """
    epochs = check_int("epochs", epochs, allow_none=True)
    minutes = check_float("minutes", minutes, minimum=0.0, exclusive_minimum=True,
                          allow_none=True)
    save_every_steps = check_int("save_every_steps", save_every_steps)
    columns = None if columns is None else check_columns(columns)
    source = fine_tuning.load_source(init_from, load_trained) if init_from is not None else None
    recipe = zoo.load_recipe(recipe_name) if recipe_name is not None or source is None \
        else source.recipe
    if source is not None and recipe_name is not None:
        fine_tuning.check_recipe_fits(source, recipe, recipe_name)
    task = zoo.TASKS.get(recipe.get("task", "translator"))  # how its keys replace each other
    options = {"training": {key: value for key, value in (
        ("strategy", strategy), ("precision", precision), ("jit_compile", jit_compile))
        if value is not None}}  # the arguments win over the recipe's training section
    merge = task.merged_recipe if task else zoo.merge
    if overrides is not None:  # a task's merge reads their sections
        check_sections(overrides, "overrides")
    recipe = fine_tuning.fine_tuning_recipe(source, recipe, overrides, options) \
        if source is not None else merge(recipe, overrides, options)
    check_recipe(recipe)
    training = recipe.get("training", {})
    tf_config = check_multi_worker_environment(training.get("strategy", "auto"))
    if tf_config is not None and minutes:  # each worker's clock would stop at another step
        raise KseqError(f"A time budget cannot end a multi-worker run yet (the workers must "
                        f"stop at the same step); use --epochs. Received: minutes={minutes}")
    # Before any other op runs: a multi-worker strategy configures the runtime's collectives.
    distribution = make_strategy(training.get("strategy", "auto"))
    check_output_folder(output_dir)
    # A multi-worker run's other workers train in a private copy of the folder (removed after).
    with task_output_folder(output_dir, tf_config) as folder:
        return _train(recipe, training, distribution, folder, data_path, epochs, minutes,
                      save_every_steps, verbose, extra_callbacks, chief=folder == output_dir,
                      columns=columns, valid_path=valid_path, origin=source)


def _train(recipe, training, distribution, output_dir, data_path, epochs, minutes,
           save_every_steps, verbose, extra_callbacks, chief, columns=None, valid_path=None,
           origin=None):
    run = RunFolder(output_dir)
    if origin is not None:  # the first line: what it starts from, which settings apply
        print(fine_tuning.settings_line(origin, recipe, epochs), flush=True)
    source = run.resolve_data_source(data_path, recipe, columns, valid_path)
    run.check_recipe_change(recipe)  # a trained model's parts cannot change; training can
    try:
        corpus = prepared_corpus(recipe, source)
    except TypeError as error:  # an unknown or misspelt data builder option
        raise KseqError(f"The recipe's data section does not fit its builder ({error}). "
                        f"Received: data={recipe.get('data')!r}") from None
    if source["kind"] == "file" and held_out_warning(corpus):
        logging.getLogger("kseq").warning("%s", held_out_warning(corpus))
    if not corpus.size("train"):
        raise KseqError(f"No usable training rows (an input and a target each) in the data: "
                        f"all {corpus.size('valid') + corpus.size('test')} fell in the held-out "
                        f"splits. Received: {corpus.description}")
    seed = training.get("seed", 0)
    keras.utils.set_random_seed(seed)  # the same recipe builds the same initial weights
    # tf.data's shuffles take each epoch's seed as a tensor (`TrainingData.stream` builds
    # epochs lazily); TensorFlow then compares (global seed, op seed) with (0, 0) in Python,
    # which fails for a global seed of 0. Keras seeds weights and dropout itself, so only
    # tf.data's shuffles read this (the same value in every process: still deterministic).
    tf.random.set_seed(seed + 1)
    store = CheckpointStore(run.backup_folder)
    if training.get("strategy") == "multi-worker":
        with lost_worker_as_error("multi-worker"):
            check_same_start(distribution, _start_point(run, store))
    with distribution.scope(), precision_scope(training.get("precision", "float32")):
        start = _start(run, recipe, corpus, store, origin)
        model = start.model
        model.jit_compile = bool(training.get("jit_compile", False))  # a continued model too
        ensure_optimizer_built(model)
        if training.get("strategy") == "multi-worker":
            patch_for_multi_worker(model)  # keras-team/keras#20585
    data = TrainingData(corpus, model, recipe)
    boundaries = data.boundaries
    steps_per_epoch = data.steps_per_epoch()
    if steps_per_epoch == 0:
        raise KseqError(f"No training pair fits the longest bucket ({max(boundaries)} tokens). "
                        f"Received: {corpus.size('train')} training pairs")
    _check_lengths(data)
    # the source's scores before training, for the closing report (a new run from it; the
    # validation examples only where the recipe validates: bleu_subset / validation_subset)
    validates = training.get("bleu_subset", 1) and training.get("validation_subset", 1)
    before = fine_tuning.scores_before(origin, data.held_out("valid") if validates else []) \
        if origin is not None and chief and start.checkpoint is None and not start.continued \
        else None
    step = int(model.optimizer.iterations.numpy())
    if start.continued and not step and "fine_tuning" in recipe:  # saved without optimizer
        step = len(run.logged_rows()) * steps_per_epoch  # its epochs go on from the history
        model.optimizer.iterations.assign(step)
    position = divmod(step, steps_per_epoch)
    target = _target_epochs(start, epochs, training.get("epochs", 10), position)
    batching = _batching(training, seed, steps_per_epoch)
    if start.checkpoint is not None:
        _check_same_batching(start.checkpoint, batching)

    # Everything is validated and built: only now does the folder get written.
    records = run.snapshot()  # put back if this run is discarded (`_forget_discarded_run`)
    os.makedirs(output_dir, exist_ok=True)
    run.remove_partial_files()
    run.keep_history_before(position[0])
    atomic_write_json(run.file("recipe.json"), recipe)
    run.record_data_source(source)
    if start.checkpoint is None:  # the model checkpoints will belong to, from now on
        atomic_write_json(run.file("model_config.json"), config_at_precision(
            keras.saving.serialize_keras_object(model), "float32"))
    _report_start(run, start, step, position, target, corpus)
    for note in start.notes:
        print(f"fine-tuning: {note}", flush=True)
    _report_setup(model, steps_per_epoch, training, distribution.num_replicas_in_sync)

    guard = NonFiniteLossGuard()
    budget = TimeBudget(minutes) if minutes else None
    validation = model.validation_callback(data.held_out("valid"), training,
                                           verbose=False) \
        if chief else None  # scored once, by the chief; `Progress` prints its scores
    checkpointing = Checkpointing(store, save_every_steps, steps_per_epoch, target, guard,
                                  batching, start.checkpoint and start.checkpoint["step"])
    progress = Progress(steps_per_epoch, target) if verbose else None
    # Multi-worker: one worker stopping alone would leave the others in a collective.
    interruption = Interruption(checkpointing, guard, steps_per_epoch, target) \
        if training.get("strategy") != "multi-worker" else None
    callbacks = [guard, checkpointing] + ([validation] if validation else [])
    best = fine_tuning.BestEpoch() if validation and (recipe.get("fine_tuning") or {}).get(
        "keep_best") else None
    callbacks += [best] if best else []
    callbacks += [progress] if progress else []
    callbacks += [TrainingCurves(run.file("curves.png"), run.logged_rows()),
                  keras.callbacks.CSVLogger(run.file("history.csv"), append=True)]
    callbacks += [interruption] if interruption else []  # after what a whole epoch ends
    callbacks += [budget] if budget else []
    callbacks += list(extra_callbacks)

    def stream(first, stop, skip):
        batches = shard_by_data(data.stream(seed, (first, stop), skip))
        return served(batches, training["data_service"]) if training.get("data_service") \
            else batches

    if not (start.checkpoint or {}).get("finished"):  # else only the final save is left
        with lost_worker_as_error(training.get("strategy")), \
                contextlib.closing(progress) if progress else contextlib.nullcontext(), \
                interruption.handling() if interruption else contextlib.nullcontext():
            _fit_from(model, stream, position, target, steps_per_epoch, callbacks,
                      stopped=lambda: guard.bad_step is not None or (budget and budget.expired)
                      or (interruption and interruption.signum))
            if interruption:  # a signal between two `fit` calls
                interruption.stop_if_pending()
    try:
        _check_finite(model, store, guard, training)
    except KseqError:
        _forget_discarded_run(run, records, store, step, steps_per_epoch)
        raise
    result = None
    if "fine_tuning" in recipe:
        _finish_fine_tuning(model, recipe, best, origin)
        if before is not None:  # scored by the trained model itself (its search is traced)
            result = fine_tuning.forgetting_line(origin, model, data.held_out("valid"),
                                                 before)
    with distribution.scope():
        model = _save_final(model, run, store, training, "fine_tuning" in recipe)
    if result:
        print(result, flush=True)
    splits = corpus.builder_splits if corpus.builder_splits is not None else \
        {split: data.held_out(split) for split in ("valid", "test")}
    return model, splits, validation.history if validation else []


def _report_start(run, start, step, position, target, corpus):
    epoch, batch = position
    print(f"data: {corpus.size('train'):,} training, {corpus.size('valid'):,} validation, "
          f"{corpus.size('test'):,} test examples (prepared in {corpus.folder})", flush=True)
    where = f"step {step} (epoch {epoch + 1}, batch {batch}; training to epoch {target})"
    if start.checkpoint is not None and start.checkpoint.get("finished"):
        print(f"resuming at step {step}: training had finished; saving the model", flush=True)
    elif start.checkpoint is not None:
        print(f"resuming at {where}", flush=True)
    elif start.continued:
        print(f"continuing from {run.model_path} at {where}", flush=True)
    else:
        print(f"starting at {where}", flush=True)


def _report_setup(model, steps_per_epoch, training, replicas):
    print(f"model: {model.count_params():,} parameters, {steps_per_epoch:,} steps an epoch, "
          f"{training.get('precision', 'float32')}, strategy {training.get('strategy', 'auto')} "
          f"({replicas} replica{'s' if replicas > 1 else ''})", flush=True)


def _fit_from(model, stream, position, target, steps_per_epoch, callbacks, stopped):
    """Trains from `(epoch, batch)` to the end of epoch `target - 1`.

    An interrupted epoch is finished by its own `fit` call (its remaining
    batches), so Keras's epoch boundaries stay those of the data. Keras's own bar
    is off: `kseq.training.progress.Progress` reports.
    """
    epoch, batch = position
    if epoch >= target:
        return
    if batch:
        model.fit(stream(epoch, epoch + 1, batch), initial_epoch=epoch, epochs=epoch + 1,
                  steps_per_epoch=steps_per_epoch - batch, callbacks=callbacks, verbose=0,
                  shuffle=False)
        epoch += 1
        if stopped() or epoch >= target:
            return
    model.fit(stream(epoch, target, 0), initial_epoch=epoch, epochs=target,
              steps_per_epoch=steps_per_epoch, callbacks=callbacks, verbose=0, shuffle=False)
