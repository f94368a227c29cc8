"""`ClassifierPreprocessor`: text -> token ids, label names <-> class ids."""

import keras
import tensorflow as tf

from kseq.arguments import check_int
from kseq.models.preprocessors.class_labels import ClassLabels
from kseq.models.preprocessors.preprocessor import Preprocessor, padded_ids
from kseq.text import tokenizer_from_config


@keras.saving.register_keras_serializable(package="kseq")
class ClassifierPreprocessor(ClassLabels, Preprocessor):
    """Tokenises texts (cut to `max_length`) and maps label names to class ids.

    The label names are part of the config, so a saved model answers with
    names. Training labels are names (`str`) or class ids (`int` in
    `[0, num_classes)`); anything else is refused in `to_dataset`, naming the
    row, before anything trains.

    Args:
        tokenizer: a `kseq.text` tokenizer.
        label_names: the classes, in id order.
        max_length: longest input, in tokens (longer ones are cut and flagged).

    Example:
    >>> import tensorflow as tf, kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["great film", "dull film"])
    >>> pre = kseq.models.ClassifierPreprocessor(tok, ["negative", "positive"], 16)
    >>> features, labels = pre(tf.constant(["great film"]), tf.constant(["positive"]))
    >>> labels.numpy().tolist(), pre.inference_inputs(tf.constant([""]))["empty"].numpy().tolist()
    ([1], [True])
    """

    def __init__(self, tokenizer, label_names, max_length=128):
        self.tokenizer = tokenizer
        self.set_label_names(label_names)
        self.max_length = check_int("max_length", max_length)

    input_kind = "text"

    @property
    def input_signature(self):
        return [tf.TensorSpec([None, None], tf.int32, name="token_ids")]

    def token_ids(self, texts):
        """`[B]` strings -> `(ragged ids cut to max_length, truncated [B] bool)`."""
        ragged = self.tokenizer.tokenize(texts)
        return ragged[:, : self.max_length], ragged.row_lengths() > self.max_length

    def __call__(self, texts, labels):
        token_ids, _ = self.token_ids(texts)
        return {"token_ids": token_ids}, self.label_ids(labels)

    def inference_inputs(self, texts):
        """`[B]` strings -> `{"token_ids" [B, W], "truncated" [B], "empty" [B]}`."""
        ragged, truncated = self.token_ids(texts)
        ids, empty = padded_ids(ragged, self.max_length)
        return {"token_ids": ids, "truncated": truncated, "empty": empty}

    def padded_widths(self):
        return {"token_ids": self.max_length}, None

    def to_dataset(self, data):
        """`(text, label)` pairs (a list; labels checked) or a dataset of them."""
        if isinstance(data, tf.data.Dataset):
            return data
        data = list(data)
        ids = self.check_labels([label for _, label in data])
        texts = tf.constant([text for text, _ in data], tf.string)
        return tf.data.Dataset.from_tensor_slices((texts, tf.constant(ids, tf.int32)))

    def get_config(self):
        return {"tokenizer": self.tokenizer.get_config(), "label_names": list(self.label_names),
                "max_length": self.max_length}

    @classmethod
    def from_config(cls, config):
        return cls(**{**config, "tokenizer": tokenizer_from_config(config["tokenizer"])})
