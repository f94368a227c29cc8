"""Loss and validation-score curves of a training run, redrawn as a PNG after each epoch."""

import sys
import time

import keras

from kseq.atomic_files import atomic_path

# The validation scores a curve is drawn for, by their epoch-log names and axis labels.
VALIDATION_SCORES = {"val_bleu": "validation BLEU", "val_accuracy": "validation accuracy",
                     "val_token_accuracy": "validation token accuracy",
                     "val_perplexity": "validation perplexity"}


def plot_curves(rows, path):
    """Draws `loss` (and a validation score of `VALIDATION_SCORES` when every row has it)
    per epoch from `rows` (dicts); writes `path`.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "curves.png")
    >>> plot_curves([{"loss": 3.0, "val_bleu": 1.0}, {"loss": 2.0, "val_bleu": 9.5}], path)
    >>> os.path.getsize(path) > 0
    True
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    epochs = list(range(1, len(rows) + 1))
    figure, loss_axes = plt.subplots(figsize=(6, 3.5))
    loss_axes.plot(epochs, [row["loss"] for row in rows], "o-", color="tab:blue")
    loss_axes.set_xlabel("epoch")
    loss_axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    loss_axes.set_ylabel("training loss", color="tab:blue")
    score = next((key for key in VALIDATION_SCORES if rows and all(key in row for row in rows)),
                 None)
    if score:
        score_axes = loss_axes.twinx()
        score_axes.plot(epochs, [row[score] for row in rows], "s-", color="tab:orange")
        score_axes.set_ylabel(VALIDATION_SCORES[score], color="tab:orange")
    figure.tight_layout()
    try:
        with atomic_path(path) as scratch:  # a kill mid-write never leaves a torn PNG
            figure.savefig(scratch, dpi=100, format="png")
    finally:
        plt.close(figure)


class TrainingCurves(keras.callbacks.Callback):
    """Keeps each epoch's logs and redraws `path` (loss and validation score) after an epoch.

    Drawing costs a fraction of a second, more than a short epoch: the picture is
    redrawn after an epoch only when `redraw_seconds` have passed since the last
    drawing (or since training started), and always when training ends. An epoch of
    a real run takes longer than that, so it redraws after every epoch.
    Place it after the validation callback (`BleuCallback`, `ValidationScoreCallback`) so
    the epoch logs already hold its score.
    Without matplotlib (the `plot` extra) it says so once and draws nothing.
    """

    def __init__(self, path, previous_rows=(), redraw_seconds=5.0):
        super().__init__()
        self.path = path
        self.rows = list(previous_rows)
        self.redraw_seconds = redraw_seconds
        self.warned = False
        self.drawn_rows = len(self.rows)
        self.last_drawn = time.monotonic()

    def on_train_begin(self, logs=None):
        self.last_drawn = time.monotonic()

    def on_epoch_end(self, epoch, logs=None):
        self.rows.append({k: float(v) for k, v in (logs or {}).items()
                          if isinstance(v, (int, float))})
        if time.monotonic() - self.last_drawn >= self.redraw_seconds:
            self._draw()

    def on_train_end(self, logs=None):
        if len(self.rows) > self.drawn_rows:
            self._draw()

    def _draw(self):
        try:
            plot_curves(self.rows, self.path)
        except ImportError:
            self._warn_once("matplotlib missing (pip install 'kseq[plot]')")
        except OSError as error:  # a full disk costs the picture, not the run
            self._warn_once(f"cannot write {self.path} ({error})")
        self.drawn_rows, self.last_drawn = len(self.rows), time.monotonic()

    def _warn_once(self, reason):
        if not self.warned:
            print(f"training curves skipped: {reason}", file=sys.stderr)
            self.warned = True
