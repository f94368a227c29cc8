"""Control characters (Unicode category Cc: U+0000-U+001F, U+007F-U+009F) become spaces,
in the graph and in Python alike, before any lower-casing or splitting.

`tf.strings.lower(encoding="utf-8")` stops at a NUL byte: `"a\\0 great film"`
lower-cased in the graph is `"a"`, while Python's `str.lower()` keeps it all.
Replacing every control character with a space first makes both paths see the
same text, and the text after a NUL counts. Tab, newline and carriage return
are control characters too; they were whitespace already.

Example:
>>> replace_control_characters("a\\0 great\\x7ffilm")
'a  great film'
"""

import unicodedata

# RE2 (`tf.strings.regex_replace`) spelling of the same set.
CONTROL_PATTERN = r"\p{Cc}"


def replace_control_characters(text):
    """`text` with each control character (category Cc) replaced by a space."""
    return "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)


def replace_control_characters_in_graph(texts):
    """`[B]` UTF-8 strings -> the same with each control character replaced by a space."""
    import tensorflow as tf  # in-graph text: there is no keras.ops twin

    return tf.strings.regex_replace(texts, CONTROL_PATTERN, " ")
