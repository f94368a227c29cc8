"""`ClassLabels`: label names <-> class ids, for the preprocessors of classifiers."""

import numpy as np
import tensorflow as tf

from kseq.errors import KseqError


class ClassLabels:
    """The label side of a classifier's preprocessor (a mixin).

    The names are part of the config, so a saved model answers with names.
    Training labels are names (`str`) or class ids (`int` in `[0, C)`);
    `check_labels` refuses anything else, naming the row (counted from 1).

    Example:
    >>> labels = ClassLabels()
    >>> labels.set_label_names(["ham", "spam"])
    >>> labels.check_labels(["spam", 0]), labels.label_ids(["spam", "eggs"]).numpy().tolist()
    ([1, 0], [1, -1])
    """

    def set_label_names(self, label_names):
        self.label_names = [str(name) for name in label_names]
        if len(self.label_names) < 2 or len(set(self.label_names)) != len(self.label_names):
            raise KseqError("`label_names` must hold at least two distinct names. "
                            f"Received: label_names={label_names!r}")

    @property
    def num_classes(self):
        return len(self.label_names)

    def label_ids(self, labels):
        """`[B]` label names (or int ids) -> `[B]` int32 class ids; unknown names -> -1."""
        labels = tf.convert_to_tensor(labels)
        if labels.dtype != tf.string:
            return tf.cast(labels, tf.int32)
        found = tf.equal(labels[:, None], tf.constant(self.label_names)[None])  # [B, C]
        index = tf.argmax(tf.cast(found, tf.int32), axis=1, output_type=tf.int32)
        return tf.where(tf.reduce_any(found, axis=1), index, -1)

    def check_labels(self, labels):
        """Label names or ids -> ids, or `KseqError` naming the first bad row."""
        ids = []
        for row, label in enumerate(labels, start=1):
            if isinstance(label, (bool, np.bool_)):
                label = None
            elif isinstance(label, (int, np.integer)) and 0 <= label < self.num_classes:
                ids.append(int(label))
                continue
            elif isinstance(label, str) and label in self.label_names:
                ids.append(self.label_names.index(label))
                continue
            raise KseqError(f"Row {row}: the label must be one of {self.label_names} or a class "
                            f"id in [0, {self.num_classes}). Received: {label!r}")
        return ids
