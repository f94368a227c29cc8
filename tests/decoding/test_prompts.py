"""Prompts: every output starts with its prompt, unscored, and the search continues it —
greedy, sampling and beam search, with and without a one-pass prefill."""

import itertools

import numpy as np
import pytest
import tensorflow as tf

import kseq
from scripted_model import PrefillingScriptedModel, random_model

V, T, END = 4, 5, 3
PROMPTS = [[1, 2], [2, 0], [0, 0]]  # right-padded
LENGTHS = [2, 1, 0]


def scripted(prefill, seed=3):
    base = random_model(V, T, seed)
    if not prefill:
        return base
    model = PrefillingScriptedModel.__new__(PrefillingScriptedModel)
    model.__dict__.update(base.__dict__)
    model.calls = tf.Variable(0)
    return model


def run(search, model, **options):
    return search(model.step, model.initial_state(3), {}, tf.zeros([3], tf.int32),
                  max_length=T, end_id=END, prompt_ids=tf.constant(PROMPTS),
                  prompt_lengths=tf.constant(LENGTHS), prefill=getattr(model, "prefill", None),
                  **options)


def best_continuation(model, prompt):
    """Exhaustive: the most likely ended output that starts with `prompt`, and its score."""
    best = None
    for length in range(1, T - len(prompt) + 1):
        for body in itertools.product([v for v in range(V) if v != END], repeat=length - 1):
            sequence = tuple(prompt) + body + (END,)
            score = model.sequence_log_prob(sequence) - model.sequence_log_prob(tuple(prompt))
            if best is None or score > best[0]:
                best = (score, sequence)
    return best


@pytest.mark.parametrize("prefill", [False, True], ids=["forced", "prefilled"])
def test_greedy_keeps_each_prompt_and_scores_only_what_it_adds(prefill):
    model = scripted(prefill)
    ids, scores, lengths = run(kseq.decoding.greedy_search, model)
    for row, (prompt, n) in enumerate(zip(PROMPTS, LENGTHS)):
        out = ids.numpy()[row][: lengths.numpy()[row]].tolist()
        assert out[:n] == prompt[:n]
        expected = model.sequence_log_prob(tuple(out)) - model.sequence_log_prob(tuple(out[:n]))
        np.testing.assert_allclose(scores.numpy()[row], expected, rtol=1e-5)
        prefix = list(prompt[:n])  # greedy by hand from the prompt on
        while len(prefix) < T and (len(prefix) == n or prefix[-1] != END):
            code = model.code(prefix)
            prefix.append(int(np.argmax(model.log_table[len(prefix), code])))
        assert out == prefix[: len(out)]


def test_prefill_replaces_the_shared_steps_and_changes_no_result():
    plain, filled = scripted(False), scripted(True)
    want = [x.numpy() for x in run(kseq.decoding.greedy_search, plain)]
    got = [x.numpy() for x in run(kseq.decoding.greedy_search, filled)]
    for a, b in zip(want, got):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    # min(lengths) is 0 here: one prefill call of width 0, then the same steps.
    assert int(filled.calls.numpy()) == int(plain.calls.numpy()) + 1


def test_prefill_starts_the_loop_after_the_shared_prompt():
    filled = scripted(True)
    start = tf.zeros([2], tf.int32)
    ids, _, lengths = kseq.decoding.greedy_search(
        filled.step, filled.initial_state(2), {}, start, max_length=T, end_id=END,
        prompt_ids=tf.constant([[1, 2], [2, 1]]), prompt_lengths=tf.constant([2, 2]),
        prefill=filled.prefill, min_length=T - 2)  # no early end: every position is decoded
    assert ids.numpy()[:, :2].tolist() == [[1, 2], [2, 1]] and lengths.numpy().tolist() == [T, T]
    assert int(filled.calls.numpy()) == 1 + (T - 2)  # one prefill, then only the free steps


@pytest.mark.parametrize("prefill", [False, True], ids=["forced", "prefilled"])
def test_wide_beam_finds_the_best_continuation_of_each_prompt(prefill):
    model = scripted(prefill, seed=5)
    ids, scores, lengths = run(kseq.decoding.beam_search, model, beam_size=V**T,
                               length_penalty=None, n_best=1)
    for row, (prompt, n) in enumerate(zip(PROMPTS, LENGTHS)):
        score, sequence = best_continuation(model, prompt[:n])
        got = ids.numpy()[row, 0][: lengths.numpy()[row, 0]].tolist()
        assert got == list(sequence)
        np.testing.assert_allclose(scores.numpy()[row, 0], score, rtol=1e-5)


def test_sampling_keeps_the_prompt_and_min_length_counts_generated_tokens():
    model = scripted(False)
    ids, _, lengths = run(kseq.decoding.sample, model, seed=1, min_length=2)
    for row, (prompt, n) in enumerate(zip(PROMPTS, LENGTHS)):
        assert ids.numpy()[row][:n].tolist() == prompt[:n]
        assert lengths.numpy()[row] >= min(T, n + 2)  # no end among the first 2 generated


def test_prompt_arguments_come_in_pairs():
    model = scripted(False)
    with pytest.raises(ValueError, match="prompt_ids"):
        kseq.decoding.greedy_search(model.step, model.initial_state(1), {}, tf.zeros([1], tf.int32),
                                    max_length=T, end_id=END, prompt_ids=tf.constant([[1]]))
