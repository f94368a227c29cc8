"""Finished-row compaction (issue #33): the searches stop computing finished rows, same outputs.

A scripted step whose rows end at very different lengths checks the searches
with compaction on against off, ids, scores and lengths exactly, with every
option a translator's search takes; the overfit tiny translator checks a real
Transformer (growing KV cache, cross-attention memory) the same way.
"""

import numpy as np
import pytest
import tensorflow as tf

from kseq.decoding import beam_search, greedy_search

V, END, P = 7, 6, 1009
TABLE = tf.constant(np.random.default_rng(0).normal(size=(P, V)).astype("float32") * 2)
B, S = 10, 3
RNG = np.random.default_rng(1)
# Row b cannot end before step END_AT[b]: from 0 to 13, so rows end far apart.
END_AT = tf.constant(RNG.integers(0, 14, B), tf.int32)
MEMORY = {"seed": tf.constant(RNG.integers(0, P, B), tf.int32), "end_at": END_AT,
          "mask": tf.constant(RNG.random((B, S)) < 0.8), "cross": [None]}
STATE = {"history": tf.zeros([B], tf.int32), "attention": tf.zeros([B, S])}


def step(ids, state, memory, t):
    """Each row's logits come from its own history and memory (so moved rows must
    keep theirs); the end token is blocked before the row's `end_at`."""
    history = (state["history"] * 7 + ids + memory["seed"]) % P  # [N]
    logits = tf.gather(TABLE, history)  # [N, V]
    early = (t < memory["end_at"])[:, None] & tf.equal(tf.range(V), END)[None]
    attention = tf.nn.softmax(tf.where(memory["mask"], logits[:, :S], -1e9))  # [N, S]
    if tf.executing_eagerly():
        step.batches.append(int(tf.size(ids)))
    return tf.where(early, -1e9, logits), {"history": history, "attention": attention}


step.batches = []


def run_both(search, **options):
    """`(off, on)` outputs of `search`, eagerly (the loop body runs in Python:
    `step.batches` records each step's rows) and traced."""
    outputs = []
    for compact in (False, True):
        step.batches = []
        outputs.append(search(step, STATE, MEMORY, tf.zeros([B], tf.int32), max_length=16,
                              end_id=END, compact_finished_rows=compact, **options))
        batches = step.batches
    traced = tf.function(lambda: search(step, STATE, MEMORY, tf.zeros([B], tf.int32),
                                        max_length=16, end_id=END, compact_finished_rows=True,
                                        **options), autograph=False)()
    for got in (outputs[1], traced):
        assert_same_outputs(got, outputs[0])
    return outputs[0], batches


def assert_same_outputs(got, want):
    """Ids and lengths equal; scores to float32 rounding: a kernel run on fewer rows can
    round a row's log-sum-exp differently in the last bit (vector body vs scalar tail)."""
    ids, scores, lengths = got
    np.testing.assert_array_equal(ids.numpy(), want[0].numpy())
    np.testing.assert_array_equal(lengths.numpy(), want[2].numpy())
    np.testing.assert_allclose(scores.numpy(), want[1].numpy(), rtol=1e-6, atol=1e-6)


PROMPT = dict(prompt_ids=tf.constant([[3, 2, 1]] * B),
              prompt_lengths=tf.constant([0, 1, 2, 3, 0] * 2))


@pytest.mark.parametrize("options", [
    {}, dict(min_length=4, no_repeat_ngram_size=2), PROMPT,
    dict(source_lengths=tf.range(B), max_length_a=1.0, max_length_b=2.0),
])
def test_greedy_search_with_compaction_gives_the_same_outputs(options):
    (ids, _, lengths), batches = run_both(greedy_search, **options)
    assert len(set(lengths.numpy().tolist())) >= 3  # rows end far apart
    # Rows leave as they finish: the steps run on ever fewer rows.
    assert batches[0] == B and batches[-1] < B and batches == sorted(batches, reverse=True)


@pytest.mark.parametrize("options", [
    {}, dict(n_best=3, length_penalty="gnmt", alpha=0.6),
    dict(early_stop=False, coverage_penalty=0.4, min_length=2, no_repeat_ngram_size=2,
         source_lengths=tf.range(B), max_length_a=1.0, max_length_b=4.0),
    dict(PROMPT, n_best=2),
])
def test_beam_search_with_compaction_gives_the_same_n_best(options):
    (ids, _, lengths), batches = run_both(beam_search, beam_size=3, **options)
    assert len(set(lengths.numpy()[:, 0].tolist())) >= 3
    # Whole sentences leave: their 3 beams together.
    assert batches[0] == 3 * B and batches[-1] < 3 * B
    assert all(size % 3 == 0 for size in batches)


def test_compaction_leaves_an_empty_batch_and_a_batch_of_one_alone():
    for batch in (0, 1):
        state = {name: x[:batch] for name, x in STATE.items()}
        memory = {"seed": MEMORY["seed"][:batch], "end_at": END_AT[:batch],
                  "mask": MEMORY["mask"][:batch]}
        outputs = [greedy_search(step, state, memory, tf.zeros([batch], tf.int32),
                                 max_length=16, end_id=END, compact_finished_rows=compact)
                   for compact in (False, True)]
        assert [x.shape for x in outputs[1]] == [x.shape for x in outputs[0]]
        assert_same_outputs(outputs[1], outputs[0])


@pytest.mark.parametrize("beam", [1, 4])
def test_translator_search_with_compaction_gives_the_same_outputs(overfit_translator, beam):
    from translator_fixtures import PAIRS

    model = overfit_translator
    settings = model.search_settings(beam_size=beam, n_best=min(beam, 2))
    ids = model.source_ids_for([source for source, _ in PAIRS])
    search = lambda compact: tf.function(
        lambda x: model.search(x, settings, compact_finished_rows=compact), autograph=False)(ids)
    off, on = search(False), search(True)
    assert_same_outputs(on, off)
    assert len(set(off[2].numpy()[:, 0].tolist())) >= 3  # rows end far apart
    # XLA keeps compaction off (fixed loop shapes): the same ids.
    xla = model.compiled_search(settings, xla=True)(ids)
    np.testing.assert_array_equal(xla[0].numpy(), on[0].numpy())
    np.testing.assert_allclose(xla[1].numpy(), on[1].numpy(), atol=1e-5)


def test_translator_search_compacts_unless_asked_not_to(overfit_translator, monkeypatch):
    from translator_fixtures import PAIRS

    model, sizes = overfit_translator, []

    def step(ids, state, memory, t):  # eager: the loop body runs in Python
        sizes.append(int(tf.size(ids)))
        return type(model).step(model, ids, state, memory, t)

    monkeypatch.setattr(model, "step", step)
    ids = model.source_ids_for([source for source, _ in PAIRS])
    settings = model.search_settings(beam_size=4)
    model.search(ids, settings)
    assert sizes[0] == 4 * len(PAIRS) and sizes[-1] < sizes[0] // 2
    assert all(size % 4 == 0 for size in sizes)  # whole sentences: 4 beams each
    sizes.clear()
    model.search(ids, settings, compact_finished_rows=False)
    assert set(sizes) == {4 * len(PAIRS)}
