"""Input checks shared by the layers: clear `ValueError`s instead of deep TF errors."""


def require_rank(name, tensor, rank):
    """Raises `ValueError` unless `tensor` has `rank` dimensions."""
    shape = getattr(tensor, "shape", None)
    if shape is None or len(shape) != rank:
        raise ValueError(
            f"`{name}` must have rank {rank}. "
            f"Received: {name}.shape={None if shape is None else tuple(shape)}"
        )


def require_same_depth(name_a, a, name_b, b):
    """Raises `ValueError` unless the last dimensions of `a` and `b` agree."""
    depth_a, depth_b = a.shape[-1], b.shape[-1]
    if depth_a is not None and depth_b is not None and depth_a != depth_b:
        raise ValueError(
            f"`{name_a}` and `{name_b}` must have the same last dimension. "
            f"Received: {name_a}.shape={tuple(a.shape)}, {name_b}.shape={tuple(b.shape)}"
        )


def require_mask(name, mask):
    """Raises `ValueError` when a mask that the call needs is missing."""
    if mask is None:
        raise ValueError(
            f"`{name}` is required here: pass a [B, S] bool mask that is True at "
            f"real positions. Received: {name}=None"
        )
