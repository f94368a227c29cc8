"""The built-in `number_words` corpus: number words by language, for language models.

Each drawn number (0-999,999, as the `numbers` builder draws them, one split
per number) gives one `(language, words)` pair per language: a category and
its text, so a tiny model learns to write a number in the language it is given.

Example:
>>> from kseq.data.datasets.number_words import number_words
>>> splits = number_words(["en", "fr"], train_size=3, valid_size=1, test_size=1)
>>> len(splits["train"]), sorted({language for language, _ in splits["train"]})
(6, ['en', 'fr'])
"""

from kseq.arguments import check_choice, check_int
from kseq.data.datasets.numbers import LANGUAGES, _draw_numbers, _words
from kseq.errors import KseqError


def number_words(languages=("en", "fr", "de"), train_size=2000, valid_size=100, test_size=100,
                 seed=0):
    """`{"train", "valid", "test"}` lists of `(language, number words)` pairs.

    Args:
        languages: num2words languages among "en" and the `numbers` builder's.
        train_size, valid_size, test_size: numbers per split (each gives one pair
            per language).
        seed: the same seed gives the same splits.
    """
    if isinstance(languages, str) or not languages:
        raise KseqError(f"`languages` must be a non-empty list of language codes. Received: "
                        f"languages={languages!r}")
    for language in languages:
        check_choice("languages", language, ("en",) + LANGUAGES)
    sizes = [check_int(name, value, minimum=0) for name, value in
             (("train_size", train_size), ("valid_size", valid_size),
              ("test_size", test_size))]
    numbers = _draw_numbers(check_int("seed", seed, minimum=0), *sizes)
    return {split: [(language, _words(n, language)) for n in numbers[split]
                    for language in languages] for split in ("train", "valid", "test")}
