import json
import os
import re

import keras
import pytest

import kseq
from kseq.errors import KseqError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_preset_loads_and_names_known_parts():
    for name in kseq.zoo.presets():
        recipe = kseq.zoo.load_recipe(name)
        task = kseq.zoo.TASKS[recipe.get("task", "translator")]
        assert task.from_recipe == kseq.zoo.TASK_BUILDERS[task.preset_task]
        if "encoder" in recipe["model"]:  # the parts, named (every task's recipes do)
            assert recipe["model"]["encoder"] in kseq.models.part_catalog.encoder_names()
        else:
            assert recipe["model"][task.architecture_key] in task.architectures
        if "decoder" in recipe["model"]:
            assert recipe["model"]["decoder"] in kseq.models.part_catalog.decoder_names()
        if "tokenizer" in recipe or not kseq.zoo.takes_images(recipe):
            assert recipe["tokenizer"]["kind"] in kseq.text.TOKENIZERS
        if "data" in recipe or not kseq.presets.catalog.has_weights(name):  # not ImageNet's
            assert recipe["data"]["builder"] in kseq.zoo.DATA_BUILDERS


def test_each_task_describes_its_presets_for_kseq_presets():
    described = {name: kseq.zoo.describe(kseq.zoo.load_recipe(name))
                 for name in kseq.zoo.presets()}
    assert described["numbers_fr_tiny"] == "transformer"
    assert described["libreoffice_en_fr_conv"] == "conv"
    assert described["shapes_captioner_tiny"] == "small_cnn+transformer"
    assert described["sentiment_classifier"] == "rnn+attention"
    assert described["turkish_pos_tagger"] == "rnn+chars"
    assert kseq.models.SequenceTagger.describe({"model": {}}) == "rnn+chars"  # the default
    assert kseq.zoo.takes_images(kseq.zoo.load_recipe("kanji_radical_classifier"))
    assert not kseq.zoo.takes_images(kseq.zoo.load_recipe("sentiment_classifier"))


def test_cli_and_zoo_name_no_task_and_sniff_no_method():
    """The check of issue 28: task-specific code lives in the task classes."""
    pattern = re.compile(r'evaluate_(tags|labels|bleu)|"captioner"|"tagger"|"classifier"')
    cli = sorted(os.path.join("cli", name) for name in os.listdir(os.path.join(ROOT, "kseq", "cli"))
                 if name.endswith(".py"))
    for module in [*cli, "zoo.py"]:
        with open(os.path.join(ROOT, "kseq", module), encoding="utf-8") as handle:
            found = [line for line in handle if pattern.search(line)]
        assert not found, (module, found)
    with open(os.path.join(ROOT, "kseq", "zoo.py"), encoding="utf-8") as handle:
        assert len(handle.readlines()) < 200


def test_each_task_declares_its_commands_and_options():
    models = kseq.models
    assert [task.cli_verbs[0] for task in kseq.zoo.TASKS.values()] == [
        "translate", "caption", "classify", "tag", "generate"]
    assert all({"evaluate", "export"} <= set(task.cli_verbs) for task in kseq.zoo.TASKS.values())
    assert models.Translator.export_options == models.Captioner.export_options == (
        "beam_size", "n_best", "xla", "length_penalty", "alpha", "max_length")
    assert models.SequenceClassifier.export_options == models.SequenceTagger.export_options == ()
    assert models.SequenceClassifier.evaluate_options == ("plot",)


def test_old_keyword_names_still_work_with_a_deprecation_warning():
    pairs = [("great film", "positive"), ("dull film", "negative")]
    with pytest.warns(DeprecationWarning, match="`train_pairs` is deprecated.*`train_data`"):
        model = kseq.zoo.classifier("rnn", train_pairs=pairs, hidden_dim=8)
    assert model.label_names == ["negative", "positive"]
    with pytest.warns(DeprecationWarning, match="`label_names`.*`labels`"):
        model = kseq.zoo.classifier(preset_or_encoder="rnn", train_data=pairs, hidden_dim=8,
                                    label_names=["negative", "neutral", "positive"])
    assert model.label_names == ["negative", "neutral", "positive"]
    # A translator's two old vocabularies become the (source, target) pair.
    source = kseq.text.WordTokenizer.build_vocabulary(["one two"])
    target = kseq.text.WordTokenizer.build_vocabulary(["un deux"])
    with pytest.warns(DeprecationWarning, match="`source_vocab`.*`vocab`"):
        model = kseq.zoo.translator("rnn", source_vocab=source, target_vocab=target, units=8)
    assert model.source_tokenizer is source and model.target_tokenizer is target
    with pytest.warns(DeprecationWarning), pytest.raises(KseqError, match="pass one of them"):
        kseq.zoo.tagger("rnn", train_pairs=[("a", "X")], train_data=[("a", "X")])


def test_bad_input_is_one_error_type_naming_what_was_expected():
    with pytest.raises(KseqError, match="numbers_fr_tiny.*Received: 'no_such_preset'"):
        kseq.zoo.classifier("no_such_preset")
    with pytest.raises(KseqError, match="model options do not fit.*hidden_dims"):
        kseq.zoo.tagger("rnn", train_data=[("a b", "X Y")], hidden_dims=8)
    with pytest.raises(KseqError, match="not a tagger preset"):
        kseq.zoo.tagger("sentiment_classifier", load_weights=False)
    with pytest.raises(TypeError):  # no silent misbinding of the old positional order
        kseq.zoo.classifier("rnn", ["negative", "positive"])


def test_merge_is_deep_and_right_most_wins():
    merged = kseq.zoo.merge({"a": {"b": 1, "c": 2}}, {"a": {"c": 3}}, {"d": 4})
    assert merged == {"a": {"b": 1, "c": 3}, "d": 4}


@pytest.mark.slow
def test_shipped_weights_translate_unseen_numbers():
    model = keras.saving.load_model(os.path.join(ROOT, "kseq", "presets",
                                                 "numbers_fr_transformer.keras"))
    # The first 50 pairs of `numbers_dataset("fr", 30000, 500, 1000, seed=0)["test"]`, the
    # preset's unseen numbers: the same draw, with words for those 50 only (not 31,500).
    from kseq.data.datasets.numbers import _draw_numbers, _words

    test = [(_words(n, "en"), _words(n, "fr"))
            for n in _draw_numbers(0, 30000, 500, 1000)["test"][:50]]
    outputs = model.translate([s for s, _ in test], beam_size=1)
    assert sum(o == t for o, (_, t) in zip(outputs, test)) >= 48
    assert model.translate(["seven hundred and seventy-seven"]) == ["sept cent soixante-dix-sept"]


def test_recipe_file_path_works(tmp_path):
    path = tmp_path / "mine.json"
    recipe = kseq.zoo.load_recipe("numbers_fr_tiny")
    path.write_text(json.dumps(recipe))
    assert kseq.zoo.load_recipe(str(path)) == recipe


def test_captioner_builder_errors_name_the_choice():
    with pytest.raises(kseq.errors.KseqError, match="decoder"):
        kseq.zoo.captioner("small_cnn", decoder="lstm", train_data=[(b"", "a")])
    with pytest.raises(kseq.errors.KseqError, match="not a captioner"):
        kseq.zoo.captioner("numbers_fr_tiny", vocab=["a"])
    with pytest.raises(kseq.errors.KseqError, match="encoder"):
        kseq.models.build_captioner(kseq.text.WordTokenizer.build_vocabulary(["a"]),
                                    encoder="vgg")


def test_a_recipe_naming_the_parts_replaces_the_architecture_name():
    pairs = [("one two", "un deux")]
    model = kseq.zoo.translator("attention", train_data=pairs, units=8, embedding_dim=8,
                                recipe={"model": {"decoder": "rnn"}})
    assert type(model.encoder).__name__ == "RnnEncoder"
    assert model.decoder.attention is None  # rnn+rnn: the attention of "attention" is gone
    assert model.recipe["model"]["encoder"] == "rnn" and "arch" not in model.recipe["model"]
    assert kseq.zoo.describe(model.recipe) == "rnn"  # the pair of the "rnn" architecture
    assert kseq.zoo.describe({"model": {"encoder": "conv", "decoder": "attention"}}) \
        == "conv+attention"
    model = kseq.zoo.translator("transformer", train_data=pairs, units=8, embedding_dim=8,
                                recipe={"model": {"encoder": "rnn", "decoder": "attention"}})
    assert model.decoder.attention == "bahdanau"
