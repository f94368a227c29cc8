"""Ancestral sampling with temperature, top-k and nucleus (top-p) filters."""

import random

import tensorflow as tf

from kseq.decoding.search_common import NEG_INF, check_search_arguments
from kseq.decoding.single_path_search import single_path_search


def filter_top_k(log_probs, top_k):
    """Keeps the `top_k` best tokens per row (0: all)."""
    if not top_k:
        return log_probs
    kth_best = tf.math.top_k(log_probs, k=top_k).values[:, -1:]
    return tf.where(log_probs < kth_best, NEG_INF, log_probs)


def filter_top_p(log_probs, top_p):
    """Keeps the smallest set of best tokens whose probability reaches `top_p`."""
    if top_p >= 1.0:
        return log_probs
    sorted_log_probs = tf.sort(log_probs, axis=-1, direction="DESCENDING")
    cumulative = tf.cumsum(tf.exp(sorted_log_probs), axis=-1, exclusive=True)
    # The worst token still needed: mass before it is below top_p.
    kept = tf.where(cumulative < top_p, sorted_log_probs, float("inf"))
    threshold = tf.reduce_min(kept, axis=-1, keepdims=True)
    return tf.where(log_probs < threshold, NEG_INF, log_probs)


# Python-level branches here are trace-time choices: keep AutoGraph out of them.
@tf.autograph.experimental.do_not_convert
def sample(
    step, state, memory, start_ids, *, max_length, end_id, temperature=1.0, top_k=0,
    top_p=1.0, seed=None, min_length=0, source_lengths=None, max_length_a=None,
    max_length_b=None, no_repeat_ngram_size=0, prompt_ids=None, prompt_lengths=None,
    prefill=None, state_shapes=None,
):
    """Draws one continuation per row; the same `seed` gives the same ids.

    Arguments as `greedy_search` (prompts and `state_shapes` included), plus
    `temperature > 0` (divides the logits), `top_k` (0: off), `top_p` in `(0, 1]`
    and an int `seed` (None: a fresh one; a scalar int tensor too, e.g. an exported
    model's input).
    Returns `(ids [B, T], scores [B], lengths [B])`, where `scores` sums the
    model's log-probabilities of the drawn tokens (before temperature and filters).

    Example:
    >>> import tensorflow as tf, kseq
    >>> def step(ids, state, memory, t):
    ...     return tf.math.log([[0.1, 0.2, 0.3, 0.4]] * 2), state
    >>> ids, _, _ = kseq.decoding.sample(step, {}, {}, tf.constant([0, 0]),
    ...     max_length=4, end_id=3, top_k=1, seed=7)
    >>> ids.numpy()[:, 0].tolist()  # top_k=1 always picks the best token
    [3, 3]
    """
    check_search_arguments(max_length=max_length, end_id=end_id, min_length=min_length)
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"`top_p` must be in (0, 1]. Received: top_p={top_p}")
    if temperature <= 0:
        raise ValueError(f"`temperature` must be > 0. Received: temperature={temperature}")
    if top_k < 0:
        raise ValueError(f"`top_k` must be >= 0. Received: top_k={top_k}")
    seed = random.randrange(2**31) if seed is None else (
        seed if tf.is_tensor(seed) else int(seed))

    def pick(logits, t):
        log_probs = tf.nn.log_softmax(logits / temperature, axis=-1)
        log_probs = filter_top_p(filter_top_k(log_probs, top_k), top_p)
        pair = tf.stack([tf.cast(seed, tf.int32), tf.cast(t, tf.int32)])
        drawn = tf.random.stateless_categorical(log_probs, 1, seed=pair, dtype=tf.int32)
        return drawn[:, 0]

    return single_path_search(
        step, state, memory, start_ids, pick, max_length=max_length, end_id=end_id,
        min_length=min_length, source_lengths=source_lengths, max_length_a=max_length_a,
        max_length_b=max_length_b, no_repeat_ngram_size=no_repeat_ngram_size,
        prompt_ids=prompt_ids, prompt_lengths=prompt_lengths, prefill=prefill,
        state_shapes=state_shapes,
    )
