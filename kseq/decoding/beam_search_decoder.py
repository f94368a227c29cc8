"""`BeamSearchDecoder`: the Keras layer around `beam_search`."""

import keras

from kseq.decoding.beam_search import beam_search, check_beam_arguments
from kseq.decoding.length_penalty import check_length_penalty


@keras.saving.register_keras_serializable(package="kseq")
class BeamSearchDecoder(keras.layers.Layer):
    """Holds beam-search settings and runs them over a step-protocol model.

    Args:
        beam_size, max_length, end_id, length_penalty, alpha, coverage_penalty,
        min_length, max_length_a, max_length_b, no_repeat_ngram_size, n_best,
        early_stop: as in `kseq.decoding.beam_search`.

    Call arguments:
        start_ids: int `[B]`.
        memory: nested dict from the model's `encode`.
        state: nested dict from the model's `initial_state`.
        step: the model's `step` function.

    Returns:
        `(ids [B, M, T], scores [B, M], lengths [B, M])`.

    Example:
    >>> import tensorflow as tf, kseq
    >>> decoder = kseq.decoding.BeamSearchDecoder(beam_size=2, max_length=3, end_id=2)
    >>> def step(ids, state, memory, t):
    ...     return tf.math.log(tf.fill([tf.shape(ids)[0], 3], 1 / 3)), state
    >>> ids, scores, lengths = decoder(tf.constant([0]), memory={}, state={}, step=step)
    >>> tuple(ids.shape)
    (1, 1, 3)
    """

    def __init__(
        self, beam_size=4, max_length=64, end_id=3, length_penalty="fairseq", alpha=0.75,
        coverage_penalty=0.0, min_length=0, max_length_a=None, max_length_b=None,
        no_repeat_ngram_size=0, n_best=1, early_stop=True, **kwargs,
    ):
        super().__init__(**kwargs)
        check_length_penalty(length_penalty, alpha)
        check_beam_arguments(beam_size, n_best, length_penalty, alpha, early_stop, coverage_penalty)
        self.beam_size = beam_size
        self.max_length = max_length
        self.end_id = end_id
        self.length_penalty = length_penalty
        self.alpha = alpha
        self.coverage_penalty = coverage_penalty
        self.min_length = min_length
        self.max_length_a = max_length_a
        self.max_length_b = max_length_b
        self.no_repeat_ngram_size = no_repeat_ngram_size
        self.n_best = n_best
        self.early_stop = early_stop
        self.built = True

    def search_settings(self):
        return {
            "beam_size": self.beam_size, "max_length": self.max_length,
            "end_id": self.end_id, "length_penalty": self.length_penalty,
            "alpha": self.alpha, "coverage_penalty": self.coverage_penalty,
            "min_length": self.min_length, "max_length_a": self.max_length_a,
            "max_length_b": self.max_length_b,
            "no_repeat_ngram_size": self.no_repeat_ngram_size,
            "n_best": self.n_best, "early_stop": self.early_stop,
        }

    def call(self, start_ids, memory=None, state=None, step=None, source_lengths=None):
        if step is None:
            raise ValueError("`step` is required: the model's step function. Received: step=None")
        return beam_search(
            step, state or {}, memory or {}, start_ids, source_lengths=source_lengths,
            **self.search_settings(),
        )

    def get_config(self):
        return {**super().get_config(), **self.search_settings()}
