"""Input checks shared by the layers: clear `ValueError`s instead of deep TF errors."""


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
