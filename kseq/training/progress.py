"""Training progress that a person and a log file can both read.

Keras's own bar writes ANSI colours and `\\r`/backspace redraws into redirected
logs, repeats the validation callback's scores under internal names
(`val_exact_match: 0.0000e+00`, `bleu_seconds`), glues the callback's line to
the bar, and jumps to its end when a callback stops training early. `Progress`
replaces it (`fit(verbose=0)`): one line per epoch with human metric names,
the validation scores the epoch's callbacks logged, and an estimate of the
time the whole run has left. Only on a terminal does a plain-ASCII bar redraw
itself (`\\r`, never an escape sequence) while an epoch runs; elsewhere the
output is one line per epoch and nothing else.

Example:
>>> import io
>>> from kseq.training.progress import Progress, metrics_text
>>> metrics_text({"loss": 0.51234, "masked_accuracy": 0.9, "val_bleu": 83.375,
...               "val_exact_match": 0.0, "bleu_seconds": 1.25})
'loss 0.5123, accuracy 0.9000; validation BLEU 83.38, exact match 0.0000 (1.2 s)'
"""

import sys
import time

import keras

# The logs' keys (without "val_") as a person names them; others lose their underscores.
NAMES = {"masked_accuracy": "accuracy", "token_accuracy": "token accuracy", "bleu": "BLEU",
         "chrf": "chrF", "exact_match": "exact match"}
TWO_DECIMALS = ("bleu", "chrf")  # scores on a 0-100 scale
BAR_WIDTH = 20


def _name(key):
    return NAMES.get(key, key.replace("_", " "))


def _value(key, value):
    return f"{float(value):.2f}" if key in TWO_DECIMALS else f"{float(value):.4f}"


def metrics_text(logs):
    """`logs` (an epoch's Keras logs, or a validation history entry) as one phrase: the
    training metrics, then `validation ...` with the seconds the validation took."""
    logs = {key: value for key, value in logs.items() if key != "epoch"}
    training = [f"{_name(k)} {_value(k, v)}" for k, v in logs.items()
                if not k.startswith("val_") and not k.endswith("_seconds")]
    validation = [f"{_name(k[4:])} {_value(k[4:], v)}" for k, v in logs.items()
                  if k.startswith("val_")]
    seconds = sum(float(v) for k, v in logs.items() if k.endswith("_seconds"))
    parts = [", ".join(training)] if training else []
    if validation:
        parts.append("validation " + ", ".join(validation)
                     + (f" ({seconds:.1f} s)" if seconds else ""))
    return "; ".join(parts)


def duration_text(seconds):
    """`seconds` as `m:ss` or `h:mm:ss`."""
    minutes, seconds = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


class Progress(keras.callbacks.Callback):
    """Prints one line per epoch (and, on a terminal, a bar while it runs) to stdout.

    Args:
        steps_per_epoch: batches an epoch.
        target_epochs: the epoch the run trains to (over all its `fit` calls).
        live: redraw a bar during each epoch; default: when stdout is a terminal.
        redraw_seconds: the bar is redrawn at most this often.

    Spans every `fit` call of one run: the step and epoch come from the
    optimizer's step counter, not from a `fit` call's own count.
    """

    def __init__(self, steps_per_epoch, target_epochs, live=None, redraw_seconds=0.25):
        super().__init__()
        self.steps_per_epoch = steps_per_epoch
        self.target_epochs = target_epochs
        self.live = live
        self.redraw_seconds = redraw_seconds
        self.started = self.first_step = None
        self.drawn_at, self.drawn_width = 0.0, 0

    def _step(self):
        return int(self.model.optimizer.iterations.numpy())

    def on_train_begin(self, logs=None):
        if self.started is None:  # the first `fit` call of the run
            self.started, self.first_step = time.perf_counter(), self._step()
        if self.live is None:
            self.live = bool(getattr(sys.stdout, "isatty", lambda: False)())

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch_started = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.live and now - self.drawn_at >= self.redraw_seconds:
            self.drawn_at = now
            self._draw(self._bar(logs or {}))

    def on_epoch_end(self, epoch, logs=None):
        step = self._step()
        done = step - epoch * self.steps_per_epoch  # short of the end when training stopped
        where = f"epoch {epoch + 1}/{self.target_epochs}"
        if done < self.steps_per_epoch:
            where += f" (stopped at batch {done} of {self.steps_per_epoch})"
        took = time.perf_counter() - self.epoch_started
        line = f"{where}: {metrics_text(logs or {})}; {duration_text(took)}"
        left = self._seconds_left(step)
        if left is not None and not self.model.stop_training:
            line += f", about {duration_text(left)} left"
        self._draw(line)
        self.close()

    def close(self):
        """Ends a bar's line (before an interruption's or an error's line is printed)."""
        if self.drawn_width:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.drawn_width = 0

    def _bar(self, logs):
        step = self._step()
        epoch, batch = divmod(step - 1, self.steps_per_epoch)  # the batch just trained
        filled = (batch + 1) * BAR_WIDTH // self.steps_per_epoch
        text = (f"epoch {epoch + 1}/{self.target_epochs} [{'#' * filled:{BAR_WIDTH}}] "
                f"{batch + 1}/{self.steps_per_epoch}")
        if "loss" in logs:
            text += f" loss {float(logs['loss']):.4f}"
        left = self._seconds_left(step)
        return text + (f", about {duration_text(left)} left" if left is not None else "")

    def _seconds_left(self, step):
        """The whole run's remaining time at this process's pace so far (validation and
        tracing included), or None before a step or after the last."""
        remaining = self.target_epochs * self.steps_per_epoch - step
        done = step - self.first_step
        if done <= 0 or remaining <= 0:
            return None
        return (time.perf_counter() - self.started) / done * remaining

    def _draw(self, text):
        """On a terminal, over the bar (padded to blank its rest); else as a line."""
        if self.live:
            sys.stdout.write("\r" + text.ljust(self.drawn_width))
            self.drawn_width = max(len(text), 1)
        else:
            sys.stdout.write(text + "\n")
        sys.stdout.flush()
