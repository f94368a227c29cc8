"""Sequence taggers from flat hyper-parameters: a character-level text encoder and a head.

`build_tagger(char_tokenizer, tag_names, encoder="rnn"|"transformer", **options)`
builds the encoder by its `kseq.models.part_catalog` factory (the options of
`kseq.models.build_classifier`'s text encoders: a bidirectional GRU/LSTM, or
a Transformer whose `max_length` is the character length).
"""

from kseq.models.part_catalog import encoder_entry, split_options
from kseq.models.tagger.sequence_tagger import SequenceTagger
from kseq.models.tagger.tagger_preprocessor import TaggerPreprocessor

TAGGER_ENCODERS = ("rnn", "transformer")


def build_tagger(tokenizer, tag_names, encoder="rnn", max_length=256, dropout=0.1, dtype=None,
                 name="tagger", **options):
    """A `SequenceTagger` (see the module docstring); an option that no part takes raises
    `TypeError`.

    Example:
    >>> import kseq
    >>> tok = kseq.text.CharTokenizer.build_vocabulary(["the dog runs"])
    >>> model = kseq.models.build_tagger(tok, ["DET", "NOUN", "VERB"], hidden_dim=8)
    >>> [len(tags) for _, tags in model.tag(["the dog", ""])]
    [2, 0]
    """
    part = encoder_entry(encoder, TAGGER_ENCODERS)
    [encoder_options] = split_options(options, [part],
                                      fixed=[{"max_length": max_length, "dropout": dropout}])
    encoder_part = part.build(tokenizer.vocabulary_size, dtype=dtype, **encoder_options)
    preprocessor = TaggerPreprocessor(tokenizer, tag_names, max_length)
    return SequenceTagger(encoder_part, preprocessor, dropout=dropout, dtype=dtype, name=name)
