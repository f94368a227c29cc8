"""Input checks shared by the layers: clear `ValueError`s instead of deep TF errors."""

import tensorflow as tf  # static-value lookup and graph assertions have no keras.ops twin


def require_rank(name, tensor, rank):
    """Raises `ValueError` unless `tensor` has `rank` dimensions."""
    shape = getattr(tensor, "shape", None)
    if shape is None or len(shape) != rank:
        raise ValueError(
            f"`{name}` must have rank {rank}. "
            f"Received: {name}.shape={None if shape is None else tuple(shape)}"
        )


def require_depth(name, tensor, depth):
    """Raises `ValueError` unless the last dimension of `tensor` is `depth`."""
    actual = tensor.shape[-1]
    if actual is not None and depth is not None and actual != depth:
        raise ValueError(
            f"`{name}` must have last dimension {depth}. "
            f"Received: {name}.shape={tuple(tensor.shape)}"
        )


def require_mask(name, mask):
    """Raises `ValueError` when a mask that the call needs is missing."""
    if mask is None:
        raise ValueError(
            f"`{name}` is required here: pass a [B, S] bool mask that is True at "
            f"real positions. Received: {name}=None"
        )


# Trace-time Python checks: AutoGraph must not turn them into graph conditionals.
@tf.autograph.experimental.do_not_convert
def check_cache_room(t, max_length):
    """Raises a clear error when step `t` does not fit a cache of `max_length`.

    A Python int, an eager tensor or a traced constant is checked at once; a
    position only known at run time (inside a search loop) gets a graph
    assertion, a core TF op that SavedModel export keeps. Returns `t`, tied to
    that assertion: ops that use the returned value run after the check, so a
    gather on `t` elsewhere (e.g. a position table) cannot fail first with a
    less helpful message.
    """
    # keras.ops has neither static-value lookup nor assertions: TF's are used here.
    message = f"KV cache overflow: step t must be < max_length={max_length}."
    value = t if isinstance(t, int) else tf.get_static_value(t)
    if value is not None:
        if not 0 <= int(value) < max_length:
            raise ValueError(f"{message} Received: t={int(value)}")
        return t
    # Graph ops without data dependencies run in any order: tie `t` to the check.
    with tf.control_dependencies([tf.debugging.assert_less(t, max_length, message=message)]):
        return tf.identity(t)
