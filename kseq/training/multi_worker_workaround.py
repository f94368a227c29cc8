"""The one place where kseq works around Keras 3 under `MultiWorkerMirroredStrategy`.

Upstream: keras-team/keras#20585 (open as of Keras 3.15.1 / TF 2.21). Plain
`model.fit` under `tf.distribute.MultiWorkerMirroredStrategy` fails twice:

1. `fit` first runs the trainer's *symbolic build*, which takes the first
   distributed batch and eagerly `strategy.reduce`s it
   (`ValueError: Attempt to convert a value (PerReplica...)`).
   Workaround: the model and its optimizer are built before `fit`, and the
   model's `_maybe_symbolic_build` returns at once when the model is built
   (the loss and metrics then build on the first traced step, as they do
   without a strategy).
2. Each epoch log is reduced over the workers with `strategy.reduce("MEAN", v,
   axis=0)`, which fails on a scalar (`Invalid reduction dimension 0 for input
   with 0 dimensions`). Workaround: `train_step` returns every log as a
   shape-`[1]` tensor; the `axis=0` mean over the workers then gives a scalar,
   the worker mean, as Keras reports on one machine.

Both patches go on one model *instance* (`patch_for_multi_worker`), never on a
class, and only when the run's strategy is multi-worker. `_maybe_symbolic_build`
is a private Keras method: `tests/training/test_multi_worker_workaround.py` is
the tripwire that fails when Keras changes underneath (the method disappears or
changes its arguments, or the upstream bug is fixed and this module can go).
"""

import types

import keras

# The private trainer method the first patch replaces, and the argument names Keras
# calls it with (checked by the tripwire test).
SYMBOLIC_BUILD = "_maybe_symbolic_build"
SYMBOLIC_BUILD_ARGUMENTS = ("iterator", "data_batch")
UPSTREAM_ISSUE = "https://github.com/keras-team/keras/issues/20585"


def _skip_symbolic_build_once_built(original):
    def maybe_symbolic_build(self, iterator=None, data_batch=None):
        if self.built and (self.optimizer is None or self.optimizer.built):
            return None  # keras#20585: the eager reduce of a PerReplica batch fails
        return original(iterator=iterator, data_batch=data_batch)
    return maybe_symbolic_build


def _logs_of_shape_one(original):
    def train_step(self, data):
        logs = original(data)
        # keras#20585: `reduce("MEAN", v, axis=0)` needs a batch axis; [1] -> [] there.
        return {name: keras.ops.reshape(value, [1]) for name, value in logs.items()}
    return train_step


def patch_for_multi_worker(model):
    """Applies both workarounds to `model` (built, compiled, optimizer built); returns it.

    Raises:
        ValueError: when the model or its optimizer is not built yet (the
            symbolic build that is skipped would have built them).
    """
    optimizer = getattr(model, "optimizer", None)
    if not model.built or optimizer is None or not optimizer.built:
        raise ValueError(f"Build the model and its optimizer before patching it for "
                         f"multi-worker training ({UPSTREAM_ISSUE}). Received: "
                         f"model.built={model.built}, optimizer built="
                         f"{getattr(optimizer, 'built', None)}")
    if getattr(model, "_kseq_multi_worker_patched", False):
        return model
    build = getattr(model, SYMBOLIC_BUILD)  # AttributeError: Keras changed (see the tripwire)
    # Instance attributes, so other models of the process (and the saved file) are untouched.
    object.__setattr__(model, SYMBOLIC_BUILD,
                       types.MethodType(_skip_symbolic_build_once_built(build), model))
    object.__setattr__(model, "train_step",
                       types.MethodType(_logs_of_shape_one(model.train_step), model))
    object.__setattr__(model, "_kseq_multi_worker_patched", True)
    return model
