"""`kseq.models.LanguageModel` (issue 51): the Transformer and RNN language models, conditioned
on a category, their searches, perplexity, saving and export.

Two tiny models are trained once for the module (a conditioned Transformer, a plain GRU);
search checks compare the model's cached search with a recomputation of the whole prefix at
every step.
"""

import collections
import io
import json
import math

import keras
import numpy as np
import pytest
import tensorflow as tf

import kseq
from kseq.decoding import greedy_search, sample
from kseq.errors import KseqError
from kseq.text import END_ID
from testing import run_export_tests

WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight"]


def _corpus():
    """Counting runs: "up" counts up from a word, "down" counts down (the category decides
    the next word, so a model must read it)."""
    pairs = []
    for start in range(len(WORDS)):
        for length in (2, 3, 4, 5):
            up = WORDS[start : start + length]
            down = WORDS[max(0, start - length + 1) : start + 1][::-1]
            pairs += [("up", " ".join(up)), ("down", " ".join(down))]
    return pairs


CORPUS = _corpus()
RECIPE = {"training": {"peak_learning_rate": 0.02, "warmup_steps": 10}}


@pytest.fixture(scope="module")
def trained():
    """`{"transformer": conditioned model, "gru": plain model}`, each overfit on CORPUS."""
    keras.utils.set_random_seed(1)
    models = {
        "transformer": kseq.zoo.language_model(
            "transformer", train_data=CORPUS, recipe=RECIPE, num_layers=1, num_heads=2,
            hidden_dim=16, intermediate_dim=32, dropout=0.0, max_length=12),
        "gru": kseq.zoo.language_model(
            "gru", train_data=[text for _, text in CORPUS], recipe=RECIPE, hidden_dim=16,
            units=24, dropout=0.0, max_length=12),
    }
    for model in models.values():  # 100 steps as one epoch: no per-epoch overhead
        data = CORPUS if model.categories else [text for _, text in CORPUS]
        model.fit(model.preprocessor.training_dataset(data, [12], batch_size=32, repeat=True),
                  steps_per_epoch=100, epochs=1, verbose=0)
    return models


def _recomputing_step(model):
    """A step that re-runs the whole prefix through the teacher-forced graph (no cache):
    the state is the prefix `[N, T]`."""
    def step(token_ids, state, memory, t):
        columns = tf.range(tf.shape(state["ids"])[1])[None, :]
        ids = tf.where(tf.equal(columns, t), token_ids[:, None], state["ids"])
        logits = model({"decoder_ids": ids[:, : t + 1]}, training=False)[:, t]
        return tf.cast(logits, tf.float32), {"ids": ids}
    return step


@pytest.mark.parametrize("arch", ["transformer", "gru"])
def test_cached_search_equals_recomputation_greedy_and_sampled(trained, arch):
    model = trained[arch]
    start = model.preprocessor.category_ids(["up", "down", "up"] if model.categories else
                                            ["", "", ""])
    length = model.max_length
    recompute = _recomputing_step(model)
    prefix = {"ids": tf.zeros([3, length], tf.int32)}
    for sampling in (False, True):
        settings = model.search_settings(1, sampling=sampling, seed=5 if sampling else None,
                                         temperature=1.3)
        ids, _, _ = tf.function(lambda s: model.search(s, settings, compact_finished_rows=False),
                                autograph=False)(start)
        search = sample if sampling else greedy_search
        options = dict(temperature=1.3, seed=5) if sampling else {}
        want, _, _ = tf.function(lambda s: search(recompute, prefix, {"mask": tf.zeros([3, 0])}, s,
                                                  max_length=length, end_id=END_ID, **options),
                                 autograph=False)(start)
        np.testing.assert_array_equal(ids.numpy()[:, 0], want.numpy())
        assert (want.numpy() == END_ID).any(axis=1).all()  # the rows ended


def test_trained_model_continues_by_its_category(trained):
    model = trained["transformer"]
    assert model.generate(["three"], category="up")[0].startswith("four")
    assert model.generate(["six"], category="down")[0].startswith("five")
    # Per-prompt categories, a ragged batch with an empty prompt.
    texts = model.generate(["two", "", "six five"], category=["up", "down", "down"])
    assert texts[0].startswith("three") and texts[2].startswith("four")


@pytest.mark.parametrize("arch", ["transformer", "gru"])
def test_ragged_prompt_batch_equals_each_prompt_alone(trained, arch):
    model = trained[arch]
    prompts = ["one", "", "two three four", "five six", "seven"]
    category = ["up", "down", "up", "down", "up"] if model.categories else None
    for options in ({}, {"beam_size": 3, "n_best": 2}) if model.categories else ({},):
        batch = model.generate(prompts, category, return_scores=True, **options)
        alone = [model.generate([p], None if category is None else category[i],
                                return_scores=True, **options)[0]
                 for i, p in enumerate(prompts)]
        assert [text for text, _ in batch] == [text for text, _ in alone]
        np.testing.assert_allclose([s for _, s in batch], [s for _, s in alone], atol=1e-4)


@pytest.mark.parametrize("arch", ["transformer", "gru"])
def test_teacher_forced_logits_equal_steps_and_prefill(trained, arch):
    model = trained[arch]
    features, _ = model.preprocessor(tf.constant(["up", "down"] if model.categories else
                                                 ["", ""]),
                                     tf.constant(["one two three four", "five six"]))
    ids = features["decoder_ids"].to_tensor()
    forward = model({"decoder_ids": ids}).numpy()
    memory = model.encode(ids[:, 0])
    state = model.initial_state(memory)
    for t in range(ids.shape[1]):
        logits, state = model.step(ids[:, t], state, memory, t)
        real = ids[:, t].numpy() != 0
        np.testing.assert_allclose(logits.numpy()[real], forward[real, t], atol=1e-4)
    if model.prefill is not None:  # the Transformer: positions < 3 in one pass, then a step
        state = model.prefill(ids[:, :3], model.initial_state(memory), memory)
        logits, _ = model.step(ids[:, 3], state, memory, 3)
        np.testing.assert_allclose(logits.numpy()[0], forward[0, 3], atol=1e-4)
        grown, _ = model.search_state(memory)  # a cache of 16 slots that grows: the same
        logits, _ = model.step(ids[:, 3], model.prefill(ids[:, :3], grown, memory), memory, 3)
        np.testing.assert_allclose(logits.numpy()[0], forward[0, 3], atol=1e-4)


@pytest.mark.parametrize("arch", ["transformer", "gru"])
def test_padding_never_changes_a_real_tokens_output(trained, arch):
    model = trained[arch]
    ids = np.array([[model.preprocessor.category_ids(["up"] if model.categories else [""])
                     .numpy()[0], 4, 5, 6]], "int32")
    alone = model({"decoder_ids": ids}).numpy()
    padded = np.zeros((2, 9), "int32")
    padded[0, :4] = ids[0]
    padded[1] = [ids[0, 0], 7, 8, 9, 10, 4, 5, 6, 7]
    together = model({"decoder_ids": padded}).numpy()
    np.testing.assert_allclose(together[0, :4], alone[0], atol=1e-5)


def test_perplexity_below_the_unigram_models_and_wrong_category_worse(trained):
    model = trained["transformer"]
    result = model.perplexity(CORPUS)
    # The unigram model of the same tokens (each text's words and its end token).
    counts = collections.Counter()
    for _, text in CORPUS:
        counts.update(text.split() + ["</s>"])
    total = sum(counts.values())
    unigram = math.exp(-sum(n * math.log(n / total) for n in counts.values()) / total)
    assert result.tokens == total
    assert result.perplexity < 0.5 * unigram, (result.summary(), unigram)
    assert result.cross_entropy == pytest.approx(math.log(result.perplexity))
    assert result.summary().startswith("perplexity ") and "\n" not in result.summary()
    swapped = [({"up": "down", "down": "up"}[c], t) for c, t in CORPUS]
    assert model.perplexity(swapped).perplexity > 1.5 * result.perplexity
    assert model.evaluate(CORPUS)["perplexity"] == pytest.approx(result.perplexity)
    plain = trained["gru"]
    assert plain.evaluate([t for _, t in CORPUS]).perplexity < 0.5 * unigram


def test_unknown_category_is_one_clear_error(trained):
    model = trained["transformer"]
    for call in (lambda: model.generate(["one"], category="sideways"),
                 lambda: model.generate(["one", "two"], category=["up", "sideways"]),
                 lambda: model.perplexity([("sideways", "one two")])):
        with pytest.raises(KseqError, match=r"Unknown category; .*'down', 'up'.*Received: "
                                            r"category='sideways'$"):
            call()
    with pytest.raises(KseqError, match="trained without categories"):
        trained["gru"].generate(["one"], category="up")


def test_keras_round_trip_keeps_categories_and_outputs(trained, tmp_path):
    for arch, model in trained.items():
        path = str(tmp_path / f"{arch}.keras")
        model.save(path)
        restored = keras.saving.load_model(path)
        assert type(restored.decoder) is type(model.decoder)
        assert restored.categories == model.categories
        ids = np.array([[2, 4, 5, 6, 0]], "int32")
        np.testing.assert_allclose(restored({"decoder_ids": ids}), model({"decoder_ids": ids}),
                                   atol=1e-6)
    assert restored.categories == [] and trained["transformer"].categories == ["down", "up"]
    assert restored.perplexity(["one two"]).perplexity == pytest.approx(
        model.perplexity(["one two"]).perplexity, rel=1e-5)


@pytest.mark.slow  # an export traced, one child process
def test_export_answers_in_a_fresh_process(trained, tmp_path):
    """A sampling export: the API's texts and scores for the same seed (a request's rows in
    the order `generate` sorts them: by length), the same answer twice, and an unknown
    category refused."""
    model = trained["transformer"]
    folder = str(tmp_path / "sampled" / "1")
    model.export(folder, sample=True, top_p=0.9, temperature=1.5)
    prompts, categories = ["", "three", "six five"], ["down", "up", "down"]
    want = model.generate(prompts, categories, sample=True, top_p=0.9, temperature=1.5,
                          seed=7, return_scores=True)
    request = {"prompt": prompts, "category": categories, "seed": [7] * 3}
    answers = run_export_tests({"sampled": (folder, {
        "a": ("serving_default", request), "b": ("serving_default", request),
        "unknown": ("serving_default", {"prompt": ["one", "two"], "category": ["sideways",
                                                                             "up"],
                                        "seed": [1, 1]})})}, loop=True)["sampled"]
    assert answers["a"] == answers["b"]  # the same seed: the same texts and scores
    assert [row[0] for row in answers["a"]["text"]] == [text for text, _ in want]
    np.testing.assert_allclose([row[0] for row in answers["a"]["score"]],
                               [scores[0] for _, scores in want], atol=1e-4)
    assert answers["a"]["truncated"] == [False] * 3 and answers["a"]["valid"] == [True] * 3
    unknown = answers["unknown"]  # its row empty and flagged; the batch answered
    assert unknown["valid"] == [False, True] and unknown["text"][0] == [""]
    assert unknown["score"][0] == [0.0] and unknown["text"][1][0] != ""


def test_cli_generate_and_evaluate(trained, tmp_path, capsys, monkeypatch):
    from kseq.cli import main

    model = trained["transformer"]
    path = str(tmp_path / "lm.keras")
    model.save(path)
    # stdin lines as a stream, each naming its category; JSON lines
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"up\ttwo\ndown\tsix five\n")))
    assert main(["generate", path, "--json", "--quiet"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(row["category"], row["prompt"]) for row in rows] == [("up", "two"),
                                                                  ("down", "six five")]
    assert [row["text"][0] for row in rows] == model.generate(["two", "six five"],
                                                              ["up", "down"])
    # --prompt, seeded sampling: the API's texts for the same seed (the export test's
    # settings: the API's search is traced once for both)
    assert main(["generate", path, "--prompt", "", "--prompt", "five", "--category", "down",
                 "--sample", "--top-p", "0.9", "--temperature", "1.5", "--seed", "3",
                 "--count", "2", "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines() == model.generate(
        ["", "", "five", "five"], "down", sample=True, top_p=0.9, temperature=1.5, seed=3)
    # evaluate: text lines and category<TAB>text lines, perplexity in one line
    data = tmp_path / "held_out.txt"
    data.write_text("".join(f"{c}\t{t}\n" for c, t in CORPUS[:10]), encoding="utf-8")
    assert main(["evaluate", path, "--data", str(data)]) == 0
    assert capsys.readouterr().out.strip() == model.perplexity(CORPUS[:10]).summary()


@pytest.mark.slow
def test_cli_trains_a_language_model_recipe(tmp_path, capsys, monkeypatch):
    from kseq.cli import main

    monkeypatch.setenv("KSEQ_HOME", str(tmp_path / "home"))
    run = tmp_path / "run"
    assert main(["train", "number_words_lm_tiny", "--output", str(run), "--epochs", "1",
                 "--set", "data.train_size=60"]) == 0
    out = capsys.readouterr().out
    assert "validation perplexity" in out
    assert main(["evaluate", str(run), "--data", "test"]) == 0
    summary = capsys.readouterr().out.strip()
    assert summary.startswith("perplexity ") and summary.endswith(" 60 texts)")


def test_ctranslate2_export_generates_as_the_keras_model(trained, tmp_path, capsys):
    from kseq.cli import main
    from kseq.ctranslate2 import CTranslate2LanguageModel

    model = trained["transformer"]
    path, folder = str(tmp_path / "lm.keras"), str(tmp_path / "ct2")
    model.save(path)
    assert main(["export", path, "--format", "ctranslate2", "--output", folder]) == 0
    assert "(CTranslate2)" in capsys.readouterr().out
    engine = CTranslate2LanguageModel(folder)
    prompts = ["three", "", "six five", "one two", "eight", "", "seven six five four"]
    categories = ["up", "down", "down", "up", "down", "up", "down"]
    want = model.generate(prompts, categories, return_scores=True)
    got = engine.generate(prompts, categories, return_scores=True)
    assert [text for text, _ in got] == [text for text, _ in want]  # greedy: identical
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-4)
    assert main(["generate", folder, "--prompt", "two", "--category", "up", "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines() == model.generate(["two"], "up")
    with pytest.raises(KseqError, match="Transformer language models only.*GRU"):
        trained["gru"].export_ctranslate2(str(tmp_path / "gru"))


@pytest.mark.slow  # a fine-tuning run traced and trained
def test_cli_fine_tunes_a_language_model_on_new_texts(trained, tmp_path, capsys, monkeypatch):
    from kseq.cli import main
    from kseq.training import load_trained

    monkeypatch.setenv("KSEQ_HOME", str(tmp_path / "home"))
    source, run = str(tmp_path / "lm.keras"), str(tmp_path / "run")
    trained["transformer"].save(source)
    twos = [("up", " ".join(WORDS[start::2][:length]))  # counting in twos: new to the source
            for start in (0, 1) for length in (2, 3, 4)]
    lines = "".join(f"{category}\t{text}\n" for category, text in twos)
    (tmp_path / "twos.tsv").write_text(lines * 20, encoding="utf-8")
    (tmp_path / "valid.tsv").write_text(lines, encoding="utf-8")
    before = trained["transformer"].perplexity(twos).perplexity
    assert main(["train", "--from", source, "--data", str(tmp_path / "twos.tsv"), "--valid",
                 str(tmp_path / "valid.tsv"), "--output", run, "--epochs", "5",
                 "--learning-rate", "0.01"]) == 0
    out = capsys.readouterr().out
    assert "(a language_model, " in out and "peak learning rate 0.01, warm-up 30 steps" in out
    after = load_trained(run).perplexity(twos).perplexity
    assert after < 0.5 * before, (before, after)


def test_data_files_are_text_lines_split_by_the_text(tmp_path):
    import gzip

    from kseq.data.corpus.held_out_split import split_of

    path = tmp_path / "texts.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("a plain text\nsport\tthe team won\n\nmusic\t\nmusic\ta\tsong\n")
    skipped = {}
    rows = list(kseq.models.LanguageModel.table_rows(str(path), skipped=skipped))
    assert rows == [(1, "", "a plain text"), (2, "sport", "the team won"),
                    (5, "music", "a\tsong")]
    assert skipped == {"empty": 2}
    key = kseq.models.LanguageModel.held_out_key("sport", "the team won")
    assert split_of(key) == split_of("the team won")
    with pytest.raises(KseqError, match="--columns does not apply"):
        kseq.models.LanguageModel.table_rows(str(path), columns=("a", "b"))


def test_options_an_architecture_does_not_take_are_one_line():
    with pytest.raises(KseqError, match=r"do not fit a language_model \('gru' language models "
                                        r"take .*; not num_heads\)"):
        kseq.zoo.language_model("gru", train_data=["one two"], num_heads=2)
    with pytest.raises(KseqError, match="arch"):
        kseq.zoo.language_model("transformer", train_data=["one two"], arch="gpt")
