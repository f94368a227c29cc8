"""Greedy search: the most likely token at every step."""

import tensorflow as tf

from kseq.decoding.search_common import check_search_arguments
from kseq.decoding.single_path_search import single_path_search


# Python-level branches here are trace-time choices: keep AutoGraph out of them.
@tf.autograph.experimental.do_not_convert
def greedy_search(
    step, state, memory, start_ids, *, max_length, end_id, min_length=0,
    source_lengths=None, max_length_a=None, max_length_b=None, no_repeat_ngram_size=0,
    prompt_ids=None, prompt_lengths=None, prefill=None, state_shapes=None,
    compact_finished_rows=False,
):
    """Greedy decoding over the step protocol, in one `tf.while_loop`.

    Args:
        step: `step(token_ids [B], state, memory, t) -> (logits [B, V], state)`.
        state: nested dict of batch-first tensors with fixed shapes.
        memory: nested dict of batch-first tensors (read-only).
        start_ids: int `[B]`, the first input token of each row.
        max_length: most tokens to generate, `T`.
        end_id: the end token; a row stops after emitting it.
        min_length: the end token is blocked before this many tokens.
        source_lengths, max_length_a, max_length_b: per-row limit
            `min(max_length, floor(a·source_length + b))`; source lengths default
            to the sum of `memory["mask"]`.
        no_repeat_ngram_size: forbid repeating any n-gram of this size (0: off).
        prompt_ids, prompt_lengths, prefill: tokens every output starts with,
            `[B, P]` right-padded and `[B]`, not scored; `prefill` runs the
            positions all rows share in one pass (see `kseq.decoding.prompts`).
        state_shapes: optional specs mirroring `state` (e.g. `keras.KerasTensor`s)
            whose None axes may change from step to step (a KV cache that grows
            in blocks); None: every state tensor keeps its shape. Not for XLA.
        compact_finished_rows: stop computing finished rows: once a quarter of
            the running rows are done, the loop goes on with the others only
            (see `kseq.decoding.row_compaction`); the same ids and lengths, scores
            to float rounding (an ulp or a few). Every state
            and memory tensor must be batch first. Not for XLA (the batch axis
            of the loop values changes).

    Returns:
        `(ids [B, T] int32, scores [B] float32, lengths [B] int32)`. A finished
        row ends with `end_id`; positions after it hold the pad id 0. `scores`
        is the summed log-probability; `lengths` counts the end token.

    Example:
    >>> import tensorflow as tf, kseq
    >>> def step(ids, state, memory, t):  # always prefers token 2, then the end (3)
    ...     logits = tf.where(t < 2, tf.one_hot([2, 2], 4), tf.one_hot([3, 3], 4))
    ...     return logits * 5.0, state
    >>> ids, scores, lengths = kseq.decoding.greedy_search(
    ...     step, {}, {}, tf.constant([1, 1]), max_length=5, end_id=3)
    >>> ids.numpy()[0].tolist(), lengths.numpy().tolist()
    ([2, 2, 3, 0, 0], [3, 3])
    """
    check_search_arguments(max_length=max_length, end_id=end_id, min_length=min_length)
    return single_path_search(
        step, state, memory, start_ids,
        lambda logits, t: tf.argmax(logits, axis=-1, output_type=tf.int32),
        max_length=max_length, end_id=end_id, min_length=min_length,
        source_lengths=source_lengths, max_length_a=max_length_a,
        max_length_b=max_length_b, no_repeat_ngram_size=no_repeat_ngram_size,
        prompt_ids=prompt_ids, prompt_lengths=prompt_lengths, prefill=prefill,
        state_shapes=state_shapes, compact_finished_rows=compact_finished_rows,
    )
