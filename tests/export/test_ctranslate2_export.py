"""CTranslate2 export (`kseq export --format ctranslate2`) and translation through it.

The shipped `numbers_fr_transformer` (2+2 layers, d 64, separate vocabularies,
tied output projection) is exported once per module through the command line;
its CTranslate2 greedy output must equal kseq's, token for token.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import kseq
from kseq.cli import main
from kseq.errors import KseqError
from kseq.models.translator.ctranslate2_export import export_ctranslate2
from kseq.ctranslate2.translator import CONFIG_FILE, CTranslate2Translator
from kseq.presets.catalog import slice_pairs

pytest.importorskip("ctranslate2")

PRESET = "numbers_fr_transformer"
NUMBERS = [source for source, _ in slice_pairs(PRESET)[:50]]


@pytest.fixture(scope="module")
def keras_model():
    return kseq.zoo.translator(PRESET)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("ct2") / "numbers_fr")
    code = main(["export", PRESET, "--format", "ctranslate2", "--output", folder, "--quiet"])
    assert code == 0
    return folder


@pytest.mark.slow  # a preset, an export, two greedy searches: ~6 s
def test_greedy_output_is_kseqs(keras_model, exported):
    with open(os.path.join(exported, CONFIG_FILE), encoding="utf-8") as handle:
        config = json.load(handle)
    assert config["search"]["length_penalty"] == "fairseq" and config["max_target_length"] == 32
    with open(os.path.join(exported, "config.json"), encoding="utf-8") as handle:
        assert json.load(handle)["layer_norm_epsilon"] == pytest.approx(1e-5)
    model = kseq.zoo.translator(exported)
    assert isinstance(model, CTranslate2Translator)
    texts, scores = zip(*keras_model.translate(NUMBERS, beam_size=1, return_scores=True))
    ct2_texts, ct2_scores = zip(*model.translate(NUMBERS, beam_size=1, return_scores=True))
    assert list(ct2_texts) == list(texts)
    np.testing.assert_allclose(np.array(ct2_scores), np.array(scores), atol=1e-4)
    # An empty input has no output, as in kseq; n-best comes back as lists.
    assert model.translate(["", "forty-two"], beam_size=4, n_best=2)[0] == ["", ""]


@pytest.mark.slow  # the CLI loads the export: ~2 s
def test_translate_command_on_the_export(exported, capsys):
    assert main(["translate", exported, "forty-two", "seven", "--beam", "1"]) == 0
    assert capsys.readouterr().out.splitlines() == ["quarante-deux", "sept"]
    assert main(["translate", exported, "forty-two", "--length-penalty", "gnmt"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("kseq: error: CTranslate2 normalises") and "\n" not in error
    assert main(["evaluate", exported, "--data", "test"]) == 2  # translate only
    assert "answers translate" in capsys.readouterr().err


def test_the_command_on_the_export_imports_no_tensorflow(exported):
    """`kseq translate CT2_FOLDER` in a fresh process: kseq's tokenizer in plain Python,
    CTranslate2's search, and not one TensorFlow module (the process stays small)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "kseq.cli", "translate",
                           exported, "forty-two", "--beam", "1"],
                          capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.splitlines() == ["quarante-deux"]
    modules = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:")}
    assert "ctranslate2" in modules and "kseq.text.plain_tokenizer" in modules
    assert not {name for name in modules if name.split(".")[0] in ("tensorflow", "keras")}


@pytest.mark.slow  # loads the export: ~1 s
def test_unmapped_options_are_refused_in_one_line(exported):
    model = kseq.zoo.translator(exported)
    for options in (dict(xla=True), dict(mbr=True), dict(prefixes=["quarante"]),
                    dict(coverage_penalty=0.2), dict(length_penalty="gnmt")):
        with pytest.raises(KseqError, match="CTranslate2") as error:
            model.translate(["forty-two"], **options)
        assert "\n" not in str(error.value)
    with pytest.raises(KseqError, match="takes only compute_type"):
        kseq.zoo.translator(exported, units=8)


# Untrained tiny Transformers of the layouts the preset does not cover (it is sinusoidal,
# pre-LN, separate vocabularies, tied); the check is numerical:
# CTranslate2's teacher-forced log-probabilities (`score_batch`) against kseq's logits.
LAYOUTS = [dict(position="sinusoidal", norm_first=True, share_embeddings="all"),
           dict(position="learned", norm_first=False, share_embeddings="none")]
TINY_PAIRS = [("one two three", "un deux trois"), ("four five", "quatre cinq"),
              ("six seven eight nine", "six sept huit neuf")]


@pytest.mark.slow  # a tiny model, exported and scored: ~2 s
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda d: "-".join(map(str, d.values())))
def test_every_layout_scores_as_kseq(layout, tmp_path):
    import tensorflow as tf

    shared = {"tokenizer": {"kind": "word", "shared": layout["share_embeddings"] == "all"}}
    model = kseq.zoo.translator("transformer", train_data=TINY_PAIRS, recipe=shared,
                                num_layers=2, num_heads=2, hidden_dim=16, intermediate_dim=32,
                                max_source_length=12, max_target_length=12, **layout)
    folder = export_ctranslate2(model, str(tmp_path / "ct2"))
    sources, targets = zip(*TINY_PAIRS)
    features, labels = model.preprocessor(tf.constant(sources), tf.constant(targets))
    logits = model({name: ids.to_tensor() for name, ids in features.items()})
    expected = tf.gather(tf.nn.log_softmax(logits), labels.to_tensor()[..., None],
                         batch_dims=2)[..., 0].numpy()  # [B, T]
    ct2 = CTranslate2Translator(folder)
    results = ct2.translator.score_batch(ct2.source_tokens(list(sources))[0],
                                         [t.split() for t in targets])
    for row, result in enumerate(results):
        np.testing.assert_allclose(result.log_probs, expected[row, : len(result.log_probs)],
                                   atol=1e-4)


def test_rnn_translator_is_refused(tmp_path):
    model = kseq.zoo.translator("rnn", train_data=[("one two", "un deux")], units=8,
                                embedding_dim=8)
    with pytest.raises(KseqError, match="CTranslate2 runs Transformer translators only") as error:
        export_ctranslate2(model, str(tmp_path / "rnn"))
    assert "\n" not in str(error.value) and "RnnEncoder" in str(error.value)
    assert not os.path.exists(tmp_path / "rnn")


@pytest.mark.slow  # loads the preset when run alone: ~3 s
def test_missing_ctranslate2_names_the_extra(tmp_path, monkeypatch, keras_model):
    monkeypatch.setitem(sys.modules, "ctranslate2", None)  # `import ctranslate2` fails
    with pytest.raises(KseqError, match=r"pip install 'kseq\[ctranslate2\]'") as error:
        export_ctranslate2(keras_model, str(tmp_path / "ct2"))
    assert "\n" not in str(error.value)
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / CONFIG_FILE).write_text("{}")
    with pytest.raises(KseqError, match=r"pip install 'kseq\[ctranslate2\]'"):
        CTranslate2Translator(str(tmp_path / "fake"))


@pytest.mark.slow  # a preset export and two CTranslate2 loads: ~3 s
def test_quantization_option_writes_int8_weights(tmp_path, exported, capsys):
    from kseq.cli.parser import CTRANSLATE2_QUANTIZATIONS
    from kseq.models.translator.ctranslate2_export import QUANTIZATIONS

    assert (None,) + CTRANSLATE2_QUANTIZATIONS == QUANTIZATIONS
    folder = str(tmp_path / "int8")
    assert main(["export", PRESET, "--format", "ctranslate2", "--quantization", "int8",
                 "--output", folder]) == 0
    assert "int8 weights" in capsys.readouterr().out
    with open(os.path.join(folder, CONFIG_FILE), encoding="utf-8") as handle:
        assert json.load(handle)["quantization"] == "int8"
    # int8 weights are about a quarter of float32's; the numbers still come out right.
    size = os.path.getsize(os.path.join(folder, "model.bin"))
    assert size < 0.4 * os.path.getsize(os.path.join(exported, "model.bin"))
    int8 = kseq.zoo.translator(folder).translate(NUMBERS[:20], beam_size=1)
    float32 = kseq.zoo.translator(exported).translate(NUMBERS[:20], beam_size=1)
    assert sum(a == b for a, b in zip(int8, float32)) >= 18
    # A SavedModel keeps float32: the option is refused there, in one line.
    assert main(["export", PRESET, "--quantization", "int8", "--output",
                 str(tmp_path / "serving" / "numbers")]) == 2
    error = capsys.readouterr().err.strip()
    assert "--format ctranslate2` only" in error and "\n" not in error
    assert not os.path.exists(tmp_path / "serving")
