"""Old public method names, kept for users: each warns once per call site and forwards."""

import warnings


def deprecated_alias(old, new):
    """A method named `old` that warns (`DeprecationWarning`) and calls `new`.

    Example:
    >>> import warnings
    >>> class Layer:
    ...     def step(self, x):
    ...         return x + 1
    ...     call_step = deprecated_alias("call_step", "step")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     result = Layer().call_step(1)
    >>> result, caught[0].category.__name__
    (2, 'DeprecationWarning')
    """
    def alias(self, *args, **kwargs):
        warnings.warn(f"`{old}` is deprecated: use `{new}`.", DeprecationWarning, stacklevel=2)
        return getattr(self, new)(*args, **kwargs)

    alias.__name__ = old
    alias.__doc__ = f"Deprecated name of `{new}`."
    return alias
