"""A 1-D convolution followed by a gated linear unit (Gehring et al., 2017).

Shape letters: `B` batch, `T` length, `C` input channels, `H` output
channels, `k` kernel size, `N` rows in a search step.
"""

import math

import keras
from keras import ops

from kseq.layers.checks import require_depth, require_rank


def glu(x):
    """Gated linear unit over the last axis: `a * sigmoid(b)` for `x = [a, b]`."""
    a, b = ops.split(x, 2, axis=-1)
    return a * ops.sigmoid(b)


@keras.saving.register_keras_serializable(package="kseq")
class GatedConvolution(keras.layers.Layer):
    """`[B, T, C]` -> `[B, T, H]`: convolution to `2H` channels, then a GLU.

    Non-causal layers pad `(k-1)/2` on each side (`k` must be odd), so output
    `t` sees inputs `t-(k-1)/2 … t+(k-1)/2`. Causal layers pad `k-1` on the
    left, so output `t` sees inputs `t-k+1 … t`, and `step` computes one output
    from a window of the last `k-1` inputs — exactly what the full call gives.

    Args:
        units: `H`.
        kernel_size: `k`.
        causal: left padding only (decoders).
        dropout: dropout on the input, before the convolution.

    Call arguments:
        inputs: `[B, T, C]`.
        mask: optional `[B, T]`; masked inputs are zeroed first, so padding
            never leaks into real positions.

    Example:
    >>> import numpy as np, kseq
    >>> layer = kseq.layers.GatedConvolution(4, kernel_size=3, causal=True)
    >>> x = np.random.rand(2, 5, 6).astype("float32")
    >>> full = layer(x).numpy()
    >>> window = layer.initial_state(2, 6)
    >>> y, window = layer.step(x[:, 0], window)
    >>> bool(np.allclose(y, full[:, 0], atol=1e-5))
    True
    """

    def __init__(self, units, kernel_size=3, causal=False, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        if kernel_size < 1 or (not causal and kernel_size % 2 == 0):
            raise ValueError("`kernel_size` must be >= 1, and odd for a non-causal layer. "
                             f"Received: kernel_size={kernel_size}, causal={causal}")
        self.units = units
        self.kernel_size = kernel_size
        self.causal = causal
        self.dropout = dropout
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=self.dtype_policy)
        self.supports_masking = True

    def build(self, inputs_shape):
        channels = inputs_shape[-1]
        # Gehring et al.: variance 4(1-p)/fan_in keeps activations stable through GLUs.
        initializer = keras.initializers.VarianceScaling(
            scale=4.0 * (1.0 - self.dropout), mode="fan_in", distribution="truncated_normal")
        self.kernel = self.add_weight(name="kernel",
                                      shape=(self.kernel_size, channels, 2 * self.units),
                                      initializer=initializer)
        self.bias = self.add_weight(name="bias", shape=(2 * self.units,), initializer="zeros")
        self.built = True

    def _padding(self):
        if self.causal:
            return self.kernel_size - 1, 0
        half = (self.kernel_size - 1) // 2
        return half, half

    def call(self, inputs, mask=None, training=None):
        require_rank("inputs", inputs, 3)
        x = inputs
        if mask is not None:
            x = x * ops.cast(mask, x.dtype)[..., None]
        x = self.dropout_layer(x, training=training)
        left, right = self._padding()
        x = ops.pad(x, [[0, 0], [left, right], [0, 0]])  # [B, T+k-1, C]
        y = ops.conv(x, ops.cast(self.kernel, x.dtype), strides=1, padding="valid")  # [B, T, 2H]
        return glu(y + ops.cast(self.bias, y.dtype))

    def initial_state(self, batch, channels):
        """Zeros `[N, k-1, C]`: the causal left padding, as step state."""
        return ops.zeros((batch, self.kernel_size - 1, channels), dtype=self.compute_dtype)

    def step(self, input_t, window):
        """`[N, C]` input and `[N, k-1, C]` previous inputs -> `([N, H], new window)`."""
        if not self.causal:
            raise ValueError("`step` needs a causal layer. Received: causal=False")
        require_rank("input_t", input_t, 2)
        if not self.built:
            self.build((None, None, input_t.shape[-1]))
        require_depth("input_t", input_t, self.kernel.shape[1])
        full = ops.concatenate([window, input_t[:, None, :]], axis=1)  # [N, k, C]
        y = ops.einsum("nkc,kco->no", full, ops.cast(self.kernel, full.dtype))
        return glu(y + ops.cast(self.bias, y.dtype)), full[:, 1:]

    def compute_output_shape(self, inputs_shape):
        return (*inputs_shape[:-1], self.units)

    def get_config(self):
        return {**super().get_config(), "units": self.units, "kernel_size": self.kernel_size,
                "causal": self.causal, "dropout": self.dropout}


RESIDUAL_SCALE = math.sqrt(0.5)  # keeps the variance of a sum of two branches constant
