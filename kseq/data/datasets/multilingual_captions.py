"""Captions in several languages for one captioner: each caption starts with a language tag.

One captioner learns every language of its training data when each caption
starts with a token naming its language (`2fr`, as the target-language token of
multilingual translation, Johnson et al. 2017); at inference the tag is forced
as a prompt (`Captioner.caption(images, language="fr")`), so the captioner
continues in that language. Tags are plain word tokens (`2` + the code), so
every kseq tokenizer keeps them whole.

Example:
>>> multilingual_splits({"en": {"train": [(b"png", "a cat")]},
...                      "fr": {"train": [(b"png", "un chat")]}})
{'train': [(b'png', '2en a cat'), (b'png', '2fr un chat')]}
"""

from kseq.errors import KseqError
from kseq.text.language_tags import language_tag


def multilingual_splits(splits_by_language):
    """`{language: {split: [(image, caption)]}}` -> `{split: [(image, "2xx caption")]}`,
    languages in the given order within each split (items may carry more fields)."""
    merged = {}
    for language, splits in splits_by_language.items():
        tag = language_tag(language)
        for name, rows in splits.items():
            merged.setdefault(name, []).extend(
                (row[0], f"{tag} {row[1]}", *row[2:]) for row in rows)
    return merged


def multilingual_captions(builder="emoji_captions", languages=("en", "fr", "de", "es", "it"),
                          **options):
    """The `builder`'s splits for each of `languages`, tagged and merged.

    `builder` is `"emoji_captions"` or `"tuxpaint_captions"` (both split by a key
    shared by every language, so an image is in the same split in each);
    `options` go to the builder.
    """
    from kseq.data.datasets.emoji_captions import emoji_captions
    from kseq.data.datasets.tuxpaint_captions import tuxpaint_captions

    builders = {"emoji_captions": emoji_captions, "tuxpaint_captions": tuxpaint_captions}
    if builder not in builders:
        raise KseqError(f"multilingual_captions reads one of {sorted(builders)}. "
                        f"Received: builder={builder!r}")
    if isinstance(languages, str) or not languages:
        raise KseqError(f"`languages` must be a list of codes. Received: {languages!r}")
    return multilingual_splits({language: builders[builder](lang=language, **options)
                                for language in languages})
