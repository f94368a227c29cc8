"""Length penalties for ranking finished hypotheses.

A hypothesis with summed log-probability `s` and length `L` scores `s / lp(L)`:

- `"fairseq"`: `lp(L) = L^α`, the source notes' `1/L^α · Σ log P(y_t | y_<t, c)`;
- `"gnmt"`: `lp(L) = ((5 + L) / 6)^α` (Wu et al. 2016);
- `None`: `lp(L) = 1`, the raw log-probability.

`L` counts every generated token, the end token included.
"""

import tensorflow as tf

LENGTH_PENALTIES = ("fairseq", "gnmt", None)


def check_length_penalty(length_penalty, alpha):
    if length_penalty not in LENGTH_PENALTIES:
        raise ValueError(
            f"`length_penalty` must be one of {LENGTH_PENALTIES}. "
            f"Received: length_penalty={length_penalty!r}"
        )


def length_penalty_factor(lengths, length_penalty, alpha):
    """`lp(L)` as float32 for int `lengths` of any shape."""
    lengths = tf.cast(lengths, tf.float32)
    if length_penalty is None or alpha == 0:
        return tf.ones_like(lengths)
    if length_penalty == "fairseq":
        return tf.pow(tf.maximum(lengths, 1.0), alpha)
    return tf.pow((5.0 + lengths) / 6.0, alpha)


def coverage_penalty_term(coverage, source_mask, beta):
    """GNMT coverage term `β · Σ_i log(min(Σ_t a_ti, 1))` over real source positions.

    `coverage` `[..., S]` is the attention summed over steps. Positions never
    attended are clipped at 1e-6 so the term stays finite. Always `<= 0`.
    """
    clipped = tf.maximum(tf.minimum(coverage, 1.0), 1e-6)
    mask = tf.cast(source_mask, tf.float32)
    return beta * tf.reduce_sum(tf.math.log(clipped) * mask, axis=-1)
