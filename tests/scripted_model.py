"""A scripted step function: next-token probabilities looked up by prefix.

The state holds the prefix as a base-V code, so reordering beams must reorder it
correctly for results to come out right.
"""

import itertools

import numpy as np
import tensorflow as tf


class ScriptedModel:
    """`probabilities(prefix) -> [V]` defines the model; `step` follows the protocol."""

    def __init__(self, vocab_size, max_length, probabilities, dtype=tf.float32):
        self.vocab_size = vocab_size
        self.max_length = max_length
        table = np.zeros((max_length, vocab_size**max_length, vocab_size), "float64")
        for t in range(max_length):
            for prefix in itertools.product(range(vocab_size), repeat=t):
                table[t, self.code(prefix)] = probabilities(prefix)
        self.log_table = tf.constant(np.log(np.maximum(table, 1e-30)).astype("float32"))
        self.dtype = dtype
        self.calls = tf.Variable(0)

    def code(self, prefix):
        value = 0
        for token in prefix:
            value = value * self.vocab_size + token
        return value

    def initial_state(self, batch_size):
        return {"code": tf.zeros([batch_size], tf.int32)}

    def step(self, tokens, state, memory, t):
        self.calls.assign_add(1)
        code = tf.where(t > 0, state["code"] * self.vocab_size + tokens, state["code"])
        index = tf.stack([tf.fill(tf.shape(code), t), code], axis=1)
        logits = tf.gather_nd(self.log_table, index)
        return tf.cast(logits, self.dtype), {"code": code}

    def sequence_log_prob(self, sequence):
        total = 0.0
        for t, token in enumerate(sequence):
            total += float(self.log_table[t, self.code(sequence[:t]), token])
        return total


def random_model(vocab_size, max_length, seed, peaked=2.0):
    rng = np.random.default_rng(seed)
    cache = {}

    def probabilities(prefix):
        if prefix not in cache:
            logits = rng.normal(size=vocab_size) * peaked
            p = np.exp(logits)
            cache[prefix] = p / p.sum()
        return cache[prefix]

    return ScriptedModel(vocab_size, max_length, probabilities)


def exhaustive_search(model, end_id):
    """Every sequence that ends with `end_id` within max_length, best first."""
    results = []
    for length in range(1, model.max_length + 1):
        for body in itertools.product(
            [v for v in range(model.vocab_size) if v != end_id], repeat=length - 1
        ):
            sequence = body + (end_id,)
            results.append((model.sequence_log_prob(sequence), sequence))
    return sorted(results, key=lambda r: -r[0])


class PrefillingScriptedModel(ScriptedModel):
    """The same model with `prefill`: the prefix code of positions `< P` in one pass."""

    def prefill(self, inputs, state, memory):
        self.calls.assign_add(1)
        tokens = inputs[:, 1:]  # position 0's input is the start token, which step ignores
        width = tf.shape(tokens)[1]
        powers = tf.pow(self.vocab_size, tf.range(width - 1, -1, -1))  # [P-1]
        return {"code": tf.reduce_sum(tokens * powers[None, :], axis=1)}
