"""Quality on LibreOffice en->fr for one architecture, at a fixed wall-clock training budget.

    python benchmarks/quality_libreoffice.py --arch transformer --minutes 40 \
        --snapshot-minutes 20 --output runs/lo_transformer

Trains the `libreoffice_en_fr_<arch>` preset with `kseq.training.train` (so the
run is resumable and draws `curves.png`), then reports test BLEU / chrF
(sacrebleu, raw references, `case:mixed`) greedy and beam 4 (GNMT length
penalty 0.6, as the OpenNMT-tf peer of issue #6), parameters, and real
(non-pad) source + target tokens per second of training. With
`--snapshot-minutes M` the weights at minute M are also saved and scored,
which equals a run with an M-minute budget (the learning-rate schedule does
not depend on the budget). A folder that already holds a finished `model.keras`
is trained further (see `kseq.training.train`); pass `--previous-json` with the
result of the run that trained it, and the budget, steps and tokens/s reported
cover both parts (the earlier result is kept under `previous`, so the table
shows both budgets). `--precision mixed_bfloat16` trains under bf16 compute
(native on CPUs with `amx_bf16` / `avx512_bf16`); the model is saved and scored in
float32. Prints JSON and writes it to `--json`.
"""

import json
import os
import shutil
import sys
import time

import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)
import keras
import tensorflow as tf

from kseq import zoo
from kseq.models.translator.translator_preprocessor import TranslatorPreprocessor
from kseq.training import train


class TrainingClock(keras.callbacks.Callback):
    """Training seconds and steps, and a model snapshot once `snapshot_minutes` have passed."""

    def __init__(self, snapshot_path=None, snapshot_minutes=None):
        super().__init__()
        self.snapshot_path, self.snapshot_minutes = snapshot_path, snapshot_minutes
        self.started, self.seconds, self.snapshot = None, 0.0, None
        self.first_step = 0

    def on_train_begin(self, logs=None):
        # kseq.training.train may call fit twice (a resumed epoch, then the rest): count both.
        if self.started is None:
            self.started = time.perf_counter()
            self.first_step = int(self.model.optimizer.iterations.numpy())

    def on_train_batch_end(self, batch, logs=None):
        elapsed = time.perf_counter() - self.started
        if (self.snapshot is None and self.snapshot_minutes
                and elapsed >= self.snapshot_minutes * 60):
            self.model.save(self.snapshot_path)
            self.snapshot = {"seconds": round(elapsed, 1), "loss": float(logs.get("loss", 0)),
                             "step": int(self.model.optimizer.iterations.numpy())}

    def on_train_end(self, logs=None):
        self.seconds = time.perf_counter() - self.started

    def steps(self):
        return int(self.model.optimizer.iterations.numpy()) - self.first_step


def epoch_shape(model, recipe, train_pairs):
    """Real source + target tokens in one epoch, and the number of batches in it."""
    training = recipe["training"]
    preprocessor = TranslatorPreprocessor(model.source_tokenizer, model.target_tokenizer,
                                          model.max_source_length, model.max_target_length)
    dataset = preprocessor.training_dataset(
        train_pairs, training["boundaries"], batch_size=training.get("batch_size"),
        token_budget=training.get("token_budget"), shuffle=False)
    tokens, batches = 0, 0
    for features, labels in dataset:
        tokens += int(tf.math.count_nonzero(features["source_ids"]))
        tokens += int(tf.math.count_nonzero(labels))
        batches += 1
    return tokens, batches


def score(model, pairs, beam_size):
    started = time.perf_counter()
    result = model.evaluate_bleu(pairs, beam_size=beam_size, length_penalty="gnmt", alpha=0.6,
                                 print_signature=False)
    return {"bleu": round(result["bleu"], 2), "chrf": round(result["chrf"], 2),
            "bleu_signature": result["bleu_signature"], "chrf_signature": result["chrf_signature"],
            "exact_match": round(result["exact_match"], 4), "sentences": len(pairs),
            "seconds": round(time.perf_counter() - started, 1),
            "examples": [[s, h, r] for (s, r), h in zip(pairs[:3], result["hypotheses"][:3])]}


def scores(model, splits, with_peer_test, limit=None):
    test = splits["test"][:limit]
    result = {"test_greedy": score(model, test, 1), "test_beam4": score(model, test, 4)}
    if with_peer_test:
        result["peer_test_beam4"] = score(model, splits["peer_test"][:limit], 4)
    return result


def load_previous(path):
    """Budget, steps and seconds of the run a continued run starts from (zeros for none)."""
    if not path:
        return {"minutes": 0.0, "steps": 0, "seconds": 0.0, "result": None}
    with open(path, encoding="utf-8") as handle:
        result = json.load(handle)
    result.pop("previous", None)
    return {"minutes": result["budget_minutes"], "steps": result["training"]["steps"],
            "seconds": result["training"]["seconds"], "result": result}


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--arch", default="transformer", choices=zoo.ARCHITECTURES)
    parser.add_argument("--minutes", type=float, default=40)
    parser.add_argument("--snapshot-minutes", type=float)
    parser.add_argument("--output", required=True, help="training folder (resumable)")
    parser.add_argument("--peer-test", action="store_true",
                        help="also score beam 4 on the OpenNMT-tf peer's test split")
    parser.add_argument("--limit", type=int, help="score only the first N test pairs (smoke runs)")
    parser.add_argument("--precision", choices=("float32", "mixed_bfloat16"),
                        help="train under this precision instead of the recipe's (float32); "
                             "the saved model is float32 either way")
    parser.add_argument("--previous-json",
                        help="the result of the run that trained --output's model.keras")
    args = harness.parse(parser, argv)
    preset = f"libreoffice_en_fr_{args.arch}"
    recipe = zoo.load_recipe(preset)
    os.makedirs(args.output, exist_ok=True)
    snapshot_path = os.path.join(args.output, f"snapshot_{args.snapshot_minutes}min.keras")
    clock = TrainingClock(snapshot_path, args.snapshot_minutes)
    if args.precision:
        recipe = zoo.merge(recipe, {"training": {"precision": args.precision}})
    model, splits, bleu_history = train(preset, args.output, minutes=args.minutes,
                                        save_every_steps=200, extra_callbacks=[clock],
                                        precision=args.precision)
    tokens_per_epoch, batches_per_epoch = epoch_shape(model, recipe, splits["train"])
    previous = load_previous(args.previous_json)
    steps = clock.steps() + previous["steps"]
    seconds = clock.seconds + previous["seconds"]
    result = {
        "preset": preset, "arch": args.arch, "budget_minutes": args.minutes + previous["minutes"],
        "threads": {"intra_op": tf.config.threading.get_intra_op_parallelism_threads(),
                    "inter_op": tf.config.threading.get_inter_op_parallelism_threads(),
                    "cpus": os.cpu_count()},
        "split_sizes": {name: len(pairs) for name, pairs in splits.items()},
        "parameters": model.count_params(),
        "vocabulary_size": len(model.source_tokenizer.vocabulary),
        "training": {"seconds": round(seconds, 1), "steps": steps,
                     "epochs": round(steps / batches_per_epoch, 2),
                     "real_tokens_per_epoch": tokens_per_epoch,
                     "tokens_per_second": round(tokens_per_epoch * steps / batches_per_epoch
                                                / max(seconds, 1e-9)),
                     "recipe": recipe["training"], "validation_bleu_per_epoch": bleu_history},
        "final": scores(model, splits, args.peer_test, args.limit),
    }
    if previous["result"]:
        result["previous"] = previous["result"]
    if clock.snapshot:
        snapshot = keras.saving.load_model(snapshot_path)
        result["snapshot"] = {**clock.snapshot,
                              **scores(snapshot, splits, args.peer_test, args.limit)}
    shutil.copy(os.path.join(args.output, "history.csv"), os.path.join(args.output, "final.csv"))
    harness.write(f"quality_libreoffice_{args.arch}", result, args)
    return result


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
