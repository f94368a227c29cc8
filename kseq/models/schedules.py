"""Warm-up then inverse-square-root decay (Vaswani et al. 2017)."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="kseq")
class WarmupInverseSqrt(keras.optimizers.schedules.LearningRateSchedule):
    """`peak · min(step / warmup, sqrt(warmup / step))`: linear warm-up, then `1/√step`.

    Example:
    >>> import kseq
    >>> schedule = kseq.models.schedules.WarmupInverseSqrt(peak_learning_rate=1e-3, warmup_steps=100)
    >>> [round(float(schedule(s)), 6) for s in (50, 100, 400)]
    [0.0005, 0.001, 0.0005]
    """

    def __init__(self, peak_learning_rate=1e-3, warmup_steps=1000):
        if warmup_steps < 1 or peak_learning_rate <= 0:
            raise ValueError("`warmup_steps` must be >= 1 and `peak_learning_rate` > 0. "
                             f"Received: warmup_steps={warmup_steps}, "
                             f"peak_learning_rate={peak_learning_rate}")
        self.peak_learning_rate = peak_learning_rate
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        step = ops.maximum(ops.cast(step, "float32"), 1.0)
        warmup = float(self.warmup_steps)
        factor = ops.minimum(step / warmup, ops.sqrt(warmup / step))
        return self.peak_learning_rate * factor

    def get_config(self):
        return {"peak_learning_rate": self.peak_learning_rate, "warmup_steps": self.warmup_steps}
