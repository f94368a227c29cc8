"""The marks every kseq tokenizer shares, in the graph and in plain Python alike.

Reserved tokens and their ids, the joiner that marks a piece written with no
space before it, WordPiece's continuation prefix, and the RE2 spelling of what
counts as punctuation. This module imports nothing, so the plain-Python twin of
the tokenizers (`kseq.text.plain_tokenizer`) reads them without TensorFlow.

Example:
>>> RESERVED_TOKENS[END_ID]
'</s>'
"""

RESERVED_TOKENS = ("<pad>", "<unk>", "<s>", "</s>")
PAD_ID, UNK_ID, START_ID, END_ID = 0, 1, 2, 3
JOINER = "\uffed"  # '￭' marks a piece written with no space before it
SUFFIX = "##"  # WordPiece: a unit continuing a word
# RE2: one character that is neither ASCII space (RE2's `\s`), a letter nor a number.
PUNCTUATION_PATTERN = r"[^\s\pL\pN]"
