"""A Transformer KV cache that grows in blocks: the search does only the work its rows need.

`GenerativeTask.search` starts a Transformer decoder from `growing_state`: a
cache of `CACHE_BLOCK` slots that grows by a block when the step reaches it,
so a step attends over, and beam search reorders, only the slots in use
(issue #33). Masked slots weigh exactly zero: the ids equal the fixed-cache
search's (scores to float rounding), and XLA keeps the fixed cache.
"""

import numpy as np
import pytest
import tensorflow as tf
from keras import ops

import kseq
from kseq.decoding import beam_search, greedy_search
from kseq.text.tokenizer import END_ID, START_ID

X = np.random.default_rng(0).normal(size=(3, 20, 8)).astype("float32")


def test_self_attention_steps_are_the_same_on_a_grown_cache():
    layer = kseq.layers.MultiHeadSelfAttention(num_heads=2, key_dim=4, causal=True)
    fixed, grown = layer.initial_state(3, 20), layer.initial_state(3, 4)
    for t in range(20):
        if t == grown["key"].shape[2]:
            grown = layer.grow_cache(grown, t + 4)
        want, fixed = layer.step(X[:, t], fixed, t)
        got, grown = layer.step(X[:, t], grown, t)
        np.testing.assert_allclose(ops.convert_to_numpy(got), ops.convert_to_numpy(want),
                                   atol=1e-6)
    assert tuple(grown["key"].shape) == (3, 2, 20, 4)


@pytest.fixture(scope="module")
def numbers():
    return kseq.zoo.translator("numbers_fr_transformer")


SOURCES = ["forty-two", "one thousand two hundred and three", "seven",
           "nine hundred and ninety-nine thousand nine hundred and ninety-nine"]


def test_cache_grows_by_blocks_to_what_the_longest_row_needs(numbers):
    decoder = numbers.decoder
    block = decoder.CACHE_BLOCK
    assert decoder.max_length > block  # else nothing can grow
    memory = numbers.encode(numbers.source_ids_for(SOURCES))
    state, shapes = decoder.growing_state(memory)
    assert {tuple(c["key"].shape)[2] for c in state["cache"]} == {block}
    lengths = []

    def step(ids, state, memory, t):  # eager: tf.while_loop runs the body in Python
        logits, state = numbers.step(ids, state, memory, t)
        lengths.append((int(t), int(state["cache"][0]["key"].shape[2])))
        return logits, state

    ids, _, out_lengths = greedy_search(step, state, memory, tf.fill([len(SOURCES)], START_ID),
                                        max_length=decoder.max_length, end_id=END_ID,
                                        state_shapes=shapes)
    steps = int(tf.reduce_max(out_lengths))
    assert len(lengths) == steps  # the loop stops with its longest row
    expected = [(t, min(decoder.max_length, (t // block + 1) * block)) for t in range(steps)]
    assert lengths == expected


@pytest.mark.parametrize("beam", [1, 4])
def test_growing_cache_search_equals_the_fixed_cache_search(numbers, beam):
    settings = numbers.search_settings(beam_size=beam)
    ids = numbers.source_ids_for(SOURCES)
    grown = numbers.compiled_search(settings)(ids)
    # `xla=True` asks for fixed loop shapes; traced here without XLA.
    fixed = tf.function(lambda x: numbers.search(x, settings, xla=True), autograph=False)(ids)
    np.testing.assert_array_equal(grown[0].numpy(), fixed[0].numpy())  # ids
    np.testing.assert_array_equal(grown[2].numpy(), fixed[2].numpy())  # lengths
    np.testing.assert_allclose(grown[1].numpy(), fixed[1].numpy(), atol=1e-5)  # scores
    texts = numbers.output_strings(grown[0]).numpy()[:, 0].tolist()
    assert texts[:3] == [b"quarante-deux", b"mille deux cent trois", b"sept"]


def test_search_graph_holds_a_growing_cache_and_the_xla_one_a_fixed_cache(numbers):
    settings = numbers.search_settings(beam_size=4)
    spec = tf.TensorSpec([None, None], tf.int32)
    cache_shapes = {}
    for xla in (False, True):
        graph = tf.function(lambda x: numbers.search(x, settings, xla=xla),
                            autograph=False).get_concrete_function(spec).graph
        loops = [op for op in graph.get_operations() if op.type in ("While", "StatelessWhile")]
        assert len(loops) == 1
        # Rank-4 loop values: the KV caches, and the captured cross-attention keys/values.
        cache_shapes[xla] = {tuple(o.shape.as_list()) for o in loops[0].outputs
                             if o.shape.rank == 4}
    decoder = numbers.decoder
    full = (None, decoder.num_heads, decoder.max_length, decoder.hidden_dim // decoder.num_heads)
    assert full in cache_shapes[True]
    assert full not in cache_shapes[False] and (None, full[1], None, full[3]) in cache_shapes[False]


def test_beam_search_takes_state_shapes_for_a_scripted_growing_state():
    def step(ids, state, memory, t):  # the state grows by one column a step
        grown = tf.concat([state["seen"], tf.cast(ids, tf.float32)[:, None]], axis=1)
        logits = tf.where(t < 2, tf.one_hot(tf.fill(tf.shape(ids), 2), 4),
                          tf.one_hot(tf.fill(tf.shape(ids), 3), 4))
        return 5.0 * logits, {"seen": grown}

    state = {"seen": tf.zeros([2, 0])}
    shapes = {"seen": tf.TensorSpec([None, None], tf.float32)}
    ids, _, lengths = tf.function(lambda: beam_search(
        step, state, {}, tf.constant([1, 1]), beam_size=2, max_length=5, end_id=3,
        state_shapes=shapes))()
    assert ids.numpy()[:, 0].tolist() == [[2, 2, 3, 0, 0]] * 2
    assert lengths.numpy()[:, 0].tolist() == [3, 3]


def test_translate_runs_one_graph_per_batch_with_and_without_xla(numbers):
    # Tokenisation, search and detokenisation are one `compiled_generate` call; with
    # `xla=True` only the search inside it is compiled by XLA, on fixed shapes.
    texts = ["forty-two", "", "seven"]
    plain = numbers.translate(texts, beam_size=1, return_scores=True)
    compiled = numbers.translate(texts, beam_size=1, return_scores=True, xla=True)
    assert [text for text, _ in plain] == ["quarante-deux", "", "sept"]
    assert [text for text, _ in compiled] == [text for text, _ in plain]
    assert plain[1][1] == [0.0]
    settings = numbers.search_settings(beam_size=1)
    assert numbers.compiled_generate(settings).experimental_get_tracing_count() == 1
