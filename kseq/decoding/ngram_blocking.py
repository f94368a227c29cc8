"""No-repeat-n-gram blocking over fixed-size sequence buffers."""

import tensorflow as tf

from kseq.decoding.search_common import NEG_INF


def banned_next_tokens(sequences, t, ngram_size, vocab_size):
    """Which tokens would repeat an n-gram already in each row.

    Args:
        sequences: int `[N, T]`, generated tokens at positions `< t`.
        t: scalar, the position about to be generated.
        ngram_size: `n >= 2`.
        vocab_size: `V`.

    Returns:
        bool `[N, V]`, True where emitting the token at `t` repeats an n-gram.
    """
    n = ngram_size
    rows, length = tf.shape(sequences)[0], tf.shape(sequences)[1]
    padded = tf.pad(sequences, [[0, 0], [0, n]])
    # The last n-1 generated tokens, the prefix of the n-gram being formed: [N, n-1].
    prefix_positions = tf.maximum(t - (n - 1) + tf.range(n - 1), 0)
    prefix = tf.gather(sequences, prefix_positions, axis=1)
    # match[:, j]: tokens j..j+n-2 equal the prefix.
    match = tf.ones([rows, length], tf.bool)
    for i in range(n - 1):
        shifted = padded[:, i : i + length]  # [N, T], shifted[:, j] = seq[:, j+i]
        match = tf.logical_and(match, tf.equal(shifted, prefix[:, i : i + 1]))
    # Only n-grams that ended before t count; and none exist until t >= n-1.
    complete = tf.range(length)[None, :] <= t - n
    match = tf.logical_and(match, complete)
    follower = padded[:, n - 1 : n - 1 + length]  # [N, T], the token after each match
    row_ids = tf.broadcast_to(tf.range(rows)[:, None], [rows, length])
    indices = tf.stack([tf.reshape(row_ids, [-1]), tf.reshape(follower, [-1])], axis=1)
    counts = tf.scatter_nd(indices, tf.reshape(tf.cast(match, tf.int32), [-1]), [rows, vocab_size])
    return counts > 0


def block_repeated_ngrams(log_probs, sequences, t, ngram_size):
    """Sets log-probabilities of n-gram-repeating tokens to -inf (no-op when size is 0)."""
    if not ngram_size:
        return log_probs
    vocab = tf.shape(log_probs)[-1]
    banned = banned_next_tokens(sequences, t, ngram_size, vocab)
    return tf.where(banned, NEG_INF, log_probs)
