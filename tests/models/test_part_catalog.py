"""The part catalogs: every task builds its parts by name from flat options, and says so."""

import numpy as np
import pytest

import kseq
from kseq.cli import main
from kseq.errors import KseqError
from kseq.models import part_catalog
from kseq.text.tokenizer import END_ID

WORDS = kseq.text.WordTokenizer.build_vocabulary(["one two three", "un deux trois"])
CHARS = kseq.text.CharTokenizer.build_vocabulary(["the dog runs"])
TINY = {"transformer": dict(num_layers=1, num_heads=2, hidden_dim=8),
        "rnn": dict(hidden_dim=8), "attention": dict(hidden_dim=8),
        "conv": dict(num_layers=1, hidden_dim=8), "ngrams": dict(hidden_dim=8, ngram_buckets=16),
        "textcnn": dict(hidden_dim=8, filters=4), "small_cnn": dict(image_size=16, hidden_dim=8,
                                                                    filters=(8,))}


def test_every_existing_part_is_registered_once_in_order():
    assert part_catalog.encoder_names("text") == ("transformer", "rnn", "conv", "ngrams",
                                                  "textcnn")
    images = part_catalog.encoder_names("image")
    assert images[:2] == ("small_cnn", "efficientnet_lite0")
    assert set(images[2:]) == set(kseq.layers.application_backbone.APPLICATIONS)
    assert part_catalog.decoder_names() == ("transformer", "rnn", "attention", "conv")
    with pytest.raises(KseqError, match="already registered"):
        part_catalog.register_decoder("rnn")(lambda vocabulary_size, **options: None)


@pytest.mark.parametrize("name", ["transformer", "rnn", "conv", "ngrams", "textcnn", "small_cnn"])
def test_each_encoder_factory_builds_its_class_named_encoder(name):
    entry = part_catalog.encoder_entry(name)
    vocabulary = None if entry.kind == "image" else WORDS.vocabulary_size
    encoder = entry.build(vocabulary, **TINY[name])
    assert type(encoder) is entry.builds and encoder.name == "encoder"
    with pytest.raises(TypeError):  # the factory takes exactly its options
        entry.build(vocabulary, hidden_size=8)


@pytest.mark.parametrize("name", ["transformer", "rnn", "attention", "conv"])
def test_each_decoder_factory_builds_its_class_named_decoder(name):
    decoder = part_catalog.build_decoder(name, 10, **TINY[name])
    assert type(decoder) is part_catalog.decoder_entry(name).builds
    assert decoder.name == "decoder"
    assert getattr(decoder, "attention", None) == ("bahdanau" if name == "attention" else None)


def test_every_task_refuses_an_option_no_part_takes():
    with pytest.raises(TypeError, match="hidden_size"):
        kseq.models.build_translator("attention", WORDS, WORDS, hidden_size=8)
    with pytest.raises(TypeError, match="max_length"):  # a translator sets it from its lengths
        kseq.models.build_translator("transformer", WORDS, WORDS, max_length=8)
    with pytest.raises(TypeError, match="tie_embeddings"):  # set from share_embeddings
        kseq.models.build_translator("transformer", WORDS, WORDS, tie_embeddings=False)
    with pytest.raises(TypeError, match="num_head"):
        kseq.models.build_captioner(WORDS, **TINY["small_cnn"], num_head=2)
    with pytest.raises(TypeError, match="hidden"):
        kseq.models.build_classifier(WORDS, ["a", "b"], encoder="rnn", hiddden_dim=8)
    with pytest.raises(TypeError, match="layers"):
        kseq.models.build_tagger(CHARS, ["A", "B"], layers=2)


def test_an_option_of_another_registered_part_is_left_unused():
    # A recipe can switch its decoder without deleting the Transformer's keys.
    model = kseq.models.build_captioner(WORDS, decoder="attention", num_heads=2,
                                        intermediate_dim=16, **TINY["small_cnn"])
    assert model.decoder.units == 8
    legacy_rnn = kseq.models.build_translator("rnn", WORDS, WORDS, attention="luong", units=4,
                                              embedding_dim=4)
    assert legacy_rnn.decoder.attention is None


@pytest.mark.slow
def test_encoder_and_decoder_keys_name_the_same_translator_as_arch():
    tiny = {"transformer": TINY["transformer"], "attention": dict(units=8, embedding_dim=4),
            "rnn": dict(units=8, embedding_dim=4, num_layers=2),
            "conv": dict(hidden_dim=8, num_encoder_layers=1, num_decoder_layers=2)}
    for arch, (encoder, decoder) in kseq.models.translator.architectures.ARCHITECTURE_PARTS.items():
        options = tiny[arch]
        by_arch = kseq.models.build_translator(arch, WORDS, WORDS, **options)
        by_parts = kseq.models.build_translator(source_tokenizer=WORDS, target_tokenizer=WORDS,
                                                encoder=encoder, decoder=decoder, **options)
        assert by_parts.encoder.get_config() == by_arch.encoder.get_config()
        assert by_parts.decoder.get_config() == by_arch.decoder.get_config()
        assert by_parts.share_source_embedding == by_arch.share_source_embedding
    agree = kseq.models.build_translator("attention", WORDS, WORDS, encoder="rnn", units=4,
                                         embedding_dim=4)
    assert agree.decoder.attention == "bahdanau"
    with pytest.raises(KseqError, match="arch='attention' is the encoder 'rnn'"):
        kseq.models.build_translator("attention", WORDS, WORDS, decoder="rnn")
    with pytest.raises(KseqError, match="`decoder` must be one of"):
        kseq.models.build_translator(source_tokenizer=WORDS, target_tokenizer=WORDS,
                                     decoder="lstm")
    with pytest.raises(KseqError, match="`encoder` must be one of"):  # an image encoder
        kseq.models.build_translator(source_tokenizer=WORDS, target_tokenizer=WORDS,
                                     encoder="small_cnn")


@pytest.mark.slow
def test_each_task_keeps_the_defaults_it_had_before_the_catalog():
    transformer = dict(num_layers=1, num_heads=2, hidden_dim=16)
    translator = kseq.models.build_translator("transformer", WORDS, WORDS, **transformer)
    captioner = kseq.models.build_captioner(WORDS, image_size=16, filters=(8,), **transformer)
    classifier = kseq.models.build_classifier(WORDS, ["a", "b"], **transformer)
    tagger = kseq.models.build_tagger(CHARS, ["A", "B"], encoder="transformer", **transformer)
    assert translator.encoder.intermediate_dim == translator.decoder.intermediate_dim == 512
    assert captioner.decoder.intermediate_dim == 512
    assert classifier.encoder.intermediate_dim == tagger.encoder.intermediate_dim == 64
    conv_translator = kseq.models.build_translator("conv", WORDS, WORDS)
    conv_classifier = kseq.models.build_classifier(WORDS, ["a", "b"], encoder="conv")
    assert (conv_translator.encoder.hidden_dim, conv_translator.encoder.embedding_dim) == (256, 256)
    assert (conv_translator.encoder.num_layers, conv_translator.decoder.num_layers) == (4, 3)
    assert (conv_classifier.encoder.hidden_dim, conv_classifier.encoder.embedding_dim) == (128, 128)
    rnn = kseq.models.build_translator("rnn", WORDS, WORDS, num_layers=2)
    assert (rnn.encoder.units, rnn.encoder.embedding_dim, rnn.decoder.num_layers) == (128, 128, 2)
    attention = kseq.models.build_translator("attention", WORDS, WORDS, num_layers=2)
    assert (attention.encoder.num_layers, attention.decoder.num_layers) == (2, 1)
    assert tagger.encoder.max_length == 256 and classifier.encoder.max_length == 128


def test_the_room_check_names_the_part_and_the_length():
    with pytest.raises(ValueError, match="decoder's max_length must hold the preprocessor's "
                                         "max_target_length. Received: decoder max_length=8, "
                                         "max_target_length=12"):
        kseq.models.Captioner(kseq.models.encoders.ImageEncoder(kseq.layers.SmallCnn((8,)),
                                                                (8, 8), hidden_dim=8),
                              part_catalog.build_decoder("transformer", WORDS.vocabulary_size,
                                                         max_length=8, **TINY["transformer"]),
                              kseq.models.CaptionerPreprocessor(WORDS, (8, 8), 12))
    encoder = part_catalog.build_encoder("transformer", CHARS.vocabulary_size, max_length=8,
                                         **TINY["transformer"])
    with pytest.raises(ValueError, match="encoder max_length=8, max_length=16"):
        kseq.models.SequenceTagger(encoder, kseq.models.TaggerPreprocessor(CHARS, ["A"], 16))


def test_output_strings_reshapes_n_best_ids_in_one_place():
    model = kseq.models.build_translator("rnn", WORDS, WORDS, units=4, embedding_dim=4)
    one, two = WORDS.vocabulary.index("one"), WORDS.vocabulary.index("two")
    end = END_ID
    ids = np.array([[[one, end, 0], [two, end, 0]], [[two, one, end], [end, 0, 0]]],
                   "int32")  # [B=2, M=2, T=3]
    strings = model.output_strings(ids).numpy()
    assert strings.shape == (2, 2)
    assert [[s.decode() for s in row] for row in strings] == [["one", "two"], ["two one", ""]]
    assert model.output_strings(np.zeros((0, 2, 3), "int32")).shape == (0, 2)


def test_kseq_presets_parts_lists_both_catalogs_with_options(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # one line a part
    assert main(["presets", "--parts"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["part", "kind", "class"]
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in lines[1:]}
    assert rows[("attention", "decoder")][0] == "RnnDecoder"
    assert "attention='bahdanau'" in rows[("attention", "decoder")]
    assert rows[("rnn", "text")][0] == "RnnEncoder"
    assert "bidirectional=True" in rows[("rnn", "text")]
    assert rows[("small_cnn", "image")][0] == "ImageEncoder"
    assert len(rows) == len(part_catalog.parts()) == (len(part_catalog.encoder_names())
                                                      + len(part_catalog.decoder_names()))
