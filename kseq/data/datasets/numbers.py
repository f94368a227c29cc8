"""The built-in `numbers` task: English number words -> French or German words.

Numbers 0-999,999 are drawn with a digit count chosen uniformly (so small
numbers are not drowned by six-digit ones). Each number belongs to one split,
fixed by a hash of the number, so splits are disjoint and share one
distribution; the same seed always gives the same pairs.
"""

import hashlib

import numpy as np

from kseq.arguments import check_choice, check_int
from kseq.errors import KseqError

LANGUAGES = ("fr", "de", "es", "it")


def _words(number, lang):
    try:
        from num2words import num2words
    except ImportError as error:  # an optional extra: say how to get it
        raise ImportError(
            "The `numbers` builder needs num2words: pip install 'kseq[data]'"
        ) from error
    return num2words(number, lang=lang)


def _draw_number(rng):
    digits = int(rng.integers(1, 7))
    low = 0 if digits == 1 else 10 ** (digits - 1)
    return int(rng.integers(low, 10**digits))


def _split_of(number, test_share, valid_share):
    """A fixed split per number (a hash), so small numbers spread over all splits."""
    u = int(hashlib.sha1(str(number).encode()).hexdigest(), 16) % 1_000_000 / 1_000_000
    return "test" if u < test_share else ("valid" if u < test_share + valid_share else "train")


def numbers_dataset(target_language="fr", train_size=20000, valid_size=500, test_size=1000,
                    source="words", seed=0):
    """Builds `{"train", "valid", "test"}` lists of `(source, target)` string pairs.

    Args:
        target_language: one of `LANGUAGES`.
        train_size, valid_size, test_size: pairs per split: integers >= 0 (0 leaves that
            split empty), at least 1 and at most 1,000,000 in all.
        source: `"words"` (English words) or `"digits"`.
        seed: the random seed, an integer >= 0; the same seed gives the same splits.

    Raises `KseqError` naming the argument for a bad value (`-5`, `2.5`, `True`),
    and when the draw cannot fill a split (possible only near 1,000,000 pairs).

    Example:
    >>> from kseq.data import numbers_dataset
    >>> splits = numbers_dataset("fr", train_size=5, valid_size=2, test_size=2)
    >>> len(splits["train"]), splits["test"][0][1] != ""
    (5, True)
    """
    check_choice("target_language", target_language, LANGUAGES)
    check_choice("source", source, ("words", "digits"))
    train_size = check_int("train_size", train_size, minimum=0)
    valid_size = check_int("valid_size", valid_size, minimum=0)
    test_size = check_int("test_size", test_size, minimum=0)
    seed = check_int("seed", seed, minimum=0)
    if not 1 <= train_size + valid_size + test_size <= 1_000_000:
        raise KseqError("train_size + valid_size + test_size must be between 1 and 1,000,000 "
                        f"(the numbers 0-999,999). Received: train_size={train_size}, "
                        f"valid_size={valid_size}, test_size={test_size}")
    numbers = _draw_numbers(seed, train_size, valid_size, test_size)
    source_text = (lambda n: str(n)) if source == "digits" else (lambda n: _words(n, "en"))
    return {
        name: [(source_text(n), _words(n, target_language)) for n in numbers[name]]
        for name in ("train", "valid", "test")
    }


def _draw_numbers(seed, train_size, valid_size, test_size):
    """Distinct numbers per split, each in the split its hash picks."""
    sizes = {"train": train_size, "valid": valid_size, "test": test_size}
    total = sum(sizes.values())
    rng = np.random.default_rng(seed)
    numbers = {name: [] for name in sizes}
    taken = set()
    for _ in range(50 * total + 1000):  # bounded: the shares always fill in practice
        if all(len(numbers[n]) >= sizes[n] for n in sizes):
            break
        number = _draw_number(rng)
        if number in taken:
            continue
        taken.add(number)
        split = _split_of(number, test_size / total, valid_size / total)
        if len(numbers[split]) < sizes[split]:
            numbers[split].append(number)
    short = [f"{n}_size={sizes[n]}" for n in sizes if len(numbers[n]) < sizes[n]]
    if short:  # never return fewer pairs than asked for
        drawn = ", ".join(f"{n} {len(numbers[n])}" for n in sizes)
        raise KseqError(f"Could only draw {drawn} distinct numbers; ask for fewer. "
                        f"Received: {', '.join(short)}")
    return numbers
