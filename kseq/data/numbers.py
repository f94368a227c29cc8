"""The built-in `numbers` task: English number words -> French or German words.

Numbers 0-999,999 are drawn with a digit count chosen uniformly (so small
numbers are not drowned by six-digit ones). Splits are disjoint by number, and
the same seed always gives the same pairs.
"""

import numpy as np

LANGUAGES = ("fr", "de", "es", "it")


def _words(number, lang):
    try:
        from num2words import num2words
    except ImportError as error:  # an optional extra: say how to get it
        raise ImportError(
            "The `numbers` builder needs num2words: pip install 'kseq[data]'"
        ) from error
    return num2words(number, lang=lang)


def _draw_numbers(rng, count, taken):
    drawn = []
    while len(drawn) < count:
        digits = int(rng.integers(1, 7))
        low = 0 if digits == 1 else 10 ** (digits - 1)
        number = int(rng.integers(low, 10**digits))
        if number not in taken:
            taken.add(number)
            drawn.append(number)
    return drawn


def numbers_dataset(target_language="fr", train_size=20000, valid_size=500, test_size=1000,
                    source="words", seed=0):
    """Builds `{"train", "valid", "test"}` lists of `(source, target)` string pairs.

    Args:
        target_language: one of `LANGUAGES`.
        train_size, valid_size, test_size: pairs per split (at most 1,000,000 in all).
        source: `"words"` (English words) or `"digits"`.
        seed: the random seed; the same seed gives the same splits.

    Example:
    >>> from kseq.data import numbers_dataset
    >>> splits = numbers_dataset("fr", train_size=5, valid_size=2, test_size=2)
    >>> len(splits["train"]), splits["test"][0][1] != ""
    (5, True)
    """
    if target_language not in LANGUAGES:
        raise ValueError(f"`target_language` must be one of {LANGUAGES}. "
                         f"Received: target_language={target_language!r}")
    if source not in ("words", "digits"):
        raise ValueError(f"`source` must be 'words' or 'digits'. Received: source={source!r}")
    total = train_size + valid_size + test_size
    if total > 1_000_000:
        raise ValueError(f"At most 1,000,000 numbers exist. Received: {total} requested")
    rng = np.random.default_rng(seed)
    taken = set()
    # Test first: it never depends on the train size, so figures stay comparable.
    splits = {}
    for name, size in (("test", test_size), ("valid", valid_size), ("train", train_size)):
        numbers = _draw_numbers(rng, size, taken)
        splits[name] = [
            (str(n) if source == "digits" else _words(n, "en"), _words(n, target_language))
            for n in numbers
        ]
    return splits
