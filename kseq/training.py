"""Training a translator from a recipe, resumable, with progress and BLEU per epoch.

An output folder holds `recipe.json`, `model_config.json` (vocabularies
included, so a restart builds the same model), `backup/` (weights, optimizer
state and position, written every `save_every_steps` steps by Keras's
`BackupAndRestore`), `history.csv`, `curves.png` (loss and validation BLEU,
redrawn every epoch), and at the end `model.keras`. Training into a folder that
already holds `model.keras` continues from it (weights, optimizer state and
step counter, so the learning-rate schedule goes on) for the new epochs or
minutes, rather than starting over and overwriting it.
"""

import csv
import hashlib
import json
import os
import time

import keras

from kseq import zoo
from kseq.data.parallel_text import read_tsv
from kseq.metrics.bleu_callback import BleuCallback
from kseq.models.translator_preprocessor import TranslatorPreprocessor
from kseq.training_curves import TrainingCurves


def split_pairs(pairs, valid_percent=2, test_percent=2):
    """Deterministic split by a hash of the source: the same sentence always lands in one split."""
    splits = {"train": [], "valid": [], "test": []}
    for source, target in pairs:
        bucket = int(hashlib.sha1(source.encode("utf-8")).hexdigest(), 16) % 100
        name = "test" if bucket < test_percent else (
            "valid" if bucket < test_percent + valid_percent else "train")
        splits[name].append((source, target))
    return splits


def load_data(recipe, data_path=None):
    """Pairs from a TSV file (split by hash) or from the recipe's builder."""
    if data_path:
        if not os.path.isfile(data_path):
            raise FileNotFoundError(f"No such data file. Received: --data {data_path}")
        pairs, _ = read_tsv(data_path)
        if not pairs:
            raise ValueError(f"No usable `source<TAB>target` lines. Received: {data_path}")
        return split_pairs(pairs)
    if "data" not in recipe:
        raise ValueError("This recipe names no data builder: pass --data FILE.tsv. "
                         "Received: no data")
    return zoo.build_data(recipe)


class ResumeReport(keras.callbacks.Callback):
    """Says where training starts: step 0, or the step restored from `backup/`."""

    def on_train_begin(self, logs=None):
        step = int(self.model.optimizer.iterations.numpy())
        print(f"resuming at step {step}" if step else "starting at step 0", flush=True)


class TimeBudget(keras.callbacks.Callback):
    """Stops training cleanly once `minutes` of wall-clock time have passed."""

    def __init__(self, minutes):
        super().__init__()
        self.seconds = minutes * 60
        self.started = None

    def on_train_begin(self, logs=None):
        self.started = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        if time.perf_counter() - self.started > self.seconds:
            self.model.stop_training = True


def _model_for(output_dir, recipe, splits):
    finished = os.path.join(output_dir, "model.keras")
    if os.path.isfile(finished):  # a finished run trains further instead of starting over
        model = keras.saving.load_model(finished)  # weights, optimizer state, step counter
        print(f"continuing from {finished} (step {int(model.optimizer.iterations.numpy())})",
              flush=True)
        return model
    config_path = os.path.join(output_dir, "model_config.json")
    if os.path.isfile(config_path):  # a restart: same vocabularies, same shapes
        with open(config_path, encoding="utf-8") as handle:
            config = json.load(handle)
        model = zoo.model_class_for_config(config).from_config(config)
        return zoo.compile_translator(model, recipe.get("training", {}))
    model = zoo.translator(recipe["model"].get("arch", "transformer"),
                           train_pairs=splits["train"], recipe=recipe,
                           **{k: v for k, v in recipe["model"].items() if k != "arch"})
    with open(config_path, "w", encoding="utf-8") as handle:
        json.dump(model.get_config(), handle)
    return model


def _logged_rows(output_dir):
    """Epoch rows already in `history.csv` (a resumed run keeps drawing the same curves)."""
    path = os.path.join(output_dir, "history.csv")
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8", newline="") as handle:
        return [{k: float(v) for k, v in row.items() if k != "epoch" and v not in ("", None)}
                for row in csv.DictReader(handle)]


def train(recipe_name, output_dir, data_path=None, epochs=None, minutes=None,
          save_every_steps=50, overrides=None, verbose=1, extra_callbacks=()):
    """Trains (or resumes) into `output_dir`; returns `(model, splits, bleu_history)`.

    `extra_callbacks` are Keras callbacks run after kseq's own.
    """
    recipe = zoo.merge(zoo.load_recipe(recipe_name), overrides)
    os.makedirs(output_dir, exist_ok=True)
    with open(os.path.join(output_dir, "recipe.json"), "w", encoding="utf-8") as handle:
        json.dump(recipe, handle, indent=2)
    splits = load_data(recipe, data_path)
    model = _model_for(output_dir, recipe, splits)
    training = recipe.get("training", {})
    preprocessor = TranslatorPreprocessor(model.source_tokenizer, model.target_tokenizer,
                                          model.max_source_length, model.max_target_length)
    dataset = preprocessor.training_dataset(
        splits["train"], training.get("boundaries", [16, 32, 48, 64]),
        batch_size=training.get("batch_size"), token_budget=training.get("token_budget"))
    bleu = BleuCallback(splits["valid"], subset=training.get("bleu_subset", 200),
                        verbose=bool(verbose))
    callbacks = [
        # Two checkpoints: a kill in the middle of a write falls back to the previous one.
        keras.callbacks.BackupAndRestore(os.path.join(output_dir, "backup"),
                                         save_freq=save_every_steps, double_checkpoint=True),
        ResumeReport(),
        bleu,
        TrainingCurves(os.path.join(output_dir, "curves.png"), _logged_rows(output_dir)),
        keras.callbacks.CSVLogger(os.path.join(output_dir, "history.csv"), append=True),
    ]
    if minutes:
        callbacks.append(TimeBudget(minutes))
    callbacks += list(extra_callbacks)
    model.fit(dataset, epochs=epochs or training.get("epochs", 10), callbacks=callbacks,
              verbose=verbose)
    model.save(os.path.join(output_dir, "model.keras"))
    return model, splits, bleu.history


def load_trained(model_dir):
    """Loads `model_dir/model.keras` (or a `.keras` path) with a clear error when missing."""
    path = model_dir if str(model_dir).endswith(".keras") else os.path.join(model_dir, "model.keras")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No trained model here: expected {path}. Received: {model_dir}")
    return keras.saving.load_model(path)
