"""Sequence taggers from flat hyper-parameters: a character-level text encoder and a head.

`build_tagger(char_tokenizer, tag_names, encoder="rnn"|"transformer", **options)`
takes the same encoder options as `kseq.models.build_classifier` (a
bidirectional GRU/LSTM, or a Transformer whose `max_length` is the character
length).
"""

from kseq.arguments import check_choice
from kseq.models.classifier.architectures import text_encoder
from kseq.models.tagger.tagger_preprocessor import TaggerPreprocessor
from kseq.models.tagger.sequence_tagger import SequenceTagger

TAGGER_ENCODERS = ("rnn", "transformer")


def build_tagger(tokenizer, tag_names, encoder="rnn", max_length=256, dropout=0.1, dtype=None,
                 name="tagger", **encoder_options):
    """A `SequenceTagger` (see the module docstring).

    Example:
    >>> import kseq
    >>> tok = kseq.text.CharTokenizer.build_vocabulary(["the dog runs"])
    >>> model = kseq.models.build_tagger(tok, ["DET", "NOUN", "VERB"], hidden_dim=8)
    >>> [len(tags) for _, tags in model.tag(["the dog", ""])]
    [2, 0]
    """
    check_choice("encoder", encoder, TAGGER_ENCODERS)
    encoder_part = text_encoder(encoder, tokenizer.vocabulary_size, max_length, dropout, dtype,
                                **encoder_options)
    preprocessor = TaggerPreprocessor(tokenizer, tag_names, max_length)
    return SequenceTagger(encoder_part, preprocessor, dropout=dropout, dtype=dtype, name=name)
