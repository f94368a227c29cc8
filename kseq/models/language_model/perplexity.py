"""Perplexity of a language model over texts: per-token cross-entropy over real tokens.

Shape letters: `B` batch, `T` sequence length, `V` vocabulary.
"""

import math

import numpy as np
import tensorflow as tf  # a tf.function per model (the forward pass and the sums)

from kseq.models.evaluation_result import EvaluationResult
from kseq.models.preprocessors.preprocessor import LENGTH_STEP


class PerplexityResult(EvaluationResult):
    """`evaluate` / `perplexity` of a `LanguageModel`: an `EvaluationResult` with
    `cross_entropy` (nats per real token: each text's tokens and its end token),
    `perplexity` (`exp(cross_entropy)`) and `tokens` (how many were scored).

    Example:
    >>> result = PerplexityResult(nats=120.0, tokens=40, texts=5)
    >>> round(result.cross_entropy, 3), round(result.perplexity, 2), result.tokens
    (3.0, 20.09, 40)
    >>> result.summary()
    'perplexity 20.09 cross-entropy 3.0000 nats/token (40 tokens, 5 texts)'
    """

    def __init__(self, nats, tokens, texts):
        entropy = nats / tokens if tokens else float("nan")
        super().__init__(
            {"cross_entropy": entropy, "perplexity": math.exp(entropy) if tokens else
             float("nan"), "tokens": int(tokens), "texts": int(texts)},
            headline=[("perplexity", "perplexity", ".2f"),
                      ("cross-entropy", "cross_entropy", ".4f")],
            count="texts")

    @property
    def cross_entropy(self):
        return self.metrics["cross_entropy"]

    @property
    def perplexity(self):
        return self.metrics["perplexity"]

    @property
    def tokens(self):
        return self.metrics["tokens"]

    def summary(self):
        return (f"perplexity {self.perplexity:.2f} cross-entropy {self.cross_entropy:.4f} "
                f"nats/token ({self.tokens} tokens, {self.metrics['texts']} texts)")


class _BatchNats:
    """`(decoder_ids [B, T], labels [B, T]) -> (summed nats, real tokens)` of one model, as
    a callable object of its own (see `kseq.models.task._InferenceCall`)."""

    def __init__(self, model):
        self.model = model

    def __call__(self, decoder_ids, labels):
        logits = self.model({"decoder_ids": decoder_ids}, training=False)  # [B, T, V]
        log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)
        picked = tf.gather(log_probs, tf.maximum(labels, 0), batch_dims=2)  # [B, T]
        real = tf.not_equal(labels, 0)
        return (-tf.reduce_sum(tf.where(real, picked, 0.0)),
                tf.reduce_sum(tf.cast(real, tf.int32)))


def corpus_nats(model, pairs, batch_size=64):
    """`(nats, tokens)` of `(category, text)` pairs under `model`, in batches sorted by
    length (widths padded to a multiple of 8: few traces)."""
    forward = model.__dict__.get("_batch_nats")
    if forward is None:
        spec = tf.TensorSpec([None, None], tf.int32)
        forward = tf.function(_BatchNats(model), input_signature=[spec, spec], autograph=False,
                              jit_compile=False)
        model.__dict__["_batch_nats"] = forward
    preprocessor = model.preprocessor
    tokenize = preprocessor.traced("__call__")
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][1]))
    nats, tokens = 0.0, 0
    for begin in range(0, len(order), batch_size):
        chunk = [pairs[i] for i in order[begin : begin + batch_size]]
        features, labels = tokenize(tf.constant([c for c, _ in chunk], tf.string),
                                    tf.constant([t for _, t in chunk], tf.string))
        width = int(labels.bounding_shape()[1])
        width = min(-(-width // LENGTH_STEP) * LENGTH_STEP, preprocessor.max_length)
        shape = [len(chunk), width]
        ids = tf.cast(features["decoder_ids"].to_tensor(shape=shape), tf.int32)
        batch_nats, batch_tokens = forward(ids, tf.cast(labels.to_tensor(shape=shape),
                                                        tf.int32))
        nats += float(np.float64(batch_nats.numpy()))
        tokens += int(batch_tokens.numpy())
    return nats, tokens
