"""A Keras callback that logs one score of the model's `evaluate(pairs)` each epoch."""

import time

import keras


class ValidationScoreCallback(keras.callbacks.Callback):
    """Scores a capped validation subset after each epoch and logs `val_<score>`.

    What `BleuCallback` is to a translator, for the tasks scored without a
    search: a classifier's `accuracy`, a tagger's `token_accuracy`.

    Args:
        pairs: `(input, reference)` pairs, as `model.evaluate(pairs)` takes them.
        score: the key of `model.evaluate(pairs)`'s result to log.
        subset: at most this many pairs are scored (cost grows with it).
        verbose: print one line per epoch.

    The score is added to the epoch logs as `val_<score>` (so the progress
    line, `History`, CSV loggers and `TrainingCurves` see it) with
    `validation_seconds`, the cost of the report.

    Example:
    >>> import kseq
    >>> pairs = [("a great film", "positive"), ("an awful plot", "negative")]
    >>> model = kseq.zoo.classifier("ngrams", train_data=pairs, embedding_dim=8)
    >>> callback = ValidationScoreCallback(pairs, "accuracy", verbose=False)
    >>> callback.set_model(model)
    >>> logs = {}
    >>> callback.on_epoch_end(0, logs)
    >>> sorted(logs)
    ['val_accuracy', 'validation_seconds']
    """

    def __init__(self, pairs, score, subset=500, verbose=True):
        super().__init__()
        self.pairs = list(pairs)[:subset]
        self.score = score
        self.verbose = verbose
        self.history = []

    def on_train_begin(self, logs=None):
        if not self.pairs and self.verbose:
            print(f"no validation examples: val_{self.score} is not reported", flush=True)

    def on_epoch_end(self, epoch, logs=None):
        if not self.pairs:
            return
        started = time.perf_counter()
        value = float(self.model.evaluate(self.pairs)[self.score])
        seconds = time.perf_counter() - started
        entry = {"epoch": epoch + 1, f"val_{self.score}": value,
                 "validation_seconds": round(seconds, 2)}
        self.history.append(entry)
        if logs is not None:
            logs.update({k: v for k, v in entry.items() if k != "epoch"})
        if self.verbose:
            print(f"epoch {epoch + 1}: val {self.score.replace('_', ' ')} {value:.3f} "
                  f"({len(self.pairs)} examples, {seconds:.1f} s)", flush=True)
