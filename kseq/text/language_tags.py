"""Language tags: the `2xx` token that starts a caption (or a translation) in language `xx`.

A multilingual model learns every language of its data when each target
starts with a token naming its language (`2fr`, the target-language token of
multilingual translation, Johnson et al. 2017); a dataset builder writes the
tags and a preprocessor forces one as a prompt. Tags are plain word tokens
(`2` + the code), so every kseq tokenizer keeps them whole.

Example:
>>> language_tag("fr"), languages_in(["a", "2en", "2fr", "2x"])
('2fr', ['en', 'fr'])
"""

import re

from kseq.errors import KseqError

TAG_PREFIX = "2"
_CODE = re.compile(r"[a-z]{2,3}")


def language_tag(language):
    """`"fr"` -> `"2fr"`; `KseqError` for anything but a 2-3 letter lower-case code."""
    if not isinstance(language, str) or not _CODE.fullmatch(language):
        raise KseqError(f"A caption language is a 2-3 letter lower-case code such as 'fr'. "
                        f"Received: {language!r}")
    return TAG_PREFIX + language


def languages_in(vocabulary):
    """The language codes whose tag is a token of `vocabulary`, sorted."""
    return sorted(token[1:] for token in vocabulary
                  if token.startswith(TAG_PREFIX) and _CODE.fullmatch(token[1:]))
