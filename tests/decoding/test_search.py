import math

import numpy as np
import pytest
import tensorflow as tf

import kseq
from kseq.decoding import beam_search, greedy_search, sample
from scripted_model import ScriptedModel, exhaustive_search, random_model

PAD, A, B, C, EOS = range(5)


def notes_probabilities(prefix):
    """The source notes' example: greedy finds ABC<eos> (0.048), beam ACB<eos> (0.054)."""
    table = {
        (): {A: 0.5, B: 0.2, C: 0.2, EOS: 0.05, PAD: 0.05},
        (A,): {B: 0.4, C: 0.3, A: 0.15, EOS: 0.05, PAD: 0.1},
        (A, B): {C: 0.4, A: 0.15, B: 0.15, EOS: 0.15, PAD: 0.15},
        (A, B, C): {EOS: 0.6, A: 0.1, B: 0.1, C: 0.1, PAD: 0.1},
        (A, C): {B: 0.6, A: 0.1, C: 0.1, EOS: 0.1, PAD: 0.1},
        (A, C, B): {EOS: 0.6, A: 0.1, B: 0.1, C: 0.1, PAD: 0.1},
    }
    probs = table.get(tuple(prefix))
    if probs is None:
        return np.full(5, 0.2)
    return np.array([probs[v] for v in range(5)])


NOTES = ScriptedModel(5, 4, notes_probabilities)


def run_beam(model, batch=1, **kwargs):
    settings = dict(beam_size=2, max_length=model.max_length, end_id=EOS, length_penalty=None)
    settings.update(kwargs)
    return beam_search(model.step, model.initial_state(batch), {}, tf.zeros([batch], tf.int32),
                       **settings)


def test_notes_example_greedy_and_beam():
    best = exhaustive_search(NOTES, EOS)[0]
    assert best[1] == (A, C, B, EOS) and math.exp(best[0]) == pytest.approx(0.054)
    ids, scores, lengths = greedy_search(
        NOTES.step, NOTES.initial_state(1), {}, tf.zeros([1], tf.int32), max_length=4, end_id=EOS
    )
    assert ids.numpy()[0].tolist() == [A, B, C, EOS]
    assert math.exp(float(scores[0])) == pytest.approx(0.048, rel=1e-5)
    assert lengths.numpy().tolist() == [4]


def test_greedy_scores_are_log_softmax_even_for_huge_or_masked_logits():
    """The score's log-sum-exp subtracts the row maximum: no overflow at logits ~1e4,
    and a token a model masks with -inf (finite maximum) leaves the score finite."""
    rows = tf.constant([[1e4, 1e4 - 1.0, 1e4 - 2.0, 1e4 - 3.0],
                        [2.0, float("-inf"), 0.5, 1.0]], tf.float32)

    def step(ids, state, memory, t):
        return rows, state

    ids, scores, _ = greedy_search(step, {}, {}, tf.zeros([2], tf.int32), max_length=1, end_id=3)
    expected = [tf.nn.log_softmax(rows[i]).numpy()[ids[i, 0]] for i in range(2)]
    np.testing.assert_allclose(scores.numpy(), expected, rtol=1e-6)
    assert np.all(np.isfinite(scores.numpy()))
    ids, scores, lengths = run_beam(NOTES)
    assert ids.numpy()[0, 0].tolist() == [A, C, B, EOS]
    assert math.exp(float(scores[0, 0])) == pytest.approx(0.054, rel=1e-5)
    assert scores.dtype == tf.float32


@pytest.mark.parametrize("vocab, length, seed", [(3, 3, 0), (4, 3, 1), (4, 4, 2), (5, 3, 3), (5, 4, 4)])
@pytest.mark.parametrize("early_stop", [True, False])
def test_wide_beam_equals_exhaustive_search(vocab, length, seed, early_stop):
    model = random_model(vocab, length, seed)
    end_id = vocab - 1
    width = (vocab - 1) ** (length - 1) + 1
    n_best = min(width, 4)
    ids, scores, lengths = run_beam(
        model, beam_size=width, end_id=end_id, n_best=n_best, early_stop=early_stop
    )
    oracle = exhaustive_search(model, end_id)[:n_best]
    np.testing.assert_allclose(scores.numpy()[0], [s for s, _ in oracle], atol=1e-4)
    for row, (_, sequence) in zip(ids.numpy()[0], oracle):
        assert tuple(row[: len(sequence)]) == sequence
        assert np.all(row[len(sequence):] == 0)
    assert np.all(np.diff(scores.numpy()[0]) <= 1e-6)  # score order
    assert lengths.numpy()[0].tolist() == [len(s) for _, s in oracle]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_early_stop_gives_the_same_results(seed):
    model = random_model(5, 4, seed + 10, peaked=1.0)
    for penalty, alpha in [(None, 0.0), ("fairseq", 0.75), ("gnmt", 1.0)]:
        on = run_beam(model, batch=1, beam_size=3, n_best=2, length_penalty=penalty, alpha=alpha)
        off = run_beam(model, batch=1, beam_size=3, n_best=2, length_penalty=penalty, alpha=alpha,
                       early_stop=False)
        for a, b in zip(on, off):
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6)


def test_early_stop_takes_effect():
    def probabilities(prefix):
        return np.array([0.0025, 0.0025, 0.0025, 0.0025, 0.99])  # ends at once

    model = ScriptedModel(5, 4, probabilities)
    model.calls.assign(0)
    run_beam(model, max_length=4)
    assert int(model.calls.numpy()) == 1  # traced once: one eager call per iteration
    tf_search = tf.function(lambda: run_beam(model, max_length=4))
    model.calls.assign(0)
    tf_search()
    assert 1 <= int(model.calls.numpy()) < 4


def length_penalty_model():
    """Finished: <eos> (raw -1.0), X <eos> (-1.1), Y Y Y <eos> (-1.8); all else far worse."""
    X, Y = 1, 2
    p_end = math.exp(-1.0)
    p_x = math.exp(-1.1) / 0.9

    def probabilities(prefix):
        prefix = tuple(prefix)
        if prefix == ():
            rest = 1 - p_end - p_x - 0.25
            return np.array([rest / 2, p_x, 0.25, rest / 2, p_end])
        if prefix == (X,):
            return np.array([0.025, 0.025, 0.025, 0.025, 0.9])
        if prefix in [(Y,), (Y, Y)]:
            return np.array([0.025, 0.025, 0.9, 0.025, 0.025])
        if prefix == (Y, Y, Y):
            tail = math.exp(-1.8 - math.log(0.25) - 2 * math.log(0.9))
            return np.array([(1 - tail) / 4] * 4 + [tail])
        return np.array([0.01, 0.01, 0.01, 0.01, 0.96])

    return ScriptedModel(5, 4, probabilities)


@pytest.mark.parametrize(
    "penalty, expected_sequence, expected_score",
    [
        (None, [EOS, 0, 0, 0], -1.0),
        ("gnmt", [1, EOS, 0, 0], -1.1 / (7 / 6)),
        ("fairseq", [2, 2, 2, EOS], -1.8 / 4),
    ],
)
def test_length_penalties_pick_different_hypotheses(penalty, expected_sequence, expected_score):
    ids, scores, _ = run_beam(length_penalty_model(), beam_size=4, length_penalty=penalty, alpha=1.0)
    assert ids.numpy()[0, 0].tolist() == expected_sequence
    assert float(scores[0, 0]) == pytest.approx(expected_score, abs=1e-4)


def test_graph_has_a_while_loop_and_does_not_grow_with_max_length():
    counts = []
    for max_length in (8, 64):
        model = random_model(3, 2, 0)
        table = model.log_table

        def step(tokens, state, memory, t):
            return tf.gather(table[0], tf.zeros_like(tokens)), state

        fn = tf.function(lambda start: beam_search(
            step, {}, {}, start, beam_size=3, max_length=max_length, end_id=2))
        graph_def = fn.get_concrete_function(tf.TensorSpec([None], tf.int32)).graph.as_graph_def()
        ops = [n.op for n in graph_def.node] + [
            n.op for f in graph_def.library.function for n in f.node_def]
        assert "While" in ops or "StatelessWhile" in ops
        counts.append(len(ops))
    assert counts[0] == counts[1]


def test_finished_beams_never_extend_and_pad_after_end():
    model = random_model(4, 4, 5, peaked=1.0)
    ids, _, lengths = run_beam(model, beam_size=3, n_best=3, end_id=3)
    for row, length in zip(ids.numpy()[0], lengths.numpy()[0]):
        ends = np.flatnonzero(row == 3)
        if len(ends):
            assert ends[0] == length - 1 and np.all(row[length:] == 0)


def test_min_length_blocks_early_end():
    ids, _, lengths = run_beam(length_penalty_model(), beam_size=4, min_length=3)
    assert lengths.numpy()[0, 0] == 4
    ids, _, lengths = greedy_search(
        NOTES.step, NOTES.initial_state(1), {}, tf.zeros([1], tf.int32), max_length=4, end_id=EOS,
        min_length=4)
    assert EOS not in ids.numpy()[0].tolist()
    with pytest.raises(ValueError, match="max_length"):
        run_beam(NOTES, max_length=2, min_length=3)


def test_no_repeat_ngram_never_repeats():
    def loves_token_one(prefix):
        return np.array([0.05, 0.6, 0.2, 0.1, 0.05])

    model = ScriptedModel(5, 5, loves_token_one)
    for n in (2,):
        ids, _, _ = run_beam(model, beam_size=2, max_length=5, no_repeat_ngram_size=n, n_best=2)
        for row in ids.numpy()[0]:
            grams = [tuple(row[i:i + n]) for i in range(len(row) - n + 1) if EOS not in row[i:i + n]
                     and 0 not in row[i:i + n]]
            assert len(grams) == len(set(grams)), row
        ids, _, _ = greedy_search(model.step, model.initial_state(1), {}, tf.zeros([1], tf.int32),
                                  max_length=5, end_id=EOS, no_repeat_ngram_size=n)
        row = ids.numpy()[0]
        grams = [tuple(row[i:i + n]) for i in range(4) if 0 not in row[i:i + n]]
        assert len(grams) == len(set(grams)), row
        assert row[:2].tolist() == [1, 1]


def test_sampling_seed_and_top_k():
    model = random_model(5, 4, 7, peaked=0.5)
    start = tf.zeros([16], tf.int32)
    run = lambda **kw: sample(model.step, model.initial_state(16), {}, start, max_length=4,
                              end_id=4, **kw)[0].numpy()
    np.testing.assert_array_equal(run(seed=3), run(seed=3))
    assert not np.array_equal(run(seed=3), run(seed=4))
    first = run(seed=5, top_k=2)[:, 0]
    best_two = np.argsort(-model.log_table.numpy()[0, 0])[:2]
    assert set(first.tolist()) <= set(best_two.tolist())
    assert set(run(seed=5, top_p=1e-6)[:, 0].tolist()) == {best_two[0]}


@pytest.mark.slow
def test_xla_and_plain_graph_give_identical_ids():
    model = random_model(5, 4, 8, peaked=1.0)
    start = tf.zeros([3], tf.int32)
    search = lambda s: run_beam(model, batch=3, beam_size=3, n_best=2)
    plain = tf.function(search)(start)
    compiled = tf.function(search, jit_compile=True)(start)
    np.testing.assert_array_equal(plain[0].numpy(), compiled[0].numpy())
    np.testing.assert_allclose(plain[1].numpy(), compiled[1].numpy(), atol=1e-5)
    greedy = lambda s: greedy_search(model.step, model.initial_state(3), {}, s, max_length=4,
                                     end_id=4)
    np.testing.assert_array_equal(tf.function(greedy)(start)[0].numpy(),
                                  tf.function(greedy, jit_compile=True)(start)[0].numpy())


def test_rows_are_independent_and_empty_batch_works():
    model = random_model(5, 4, 9, peaked=1.0)
    batch = run_beam(model, batch=4, beam_size=3)
    alone = run_beam(model, batch=1, beam_size=3)
    np.testing.assert_array_equal(batch[0].numpy()[2], alone[0].numpy()[0])
    ids, scores, lengths = run_beam(model, batch=0, beam_size=3, n_best=2)
    assert ids.shape == (0, 2, 4) and scores.shape == (0, 2)


def test_per_row_max_length_from_source_lengths():
    def never_ends(prefix):
        return np.array([0.1, 0.5, 0.2, 0.15, 0.05])

    model = ScriptedModel(5, 5, never_ends)
    ids, scores, lengths = run_beam(model, batch=2, max_length=5, source_lengths=tf.constant([1, 3]),
                                    max_length_a=1.0, max_length_b=1.0)
    assert lengths.numpy()[:, 0].tolist() == [2, 4]
    assert np.all(ids.numpy()[0, 0, 2:] == 0)


def test_bfloat16_logits_give_float32_scores():
    model = random_model(4, 3, 11)
    model.dtype = tf.bfloat16
    ids, scores, _ = run_beam(model, end_id=3)
    assert scores.dtype == tf.float32


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"beam_size": 0}, "beam_size"),
        ({"beam_size": 2, "n_best": 3}, "n_best"),
        ({"end_id": 9}, "end_id"),
        ({"max_length": 2, "min_length": 3}, "max_length"),
        ({"length_penalty": "fairseq", "alpha": -0.5}, "alpha"),
        ({"length_penalty": "bogus"}, "length_penalty"),
    ],
)
def test_bad_beam_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        run_beam(NOTES, **kwargs)


def test_bad_top_p():
    with pytest.raises(ValueError, match="top_p"):
        sample(NOTES.step, NOTES.initial_state(1), {}, tf.zeros([1], tf.int32), max_length=4,
               end_id=EOS, top_p=0.0)


def test_beam_search_decoder_layer():
    layer = kseq.decoding.BeamSearchDecoder(beam_size=2, max_length=4, end_id=EOS, length_penalty=None)
    assert kseq.decoding.BeamSearchDecoder.from_config(layer.get_config()).get_config() == layer.get_config()
    ids, scores, _ = layer(tf.zeros([1], tf.int32), memory={}, state=NOTES.initial_state(1),
                           step=NOTES.step)
    assert ids.numpy()[0, 0].tolist() == [A, C, B, EOS]


def test_ties_are_broken_deterministically_towards_lower_ids():
    uniform = ScriptedModel(5, 3, lambda prefix: np.full(5, 0.2))
    runs = [run_beam(uniform, beam_size=3, n_best=3, end_id=4)[0].numpy() for _ in range(2)]
    np.testing.assert_array_equal(runs[0], runs[1])
    # All continuations tie: the end token finishes first; alive ties keep the lowest ids.
    assert runs[0][0, 0].tolist() == [4, 0, 0]
