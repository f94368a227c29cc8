"""Ctrl-C and SIGTERM during training: a checkpoint at the current step, then one line.

Kubernetes, Slurm and preemptible VMs send SIGTERM some seconds before they
kill; a person presses Ctrl-C. Either way the run should keep its last step.
A signal handler may run at any bytecode (inside Keras's loop, a `tf.data`
call, a half-written file), so it only records the signal; `Interruption`, a
Keras callback, reads that record at the next batch end, writes a checkpoint
there through the run's `Checkpointing` and raises `TrainingInterrupted`,
which ends `fit` before its epoch-end callbacks (no validation of a partial
epoch). At an epoch's last batch it waits for the epoch's end instead: the
callbacks listed before it (validation, `history.csv`) see the complete epoch,
which a resume would not train again. A second signal exits at once
(`os._exit`): the checkpoints are written under temporary names and moved into
place, so one cut short leaves the previous one intact.

Example:
>>> import keras, numpy as np, os, signal, tempfile
>>> from kseq.training.callbacks import Checkpointing, NonFiniteLossGuard
>>> from kseq.training.checkpoints import CheckpointStore
>>> from kseq.training.interruption import Interruption, TrainingInterrupted
>>> model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
>>> model.compile("sgd", "mse")
>>> guard = NonFiniteLossGuard()
>>> store = CheckpointStore(tempfile.mkdtemp())
>>> checkpointing = Checkpointing(store, 100, steps_per_epoch=4, target_epochs=2, guard=guard)
>>> class SendSigterm(keras.callbacks.Callback):
...     def on_train_batch_end(self, batch, logs=None):
...         if batch == 1:
...             os.kill(os.getpid(), signal.SIGTERM)
>>> interruption = Interruption(checkpointing, guard, steps_per_epoch=4, target_epochs=2)
>>> with interruption.handling():
...     try:
...         model.fit(np.ones((8, 1)), np.ones((8, 1)), batch_size=1, epochs=2, verbose=0,
...                   callbacks=[guard, checkpointing, SendSigterm(), interruption])
...     except TrainingInterrupted as stop:
...         print(stop, stop.exit_code)
interrupted at step 2 (epoch 1); the same command resumes 143
>>> store.steps()
[2]
"""

import contextlib
import os
import signal
import threading

import keras

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class TrainingInterrupted(KeyboardInterrupt):
    """Training stopped on a signal after a checkpoint at `step` was written.

    A `KeyboardInterrupt`, so code that catches `Exception` lets it through as it
    lets a plain Ctrl-C through. `exit_code` is the shell's for that signal
    (128 + its number: 130 for SIGINT, 143 for SIGTERM).
    """

    def __init__(self, signum, step, steps_per_epoch):
        self.signum, self.step = signum, step
        self.exit_code = 128 + signum
        epoch = step // steps_per_epoch + 1  # as "resuming at step N (epoch E, ...)" counts
        super().__init__(f"interrupted at step {step} (epoch {epoch}); the same command resumes")


class Interruption(keras.callbacks.Callback):
    """Turns SIGINT and SIGTERM, while `handling()` is active, into a checkpoint and a
    `TrainingInterrupted` at the next batch end.

    Args:
        checkpointing: the run's `Checkpointing` (writes the checkpoint).
        guard: the run's `NonFiniteLossGuard`: a run whose loss went non-finite stops
            with that error instead (its checkpoint must not be written).
        steps_per_epoch: batches an epoch.
        target_epochs: the run's last epoch: a signal after its last batch lets the
            run finish (saving the model takes no longer than a checkpoint).

    List it after the epoch-end callbacks that should see a complete epoch.
    """

    def __init__(self, checkpointing, guard, steps_per_epoch, target_epochs):
        super().__init__()
        self.checkpointing = checkpointing
        self.guard = guard
        self.steps_per_epoch = steps_per_epoch
        self.last_step = target_epochs * steps_per_epoch
        self.signum = None

    @contextlib.contextmanager
    def handling(self):
        """Within the block, the signals are recorded instead of ending the process. Outside
        the main thread Python cannot install handlers: the block then changes nothing."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {signum: signal.signal(signum, self._record) for signum in SIGNALS}
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _record(self, signum, frame):
        if self.signum is not None:  # the second signal: no more waiting for a batch end
            os.write(2, b"interrupted again: exiting without a new checkpoint\n")
            os._exit(128 + signum)
        self.signum = signum

    def _step(self):
        return int(self.model.optimizer.iterations.numpy())

    def on_train_batch_end(self, batch, logs=None):
        if self._step() % self.steps_per_epoch:  # else the epoch's end comes first
            self.stop_if_pending()

    def on_epoch_end(self, epoch, logs=None):
        self.stop_if_pending()

    def stop_if_pending(self):
        """Writes a checkpoint at the current step and raises `TrainingInterrupted` if a
        signal came, unless the loss went non-finite (that error wins) or no step is left.
        Also called after `fit` returned (a signal between two `fit` calls)."""
        if self.signum is None or self.guard.bad_step is not None:
            return
        step = self._step()
        if step < self.last_step:
            self.checkpointing.save_now()
            raise TrainingInterrupted(self.signum, step, self.steps_per_epoch)
