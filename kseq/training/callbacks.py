"""Keras callbacks of `kseq.training.train`: time budget, non-finite loss guard, checkpoints
(and, in files of their own, `kseq.training.interruption` and `kseq.training.progress`).

They keep their state across several `fit` calls (a resumed run finishes its
interrupted epoch in one call and trains the rest in another).

Example:
>>> import keras, numpy as np
>>> from kseq.training.callbacks import NonFiniteLossGuard
>>> model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
>>> model.compile("sgd", "mse")
>>> guard = NonFiniteLossGuard()
>>> _ = model.fit(np.ones((4, 1)), np.full((4, 1), np.nan), batch_size=1, verbose=0,
...               callbacks=[guard])
>>> guard.bad_step, int(model.optimizer.iterations.numpy())
(1, 1)
"""

import math
import time

import keras
import numpy as np


def weights_are_finite(model):
    """True when no trainable weight holds a NaN or an infinity."""
    return all(np.all(np.isfinite(keras.ops.convert_to_numpy(w)))
               for w in model.trainable_weights)


class TimeBudget(keras.callbacks.Callback):
    """Stops training cleanly once `minutes` of wall-clock time have passed."""

    def __init__(self, minutes):
        super().__init__()
        self.seconds = minutes * 60
        self.started = None
        self.expired = False

    def on_train_begin(self, logs=None):
        if self.started is None:  # the budget spans every fit call of one run
            self.started = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        if time.perf_counter() - self.started > self.seconds:
            self.expired = True
            self.model.stop_training = True


class NonFiniteLossGuard(keras.callbacks.Callback):
    """Stops at the first step whose loss is NaN or infinite and remembers that step.

    Keras's epoch loss is a running mean, so one non-finite step makes every
    later value non-finite: the first one is the step that diverged.
    """

    def __init__(self):
        super().__init__()
        self.bad_step = None
        self.bad_loss = None

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None or self.bad_step is not None:
            return
        loss = float(loss)
        if not math.isfinite(loss):
            self.bad_step = int(self.model.optimizer.iterations.numpy())
            self.bad_loss = loss
            self.model.stop_training = True


class Checkpointing(keras.callbacks.Callback):
    """Saves a checkpoint every `every_steps` optimizer steps and when training ends.

    Nothing is saved once `guard` has seen a non-finite loss, nor from
    non-finite weights; and when the loss of step `s` is non-finite, the
    checkpoint of step `s - 1` (whose weights gave that loss) is deleted. The
    newest checkpoint left is then the last one whose weights gave a finite loss.
    """

    def __init__(self, store, every_steps, steps_per_epoch, target_epochs, guard,
                 batching=None, restored_step=None):
        super().__init__()
        self.store = store
        self.every_steps = every_steps
        self.steps_per_epoch = steps_per_epoch
        self.target_epochs = target_epochs
        self.guard = guard
        self.batching = batching
        self.saved_step = restored_step  # a resumed run's first step may go bad too

    def _step(self):
        return int(self.model.optimizer.iterations.numpy())

    def _save(self, finished=False):
        metadata = self.store.save(self.model, self.steps_per_epoch, self.target_epochs,
                                   self.batching, finished)
        self.saved_step = metadata["step"]

    def _maybe_save(self, finished=False):
        if self.guard.bad_step is None and (self._step() != self.saved_step or finished):
            if weights_are_finite(self.model):
                self._save(finished)

    def save_now(self):
        """A checkpoint at the current step unless one is there (an interrupted run's)."""
        self._maybe_save()

    def on_train_batch_end(self, batch, logs=None):
        if self.guard.bad_step is not None:
            if self.saved_step == self.guard.bad_step - 1:
                self.store.delete(self.saved_step)
                self.saved_step = None
            return
        if self._step() % self.every_steps == 0:
            self._maybe_save()

    def on_train_end(self, logs=None):
        # Marked finished when no more training is due (the target reached or the time
        # budget spent), so a kill during the final save only repeats the save.
        self._maybe_save(finished=self.model.stop_training or self._at_target())

    def _at_target(self):
        return self._step() >= self.target_epochs * self.steps_per_epoch
