"""`FusedAdam`: Keras's Adam, one TensorFlow op per variable update."""

import keras
import tensorflow as tf  # the fused update is a TensorFlow kernel; keras.ops has none


@keras.saving.register_keras_serializable(package="kseq")
class FusedAdam(keras.optimizers.Adam):
    """Keras's `Adam` whose update of each variable is TensorFlow's fused Adam kernel.

    Same arguments, variables (`momentum`, `velocity`) and saved state as
    `keras.optimizers.Adam`, and the same arithmetic:
    `m += (g - m)(1 - β₁)`, `v += (g² - v)(1 - β₂)`,
    `w -= lr·√(1 - β₂ᵗ)/(1 - β₁ᵗ) · m / (√v + ε)`, up to float rounding.
    Keras writes that as about fifteen ops a variable; the kernel is one. A
    Transformer's train step traces about a third faster, and a small
    model's step, bound by the ops it dispatches, runs fewer of them.

    Keras's own update runs instead for a sparse gradient (an embedding's
    `IndexedSlices`: Keras updates the moments of its rows only, where the
    kernel would decay every row), with `amsgrad`, under a `tf.distribute`
    strategy (its update function hands each replica's variable over in ways
    the kernel does not read), and outside the TensorFlow backend.

    Example:
    >>> import numpy as np, keras, kseq
    >>> w = keras.Variable(np.array([1.0, -1.0], "float32"))
    >>> optimizer = kseq.models.FusedAdam(learning_rate=0.1)
    >>> _ = optimizer.apply_gradients([(np.array([0.5, -0.5], "float32"), w)])
    >>> [round(float(x), 4) for x in w.numpy()]
    [0.9, -0.9]
    """

    def update_step(self, gradient, variable, learning_rate):
        if (self.amsgrad or tf.distribute.has_strategy() or isinstance(gradient, tf.IndexedSlices)
                or keras.backend.backend() != "tensorflow"):
            return super().update_step(gradient, variable, learning_rate)
        index = self._get_variable_index(variable)
        dtype = variable.dtype
        step = tf.cast(self.iterations + 1, dtype)
        beta_1, beta_2 = tf.cast(self.beta_1, dtype), tf.cast(self.beta_2, dtype)
        tf.raw_ops.ResourceApplyAdam(
            var=variable.handle,
            m=self._momentums[index].value.handle,
            v=self._velocities[index].value.handle,
            beta1_power=tf.pow(beta_1, step), beta2_power=tf.pow(beta_2, step),
            lr=tf.cast(learning_rate, dtype), beta1=beta_1, beta2=beta_2,
            epsilon=tf.cast(self.epsilon, dtype), grad=tf.cast(gradient, dtype))
