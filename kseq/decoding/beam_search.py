"""Beam search with finished/alive sets, length and coverage penalties, and early stop.

Shape letters: `B` batch, `K` beams, `N` = B·K, `T` `max_length`, `V` vocabulary,
`S` source length, `M` = `n_best`.

Ranking. Alive beams are ranked by raw summed log-probability. A beam that emits
the end token leaves the alive set and is scored `s / lp(L) + cp` (length
penalty, see `length_penalty.py`; `L` counts the end token; `cp` the coverage
term, `<= 0`). The `K` best finished hypotheses are kept.

Early stop. Log-probabilities are `<= 0`, so an alive beam's raw score `s` can
only fall. For `α >= 0`, `lp` is positive and non-decreasing in `L`, so every
extension of it scores at most `s / lp(L_max)` (and `cp <= 0` only lowers it).
When that bound for the best alive beam is no better than the `n_best`-th
finished score, no alive beam can enter the returned list and the row stops.
The bound needs `α >= 0`; early stop with `α < 0` is rejected.
"""

import tensorflow as tf

from kseq.decoding.length_penalty import (
    check_length_penalty,
    coverage_penalty_term,
    length_penalty_factor,
)
from kseq.decoding.ngram_blocking import block_repeated_ngrams
from kseq.decoding.prompts import Prompt, make_prompt
from kseq.decoding.row_compaction import maybe_compact, put_rows, tensor_leaves
from kseq.decoding.search_common import (
    NEG_INF,
    block_end_before_min_length,
    check_end_id,
    static_or_dynamic_batch,
    check_search_arguments,
    log_softmax_float32,
    loop_shapes,
    row_length_limits,
    tile_rows,
    write_column,
)


def check_beam_arguments(beam_size, n_best, length_penalty, alpha, early_stop, coverage_penalty):
    if beam_size < 1:
        raise ValueError(f"`beam_size` must be >= 1. Received: beam_size={beam_size}")
    if not 1 <= n_best <= beam_size:
        raise ValueError(
            f"`n_best` must be in [1, beam_size={beam_size}]. Received: n_best={n_best}"
        )
    check_length_penalty(length_penalty, alpha)
    if early_stop and length_penalty is not None and alpha < 0:
        raise ValueError(
            "Early stop is only exact for `alpha >= 0` (the length penalty must not "
            f"shrink with length). Pass early_stop=False. Received: alpha={alpha}"
        )
    if coverage_penalty < 0:
        raise ValueError(
            f"`coverage_penalty` must be >= 0. Received: coverage_penalty={coverage_penalty}"
        )


def _two_stage_top_k(candidates, k):
    """Best `k` of `[B, K, V]` scores: per beam first, then over beams.

    Returns `(scores [B, k], beam [B, k], token [B, k])`. Only `K·k` values
    reach the second stage, so a large vocabulary stays cheap. Ties go to the
    lower beam, then the lower token id.
    """
    beams, vocab = candidates.shape[1], candidates.shape[2]
    per_beam = min(k, vocab)
    values, tokens = tf.math.top_k(candidates, k=per_beam)  # [B, K, k']
    batch = tf.shape(candidates)[0]
    values = tf.reshape(values, [batch, beams * per_beam])  # [B, K·k']
    tokens = tf.reshape(tokens, [batch, beams * per_beam])
    best, position = tf.math.top_k(values, k=k)  # [B, k]
    return best, position // per_beam, tf.gather(tokens, position, batch_dims=1)


# Python-level branches here are trace-time choices: keep AutoGraph out of them.
@tf.autograph.experimental.do_not_convert
def beam_search(
    step, state, memory, start_ids, *, beam_size, max_length, end_id,
    length_penalty="fairseq", alpha=0.75, coverage_penalty=0.0, min_length=0,
    source_lengths=None, max_length_a=None, max_length_b=None, no_repeat_ngram_size=0,
    n_best=1, early_stop=True, prompt_ids=None, prompt_lengths=None, prefill=None,
    state_shapes=None, compact_finished_rows=False,
):
    """Beam search over the step protocol, in one `tf.while_loop`.

    `memory` is tiled to beams once and never reordered; `state` is reordered by
    a gather on its batch axis, so a step function never has to know about beams.

    Args:
        step: `step(token_ids [N], state, memory, t) -> (logits [N, V], state)`.
            With `coverage_penalty > 0` the returned state must hold
            `"attention"` `[N, S]` and `memory` a `"mask"` `[B, S]`.
        state, memory, start_ids: as in `greedy_search` (batch `B`, untiled).
        beam_size: `K >= 1`.
        max_length, end_id, min_length, source_lengths, max_length_a,
        max_length_b, no_repeat_ngram_size: as in `greedy_search`.
        length_penalty: `"fairseq"`, `"gnmt"` or None; `alpha` its exponent.
        coverage_penalty: `β >= 0` of the GNMT coverage term.
        n_best: hypotheses returned per row, `<= K`.
        early_stop: stop a row once no alive beam can enter its n-best list.
        prompt_ids, prompt_lengths, prefill: as in `greedy_search`; the length
            penalty counts generated tokens only.
        state_shapes: as in `greedy_search` (untiled); the state is reordered
            as it is, so a cache that grows in blocks keeps each step's gather
            as small as the cache so far.
        compact_finished_rows: stop computing finished sentences: once a quarter
            of the running sentences are done, the loop goes on with the others'
            `K` rows only (see `kseq.decoding.row_compaction`); the same ids and lengths,
            scores to float rounding.
            Every state and memory tensor must be batch first. Not for XLA.

    Returns:
        `(ids [B, M, T] int32, scores [B, M] float32, lengths [B, M] int32)` in
        score order. Finished ids end with `end_id`; positions after it hold the
        pad id 0. A row with fewer than `M` finished hypotheses is completed with
        its best alive beams (no end token; score `s / lp(L)`).

    Example:
    >>> import tensorflow as tf, kseq
    >>> def step(ids, state, memory, t):  # token 1 first, then the end token 2
    ...     probs = tf.where(t < 1, [.1, .6, .3], [.1, .1, .8])
    ...     return tf.math.log(tf.tile(probs[None], [tf.shape(ids)[0], 1])), state
    >>> ids, scores, lengths = kseq.decoding.beam_search(step, {}, {}, tf.constant([0]),
    ...     beam_size=2, max_length=4, end_id=2, length_penalty=None)
    >>> ids.numpy()[0, 0].tolist(), lengths.numpy()[0].tolist()
    ([1, 2, 0, 0], [2])
    """
    check_search_arguments(max_length=max_length, end_id=end_id, min_length=min_length)
    check_beam_arguments(beam_size, n_best, length_penalty, alpha, early_stop, coverage_penalty)
    K = beam_size
    start_ids = tf.cast(start_ids, tf.int32)
    batch = static_or_dynamic_batch(start_ids)
    limits = row_length_limits(batch, max_length, memory, source_lengths, max_length_a, max_length_b)
    use_coverage = coverage_penalty > 0
    if use_coverage and not (isinstance(memory, dict) and "mask" in memory):
        raise ValueError(
            "`coverage_penalty > 0` needs memory['mask'] [B, S]. "
            f"Received: memory keys={sorted(memory) if isinstance(memory, dict) else memory}"
        )
    source_mask = memory["mask"][:, None, :] if use_coverage else None  # [B, 1, S]
    prompt = make_prompt(prompt_ids, prompt_lengths, batch, max_length)
    t0, first_tokens = tf.constant(0), start_ids
    first_columns = tf.zeros([batch, max_length], tf.int32)
    if prompt is not None and prefill is not None:  # on B rows, before tiling to beams
        t0, first_tokens, state, first_columns = prompt.prefill(prefill, start_ids, state,
                                                                memory)
    memory = tile_rows(memory, K)
    state = tile_rows(state, K)

    def penalise(raw, lengths, coverage, prompt, source_mask):
        generated = lengths if prompt is None else prompt.generated(lengths)
        score = raw / length_penalty_factor(generated, length_penalty, alpha)
        if use_coverage:
            score += coverage_penalty_term(coverage, source_mask, coverage_penalty)
        return score

    first_beam_only = tf.concat([[0.0], tf.fill([K - 1], NEG_INF)], axis=0)
    source_width = tf.shape(source_mask)[2] if use_coverage else 1
    # The outputs, per sentence: alive sequences [B, K, T], raw scores [B, K] and
    # coverage [B, K, S'], the K best finished sequences, scores and lengths, steps taken.
    finals = (tf.tile(first_columns[:, None, :], [1, K, 1]),
              tf.tile(first_beam_only[None], [batch, 1]),
              tf.zeros([batch, K, source_width], tf.float32),
              tf.zeros([batch, K, max_length], tf.int32), tf.fill([batch, K], NEG_INF),
              tf.zeros([batch, K], tf.int32), tf.fill([batch], t0))
    done = t0 >= limits
    most_generated = limits if prompt is None else prompt.generated(limits)
    # Per-sentence values the body reads; compaction keeps them with their sentences.
    sentences_in = {"limits": limits,
                    "best_lp": length_penalty_factor(most_generated, length_penalty, alpha),
                    **({"source_mask": source_mask} if use_coverage else {}),
                    **({} if prompt is None else {"prompt": prompt.tensors()})}
    memory_leaves, rebuild_memory = tensor_leaves(memory)

    def body(t, rows, done, finals, results, sentences_in, tokens, state, memory_leaves):
        if compact_finished_rows:  # whole sentences: their K rows of tokens, state, memory
            done, rows, results, finals, sentences_in, (tokens, state, memory_leaves) = (
                maybe_compact(done, rows, results, finals, sentences_in,
                              (tokens, state, memory_leaves), group=K))
        # Here `B` counts the running sentences (fewer than the batch once compacted).
        running = tf.shape(done)[0] if compact_finished_rows else batch
        alive_seq, alive_lp, alive_cov, fin_seq, fin_score, fin_len, steps_taken = finals
        row_prompt = None if prompt is None else Prompt.from_tensors(sentences_in["prompt"],
                                                                     max_length)
        logits, new_state = step(tokens, state, rebuild_memory(memory_leaves), t)
        vocab = logits.shape[-1]
        check_end_id(end_id, vocab)
        log_probs = log_softmax_float32(logits)  # [N, V]
        # min_length counts generated tokens: a row's prompt comes first.
        position = t if prompt is None else tf.repeat(t - row_prompt.lengths, K)[:, None]
        log_probs = block_end_before_min_length(log_probs, position, min_length, end_id)
        flat_seq = tf.reshape(alive_seq, [-1, max_length])  # [N, T]
        log_probs = block_repeated_ngrams(log_probs, flat_seq, t, no_repeat_ngram_size)
        # A static V keeps shapes known for the top-k stages (and for XLA).
        log_probs = tf.reshape(log_probs, [running, K, vocab or -1])  # [B, K, V]
        if prompt is not None:  # a forced row's only candidate is its prompt token, unscored
            is_forced, forced_token = row_prompt.forced(t)
            only_prompt = tf.where(tf.equal(tf.range(tf.shape(log_probs)[2])[None, :],
                                            forced_token[:, None]), 0.0, NEG_INF)  # [B, V]
            log_probs = tf.where(is_forced[:, None, None], only_prompt[:, None, :], log_probs)
        candidates = alive_lp[:, :, None] + log_probs
        # 2K candidates: even if K of them end, K remain to stay alive.
        cand_lp, cand_beam, cand_token = _two_stage_top_k(candidates, min(2 * K, K * vocab))
        cand_seq = write_column(tf.gather(alive_seq, cand_beam, batch_dims=1), t, cand_token)
        cand_cov = alive_cov
        if use_coverage:
            attention = tf.reshape(tf.cast(new_state["attention"], tf.float32),
                                   [running, K, -1])  # [B, K, S]
            cand_cov = tf.gather(alive_cov + attention, cand_beam, batch_dims=1)
        is_end = tf.equal(cand_token, end_id)
        if prompt is not None:
            is_end &= tf.logical_not(is_forced)[:, None]

        # Alive: the K best candidates that did not end (raw score).
        alive_candidates = tf.where(is_end, NEG_INF, cand_lp)
        next_lp, pick = tf.math.top_k(alive_candidates, k=K)  # [B, K]
        next_seq = tf.gather(cand_seq, pick, batch_dims=1)
        next_tokens = tf.gather(cand_token, pick, batch_dims=1)
        parent = tf.gather(cand_beam, pick, batch_dims=1)
        next_cov = tf.gather(cand_cov, pick, batch_dims=1) if use_coverage else alive_cov
        beam_rows = tf.range(running)[:, None] * K + parent  # [B, K] rows of the N-sized state
        next_state = tf.nest.map_structure(
            lambda s: tf.gather(s, tf.reshape(beam_rows, [-1])), new_state
        )

        # Finished: merge the ended candidates into the K best so far.
        length = tf.fill(tf.shape(cand_lp), t + 1)
        ended_score = tf.where(is_end, penalise(cand_lp, length, cand_cov, row_prompt,
                                                sentences_in.get("source_mask")), NEG_INF)
        pool_score = tf.concat([fin_score, ended_score], axis=1)  # [B, 3K]
        next_fin_score, keep = tf.math.top_k(pool_score, k=K)
        next_fin_seq = tf.gather(tf.concat([fin_seq, cand_seq], 1), keep, batch_dims=1)
        next_fin_len = tf.gather(tf.concat([fin_len, length], 1), keep, batch_dims=1)

        # Rows already done keep everything as it was.
        frozen = done[:, None]
        frozen3 = done[:, None, None]
        alive_seq = tf.where(frozen3, alive_seq, next_seq)
        alive_lp = tf.where(frozen, alive_lp, next_lp)
        alive_cov = tf.where(frozen3, alive_cov, next_cov)
        fin_seq = tf.where(frozen3, fin_seq, next_fin_seq)
        fin_score = tf.where(frozen, fin_score, next_fin_score)
        fin_len = tf.where(frozen, fin_len, next_fin_len)
        steps_taken += tf.cast(tf.logical_not(done), tf.int32)

        finished_row = t + 1 >= sentences_in["limits"]
        if early_stop:
            bound = alive_lp[:, 0] / sentences_in["best_lp"]
            finished_row |= fin_score[:, n_best - 1] >= bound
        done = done | finished_row
        finals = (alive_seq, alive_lp, alive_cov, fin_seq, fin_score, fin_len, steps_taken)
        return (t + 1, rows, done, finals, results, sentences_in,
                tf.reshape(next_tokens, [-1]), next_state, memory_leaves)

    def cond(t, rows, done, *loop_vars):
        return tf.logical_and(t < max_length, tf.logical_not(tf.reduce_all(done)))

    # `rows`: each running row's batch row; `results`: the outputs of the rows that
    # compaction let go. Without compaction both keep their first values.
    loop_vars = (t0, tf.range(batch), done, finals, finals, sentences_in,
                 tf.repeat(first_tokens, K), state, memory_leaves)
    compacted = (1, 2, 3, 5, 6, 7, 8) if compact_finished_rows else ()
    _, rows, _, finals, results, *_ = tf.while_loop(
        cond, body, loop_vars, maximum_iterations=max_length,
        shape_invariants=loop_shapes(loop_vars, 7, state_shapes, compacted))
    if compact_finished_rows:
        finals = put_rows(results, rows, finals)
    alive_seq, alive_lp, alive_cov, fin_seq, fin_score, fin_len, steps_taken = finals

    alive_len = tf.tile(steps_taken[:, None], [1, K])
    alive_score = penalise(alive_lp, alive_len, alive_cov, prompt, source_mask)
    return _fill_with_alive(
        n_best, K, (fin_seq, fin_score, fin_len), (alive_seq, alive_score, alive_len)
    )


def _fill_with_alive(n_best, K, finished, alive):
    """Top `n_best` finished hypotheses, completed by the best alive beams when short."""
    fin_seq, fin_score, fin_len = finished
    alive_seq, alive_score, alive_len = alive
    finished_count = tf.reduce_sum(tf.cast(fin_score > NEG_INF, tf.int32), axis=1)  # [B]
    slots = tf.range(n_best)[None, :]  # [1, M]
    # Slot j takes finished j when it exists, else alive j - finished_count.
    source = tf.where(slots < finished_count[:, None], slots, K + slots - finished_count[:, None])
    ids = tf.gather(tf.concat([fin_seq, alive_seq], 1), source, batch_dims=1)
    scores = tf.gather(tf.concat([fin_score, alive_score], 1), source, batch_dims=1)
    lengths = tf.gather(tf.concat([fin_len, alive_len], 1), source, batch_dims=1)
    return ids, scores, lengths
