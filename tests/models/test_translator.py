import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import kseq
from kseq.data import bucket_by_length
from kseq.data.pipeline.bucketing import count_bucketed_batches

from testing import build_optimizer, check_input_routes, functions_run_eagerly, run_task_test
from translator_fixtures import PAIRS, tiny_translator


@pytest.mark.slow
def test_overfit_twenty_pairs_reproduces_targets(overfit_translator):
    sources = [s for s, _ in PAIRS]
    targets = [t for _, t in PAIRS]
    assert overfit_translator.translate(sources, beam_size=1) == targets
    assert overfit_translator.translate(sources, beam_size=4) == targets
    result = overfit_translator.evaluate_bleu(PAIRS, beam_size=4, print_signature=False)
    assert result["bleu"] == 100.0 and result["exact_match"] == 1.0
    assert "case:mixed" in result["bleu_signature"]


@pytest.mark.slow  # a .keras round trip, three input routes, two twin models
def test_transformer_passes_the_task_test(overfit_translator):
    # Trained: a forward pass that froze a weight at build time would differ from step().
    # Untraced: the greedy searches and the real-rows twins' two steps assert values, and
    # run eagerly in less time than their traces (the overfit `fit` ran kseq's real-rows
    # step as a graph; the first test, the greedy search).
    with functions_run_eagerly():
        run_task_test(overfit_translator, tiny_translator, PAIRS, input_routes=False,
                      predict=lambda model, texts: model.translate(texts, beam_size=1))
    # The input routes as `fit` runs them, traced: what each route feeds the graph is the point.
    check_input_routes(tiny_translator(), PAIRS[:16], [16, 32])


@pytest.mark.slow
def test_translate_continues_a_forced_target_prefix(overfit_translator):
    sources, targets = [s for s, _ in PAIRS[:4]], [t for _, t in PAIRS[:4]]
    first_words = [t.split()[0] for t in targets]
    # Untraced (the values are the point, and eagerly they take a third of the two traces'
    # time); tests/test_readme_samples.py runs the prefixed beam search as a graph.
    with functions_run_eagerly():
        for beam in (1, 4):
            assert overfit_translator.translate(sources, beam_size=beam,
                                                prefixes=first_words) == targets
        # A prefix the model would not choose is kept, and the rest is searched after it.
        forced = overfit_translator.translate(sources[:2], beam_size=4,
                                              prefixes=["neuf neuf", ""])
    assert forced[0].startswith("neuf neuf") and forced[1] == targets[1]
    with pytest.raises(kseq.errors.KseqError, match="one string per input"):
        overfit_translator.translate(sources, prefixes=["un"])


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["transformer", "conv"])
def test_buckets_longer_than_one_side_pad_each_side_to_its_own_length(arch):
    # Learned position tables as long as each side: a source padded to the target's
    # bucket would not fit its table (a crash deep inside TensorFlow before).
    tok = kseq.text.WordTokenizer.build_vocabulary([s for s, _ in PAIRS] + [t for _, t in PAIRS])
    options = {"transformer": dict(num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
                                   position="learned"),
               "conv": dict(embedding_dim=8, hidden_dim=8, num_encoder_layers=1,
                            num_decoder_layers=1)}[arch]
    model = kseq.models.build_translator(arch, tok, tok, max_source_length=12,
                                         max_target_length=20, **options)
    model.compile(optimizer="sgd", loss=kseq.metrics.MaskedSparseCrossEntropy())
    build_optimizer(model)  # one trace of the train step, not two
    data = model.preprocessor.training_dataset(PAIRS, [20], batch_size=10, shuffle=False)
    features, labels = next(iter(data))
    assert features["source_ids"].shape == (10, 12) and labels.shape == (10, 20)
    # Untraced: the widths reach the tables eagerly as in a graph, and two eager steps of
    # this model take less time than the train step's trace.
    with functions_run_eagerly():
        assert np.isfinite(model.fit(data, verbose=0).history["loss"][0])


@pytest.mark.slow
def test_keras_round_trip_is_self_contained(overfit_translator, tmp_path):
    vocab_file = tmp_path / "vocab.txt"
    vocab_file.write_text("\n".join(overfit_translator.target_tokenizer.vocabulary), encoding="utf-8")
    model = kseq.zoo.translator("transformer", vocab=(overfit_translator.source_tokenizer,
                                                    str(vocab_file)), num_layers=1, num_heads=2,
                                hidden_dim=32, intermediate_dim=64, dropout=0.0,
                                max_source_length=32, max_target_length=32)
    model.set_weights(overfit_translator.get_weights())
    path = tmp_path / "model.keras"
    model.save(path)
    os.remove(vocab_file)
    restored = keras.saving.load_model(path)
    sources = [s for s, _ in PAIRS[:6]]
    # `model` holds the overfit translator's weights and vocabularies: the restored copy
    # translates as that one does (whose beam-4 search the first test traced); the copy's
    # search runs untraced: its values are the point, and eagerly it takes a third the time.
    with functions_run_eagerly():
        translated = restored.translate(sources, beam_size=4)
    assert translated == overfit_translator.translate(sources, beam_size=4)


@pytest.mark.slow
def test_bucketing_keeps_every_example_once_with_bounded_shapes():
    examples = [(np.arange(1, n + 1), np.arange(1, m + 1)) for n, m in
                [(3, 4), (9, 2), (15, 15), (1, 1), (5, 12), (20, 3), (7, 7)] * 5]
    def gen():
        for i, (s, t) in enumerate(examples):
            yield {"source_ids": np.append(s, 100 + i).astype("int32"),
                   "decoder_ids": t.astype("int32")}, t.astype("int32")
    spec = ({"source_ids": tf.TensorSpec([None], tf.int32),
             "decoder_ids": tf.TensorSpec([None], tf.int32)}, tf.TensorSpec([None], tf.int32))
    data = tf.data.Dataset.from_generator(gen, output_signature=spec)
    batches = list(data.apply(bucket_by_length([8, 16, 24], batch_size=4)))
    shapes = {tuple(f["source_ids"].shape) for f, _ in batches}
    assert shapes <= {(4, 8), (4, 16), (4, 24)}
    seen = sorted(int(v) for f, _ in batches for v in f["source_ids"].numpy().ravel() if v >= 100)
    assert seen == [100 + i for i in range(len(examples))]
    # The count a training dataset carries as its cardinality, for any order and batching.
    assert count_bucketed_batches(data, [8, 16, 24], batch_size=4) == len(batches)
    shuffled = data.shuffle(64, seed=3)
    for options in ({"batch_size": 3}, {"token_budget": 50}):
        assert count_bucketed_batches(shuffled, [8, 16, 24], **options) == len(list(
            shuffled.apply(bucket_by_length([8, 16, 24], **options))))
    # A translator's preprocessor (no model around it: its building would check nothing here).
    tok = kseq.text.WordTokenizer.build_vocabulary([s for s, _ in PAIRS] + [t for _, t in PAIRS])
    preprocessor = kseq.models.TranslatorPreprocessor(tok, tok, 32, 32)
    training = preprocessor.training_dataset(PAIRS, [8, 16], batch_size=3)
    assert int(training.cardinality()) == len(list(training)) > 1  # so `fit` knows the epoch
    generated = tf.data.Dataset.from_generator(  # unknown length: not read twice to count
        lambda: iter(PAIRS), output_signature=(tf.TensorSpec([], tf.string),) * 2)
    assert int(preprocessor.training_dataset(generated, [8, 16], batch_size=3).cardinality()) \
        == int(tf.data.UNKNOWN_CARDINALITY)


@pytest.mark.slow
def test_translate_edge_cases(caplog):
    model = tiny_translator()
    traces = []  # Python runs inference_inputs once per trace
    tokenize = model.preprocessor.inference_inputs
    model.preprocessor.inference_inputs = lambda texts: traces.append(1) or tokenize(texts)
    assert model.translate([]) == []
    assert len(model.translate("zebra", beam_size=2, n_best=2)) == 2  # one text: its n-best
    long_input = " ".join(["seven"] * 80)
    outputs = model.translate(["", long_input, "zebra"], beam_size=2, n_best=2)
    assert len(outputs) == 3 and all(len(o) == 2 for o in outputs)
    assert "truncated" in caplog.text
    assert len(model.translate(["zebra", "seven seven"], beam_size=1)) == 2
    assert len(traces) == 1  # the second search setting reuses the text handling's trace
    with pytest.raises(ValueError, match="at least one .*Received: 0 pairs"):
        model.evaluate_bleu([])


def test_unknown_preset_lists_valid_ones():
    with pytest.raises(ValueError, match="numbers_fr_tiny"):
        kseq.zoo.translator("no_such_preset")
    assert "numbers_fr_tiny" in kseq.zoo.presets()


@pytest.mark.slow
def test_search_with_and_without_xla_and_graph_overflow_check(overfit_translator):
    model = overfit_translator
    ids = model.source_ids_for([s for s, _ in PAIRS[:4]])
    for beam in (1, 4):
        settings = model.search_settings(beam_size=beam)
        plain = model.compiled_search(settings, xla=False)(ids)
        compiled = model.compiled_search(settings, xla=True)(ids)
        np.testing.assert_array_equal(plain[0].numpy(), compiled[0].numpy())
    memory = model.encode(ids)
    state = model.initial_state(memory)
    with pytest.raises(ValueError, match="KV cache overflow"):
        tf.function(model.step)(tf.fill([4], 2), state, memory, 40)
    with pytest.raises(tf.errors.InvalidArgumentError, match="KV cache overflow"):
        tf.function(model.step)(tf.fill([4], 2), state, memory, tf.constant(40))


@pytest.mark.slow
def test_keras_hub_layout_options_and_their_config():
    tok = kseq.text.WordTokenizer.build_vocabulary(["one two three", "un deux trois"])
    hub = kseq.models.build_translator(
        "transformer", tok, tok, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
        dropout=0.3, scale_embeddings=False, embedding_dropout=0.0, activation_dropout=0.0)
    ids = np.array([[4, 5, 6]], "int32")
    table = hub.decoder.token_embedding.embeddings.numpy()
    np.testing.assert_allclose(hub.decoder.token_embedding(ids).numpy()[0], table[[4, 5, 6]])
    block = hub.decoder.blocks[0]
    assert hub.decoder.embedding_dropout_layer.rate == 0.0
    assert block.feed_forward.dropout_layer.rate == 0.0
    assert block.residual_dropout.rate == 0.3 and block.self_attention.dropout == 0.3
    restored = kseq.models.Translator.from_config(hub.get_config())
    assert not restored.decoder.token_embedding.scale
    assert restored.encoder.blocks[0].feed_forward.dropout_layer.rate == 0.0
    # A kseq 0.1 config saved before these options existed keeps the original layout.
    old = {"name": "translator", "trainable": True, "source_tokenizer": tok.get_config(),
           "target_tokenizer": tok.get_config(), "num_layers": 1, "num_heads": 2,
           "hidden_dim": 8, "intermediate_dim": 16, "dropout": 0.3, "max_source_length": 64,
           "max_target_length": 64, "share_embeddings": "decoder", "position": "sinusoidal",
           "norm_first": True}
    classic = kseq.models.Translator.from_config(old)
    assert classic.decoder.token_embedding.scale
    assert classic.decoder.embedding_dropout_layer.rate == 0.3
    assert classic.decoder.blocks[0].feed_forward.dropout_layer.rate == 0.3
    assert classic.legacy_layout and not restored.legacy_layout
    scaled = classic.decoder.token_embedding(ids).numpy()[0]
    np.testing.assert_allclose(scaled, classic.decoder.token_embedding.embeddings.numpy()[[4, 5, 6]] * 8**0.5,
                               rtol=1e-6)


def test_parts_that_do_not_fit_are_refused_with_one_line():
    tok = kseq.text.WordTokenizer.build_vocabulary(["one two three"])
    small = dict(num_layers=1, num_heads=2, intermediate_dim=8)
    encoder = kseq.models.encoders.TransformerEncoder(tok.vocabulary_size, hidden_dim=8,
                                                      max_length=8, **small)
    decoder = kseq.models.decoders.TransformerDecoder(tok.vocabulary_size, hidden_dim=16,
                                                      max_length=16, **small)
    with pytest.raises(ValueError, match="max_source_length"):
        kseq.models.Translator(encoder, decoder,
                               kseq.models.TranslatorPreprocessor(tok, tok, 64, 16))
    with pytest.raises(ValueError, match="one width"):
        kseq.models.Translator(encoder, decoder, kseq.models.TranslatorPreprocessor(tok, tok, 8, 16),
                               share_source_embedding=True)
    model = kseq.models.build_translator("rnn", tok, tok, units=4, embedding_dim=4)
    with pytest.raises(kseq.errors.KseqError, match="n_best"):
        model.evaluate_bleu([("one", "two")], n_best=2, beam_size=2)
