"""`kseq train --from SOURCE` (#48): from a `.keras` file, a run folder and a preset, for a
translator, a classifier (same labels, then new ones) and a tagger.

Commands run in-process through `kseq.cli.main(argv)`, one epoch each on a few dozen
examples. The translator starts from the session's overfit tiny translator (no model is
trained for this file alone); the classifier and tagger from shipped presets.
"""

import json
import os

import keras
import numpy as np
import pytest

from kseq.cli import main

pytestmark = pytest.mark.slow  # five one-epoch runs and one fresh-process export check


@pytest.fixture(autouse=True)
def _private_home(tmp_path, monkeypatch):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path / "home"))


def write_tsv(path, pairs):
    path.write_text("".join(f"{a}\t{b}\n" for a, b in pairs), encoding="utf-8")
    return str(path)


def first_epoch_loss(run):
    with open(os.path.join(run, "history.csv"), encoding="utf-8") as handle:
        header, first = handle.read().splitlines()[:2]
    return float(dict(zip(header.split(","), first.split(",")))["loss"])


def loaded(run):
    return keras.saving.load_model(os.path.join(run, "model.keras"))


def test_translator_from_a_keras_file_keeps_weights_and_vocabulary(overfit_translator,
                                                                   tmp_path, capsys):
    from translator_fixtures import PAIRS

    source = str(tmp_path / "source.keras")
    overfit_translator.save(source)
    run = str(tmp_path / "run")
    assert main(["train", "--from", source, "--data", write_tsv(tmp_path / "d.tsv", PAIRS * 3),
                 "--output", run, "--epochs", "1", "--freeze", "embeddings",
                 "--set", "training.bleu_subset=0"]) == 0  # no search: traced once per model
    out = capsys.readouterr().out
    assert out.startswith(f"fine-tuning {source} (a translator, ")
    assert "peak learning rate 0.0005, warm-up 30 steps, 1 epoch," in out
    tuned = loaded(run)
    assert getattr(tuned, "optimizer", None) is None  # model.keras: no optimizer state
    assert tuned.source_tokenizer.vocabulary == overfit_translator.source_tokenizer.vocabulary
    name = "encoder_token_embedding"  # --freeze embeddings: bit-identical
    assert np.array_equal(tuned.get_layer(name).get_weights()[0],
                          overfit_translator.get_layer(name).get_weights()[0])
    # The run started from the source: its first epoch's loss is far below a fresh model's
    # (near ln V: about uniform over the target vocabulary).
    assert first_epoch_loss(run) < 0.3 * np.log(len(tuned.target_tokenizer.vocabulary))
    recipe = json.load(open(os.path.join(run, "recipe.json"), encoding="utf-8"))
    assert recipe["fine_tuning"]["from"] == source and recipe["fine_tuning"]["freeze"] == \
        "embeddings"


def test_classifier_from_a_preset_then_from_its_run_folder_with_new_labels(tmp_path, capsys):
    from classifier_fixtures import make_examples
    from kseq.presets.catalog import load_preset_model, slice_pairs

    preset = load_preset_model("sms_spam_classifier")
    same = str(tmp_path / "same")
    assert main(["train", "--from", "sms_spam_classifier", "--data",
                 write_tsv(tmp_path / "sms.tsv", slice_pairs("sms_spam_classifier")),
                 "--output", same, "--epochs", "1"]) == 0
    out = capsys.readouterr().out
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "training.md"),
              encoding="utf-8") as handle:  # the first line docs/training.md shows
        (shown,) = [line for line in handle.read().splitlines()
                    if line.startswith("fine-tuning sms_spam_classifier (")]
    assert out.splitlines()[0] == shown.replace("6 epochs", "1 epoch")
    assert "fine-tuning: the source's head and its 2 labels kept" in out
    assert "sms_spam_classifier's card slice (200 examples) accuracy 1 before" in out
    assert first_epoch_loss(same) < 0.2  # a fresh head and encoder start at ln 2 = 0.69
    assert "fine-tuning: kept epoch 1 (validation accuracy " in out
    assert loaded(same).label_names == ["ham", "spam"]

    new = str(tmp_path / "new")  # a run folder as the source; other labels: a new head
    assert main(["train", "--from", same, "--data",
                 write_tsv(tmp_path / "three.tsv", make_examples(60, seed=3)),
                 "--output", new, "--epochs", "1", "--freeze", "encoder"]) == 0
    out = capsys.readouterr().out
    assert "new head for the data's 3 labels (negative, neutral, positive; the source's: " \
           "ham, spam), encoder kept" in out
    tuned = loaded(new)
    assert tuned.label_names == ["negative", "neutral", "positive"]
    assert tuned.preprocessor.tokenizer.vocabulary == preset.preprocessor.tokenizer.vocabulary
    for layer in ("encoder_token_embedding", "encoder_bigram_embedding"):  # frozen
        assert np.array_equal(tuned.get_layer(layer).get_weights()[0],
                              loaded(same).get_layer(layer).get_weights()[0])


def test_tagger_from_a_keras_file_extends_its_character_vocabulary(shared_models, tmp_path,
                                                                   capsys, caplog):
    from tagger_fixtures import EXAMPLES, overfit

    source_model = shared_models.get("tagger-rnn", lambda: overfit("rnn"))  # the tagger tests'
    source = str(tmp_path / "tagger.keras")
    source_model.save(source)
    sentences = [(text.replace("b", "ŵ"), tags) for text, tags in EXAMPLES]  # a new letter
    run = str(tmp_path / "run")
    assert main(["train", "--from", source, "--data", write_tsv(tmp_path / "t.tsv", sentences),
                 "--output", run, "--epochs", "1", "--extend-vocabulary"]) == 0
    out = capsys.readouterr().out
    assert "of the data's text tokens to <unk> (most common: ŵ)" in out + caplog.text
    assert "fine-tuning: vocabulary extended by 1 text tokens (old ids kept)" in out
    assert "fine-tuning: the source's head and its 4 labels kept" in out
    old = source_model.preprocessor.tokenizer.vocabulary
    tuned = loaded(run)
    assert tuned.preprocessor.tokenizer.vocabulary == old + ["ŵ"]
    assert tuned.tag_names == source_model.tag_names
    # The fine-tuned model's export answers in a fresh process without kseq, as it does here.
    from testing import run_export_test

    texts = [text for text, _ in sentences[:4]]
    tuned.export(str(tmp_path / "export" / "1"))
    answer = run_export_test(str(tmp_path / "export" / "1"),
                             {"text": ("serving_default", {"text": texts})})["text"]
    for row, (words, tags) in enumerate(tuned.tag(texts)):
        assert answer["tokens"][row][:len(words)] == words
        assert answer["tags"][row][:len(tags)] == tags


@pytest.mark.parametrize("argv, message", [
    (["--from", "sms_spam_classifier", "sentiment_classifier_tiny"],
     "kseq: error: --from sms_spam_classifier was built with model.dropout=0.3; a fine-tuning "
     "run keeps the source's model and tokenizer, so give a recipe of the same shape, or none "
     "(the source's own is used). Received: model.dropout=0.1\n"),
    (["--from", "sms_spam_classifier", "numbers_fr_tiny"],
     "kseq: error: --from sms_spam_classifier is a classifier; the recipe numbers_fr_tiny is "
     "a translator: give a classifier recipe, or none (the source's own is used). Received: "
     "task='translator'\n"),
    (["--from", "numbers_fr_tiny"], "kseq: error: The preset 'numbers_fr_tiny' ships no "
     "trained weights to fine-tune; train it with `kseq train numbers_fr_tiny --output DIR`, "
     "then fine-tune DIR. Received: --from numbers_fr_tiny\n"),
    (["sms_spam_classifier", "--freeze", "encoder"], "kseq: error: --freeze applies to a "
     "fine-tuning run: add --from SOURCE. Received: --freeze without --from\n"),
    (["--from", "sms_spam_classifier", "--set", "model.embedding_dim=64"],
     "kseq: error: A fine-tuning run keeps the model and tokenizer of --from "
     "sms_spam_classifier; model.embedding_dim cannot change. Received: "
     "model.embedding_dim=64\n"),
])
def test_a_mismatched_from_is_one_line_and_writes_nothing(argv, message, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", *argv, "--output", str(run)]) == 2
    assert capsys.readouterr().err == message
    assert not run.exists()


def test_a_preset_with_weights_trained_on_data_says_it_starts_from_scratch(tmp_path, capsys):
    data = write_tsv(tmp_path / "d.tsv", [("free prize now", "spam")] * 3)
    # a bad value stops the run after the note, before anything is built
    assert main(["train", "sms_spam_classifier", "--data", data, "--output",
                 str(tmp_path / "run"), "--set", "training.epochs=0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("training the sms_spam_classifier recipe from scratch (a new "
                          "vocabulary; its shipped weights are not used); to fine-tune them "
                          "instead: kseq train --from sms_spam_classifier --data ...")
