"""`TranslatorPreprocessor`: source/target strings <-> ids for training, search and serving."""

import keras
import tensorflow as tf

from kseq.data.pipeline.parallel_text import pairs_to_dataset
from kseq.models.preprocessors.preprocessor import Preprocessor, padded_ids
from kseq.models.preprocessors.text_targets import TextTargets
from kseq.text import tokenizer_from_config


@keras.saving.register_keras_serializable(package="kseq")
class TranslatorPreprocessor(TextTargets, Preprocessor):
    """Tokenises `(source, target)` strings and applies the teacher-forcing shift.

    The decoder input is `<s> y` and the label `y </s>`; sources are cut to
    `max_source_length` and targets to `max_target_length - 1` tokens. The
    same `source_ids` serves training, `translate()` and the exported model.

    Args:
        source_tokenizer, target_tokenizer: `kseq.text` tokenizers.
        max_source_length: longest source, in tokens (longer ones are cut).
        max_target_length: longest decoder input or label, with `<s>`/`</s>`.

    Example:
    >>> import tensorflow as tf, kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["one two", "un deux"])
    >>> pre = kseq.models.TranslatorPreprocessor(tok, tok, 8, 8)
    >>> features, labels = pre(tf.constant(["one two"]), tf.constant(["un deux"]))
    >>> features["decoder_ids"].numpy()[0].tolist()[0] == kseq.text.START_ID
    True
    >>> inputs = pre.inference_inputs(tf.constant(["one two one two one two one two one"]))
    >>> inputs["source_ids"].shape[1], inputs["truncated"].numpy().tolist()
    (8, [True])
    """

    def __init__(self, source_tokenizer, target_tokenizer, max_source_length, max_target_length):
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self.max_source_length = max_source_length
        self.max_target_length = max_target_length

    @property
    def input_signature(self):
        """The search's input: source ids `[B, S]` int32."""
        return [tf.TensorSpec([None, None], tf.int32, name="source_ids")]

    def source_ids(self, texts):
        """`[B]` strings -> `(ragged ids cut to max_source_length, truncated [B] bool)`."""
        ragged = self.source_tokenizer.tokenize(texts)
        truncated = ragged.row_lengths() > self.max_source_length
        return ragged[:, : self.max_source_length], truncated

    def __call__(self, sources, targets):
        """Batched: `[B]` strings -> ragged features and labels."""
        source_ids, _ = self.source_ids(sources)
        decoder_ids, labels = self.target_ids(targets)
        return {"source_ids": source_ids, "decoder_ids": decoder_ids}, labels

    def inference_inputs(self, texts):
        """`[B]` strings -> `{"source_ids" [B, W], "truncated" [B], "empty" [B]}`.

        `W` is the longest row rounded up to a multiple of 8 (at least 8, at
        most `max_source_length`), so a search compiles for few widths.
        """
        ragged, truncated = self.source_ids(texts)
        ids, empty = padded_ids(ragged, self.max_source_length)
        return {"source_ids": ids, "truncated": truncated, "empty": empty}

    def padded_widths(self):
        """Sources need at most `max_source_length` columns, decoder inputs and labels
        `max_target_length`, whatever the bucket (the position tables are that long)."""
        target = self.max_target_length
        return {"source_ids": self.max_source_length, "decoder_ids": target}, target

    def to_dataset(self, data):
        """`(source, target)` pairs (a list) or a dataset of string pairs."""
        return pairs_to_dataset(data) if isinstance(data, (list, tuple)) else data

    def get_config(self):
        return {"source_tokenizer": self.source_tokenizer.get_config(),
                "target_tokenizer": self.target_tokenizer.get_config(),
                "max_source_length": self.max_source_length,
                "max_target_length": self.max_target_length}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for side in ("source_tokenizer", "target_tokenizer"):
            config[side] = tokenizer_from_config(config[side])
        return cls(**config)
