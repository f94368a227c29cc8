"""What a run trains on: file sources, --valid, held-out splits, and bad files before anything
is written."""

import gzip
import os

import pytest

from kseq.cli import main
from kseq.data.corpus.held_out_split import split_of
from kseq.training.run_folder import RunFolder
from kseq.training.training_data import file_source, prepared_corpus

RECIPE = {"task": "translator", "training": {"vocabulary_sample": 50}}


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path / "home"))


def gzip_tsv(path, pairs):
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(f"{s}\t{t}\n" for s, t in pairs)
    return str(path)


def numbers(start, stop):
    return [(f"number {n}", f"nombre {n}") for n in range(start, stop)]


def test_held_out_splits_are_the_same_across_runs_and_never_train(tmp_path):
    gzip_tsv(tmp_path / "a.tsv.gz", numbers(0, 600))
    gzip_tsv(tmp_path / "b.tsv.gz", numbers(600, 1200))
    corpus = prepared_corpus(RECIPE, file_source(str(tmp_path / "*.tsv.gz")))
    train = set(corpus.pairs("train"))
    held_out = set(corpus.pairs("valid")) | set(corpus.pairs("test"))
    assert len(train) + len(held_out) == 1200 and not train & held_out
    assert all(split_of(source) == "valid" for source, _ in corpus.pairs("valid"))
    # the same rows in one file, in another order: the same splits (a new preparation)
    (tmp_path / "other").mkdir()
    gzip_tsv(tmp_path / "other" / "all.tsv.gz", numbers(600, 1200)[::-1] + numbers(0, 600))
    again = prepared_corpus(RECIPE, file_source(str(tmp_path / "other")))
    assert again.folder != corpus.folder and set(again.pairs("test")) == set(
        corpus.pairs("test"))


def test_valid_files_are_the_validation_split_and_the_data_keeps_its_share(tmp_path):
    data = gzip_tsv(tmp_path / "data.tsv.gz", numbers(0, 1000))
    valid = gzip_tsv(tmp_path / "valid.tsv.gz", numbers(5000, 5030))
    source = file_source(data)
    source["valid"] = file_source(valid)
    corpus = prepared_corpus(RECIPE, source)
    assert sorted(corpus.pairs("valid")) == sorted(numbers(5000, 5030))
    trained = set(corpus.pairs("train"))
    moved = [pair for pair in numbers(0, 1000) if split_of(pair[0]) == "valid"]
    assert moved and set(moved) <= trained  # the data's validation share trains
    assert all(split_of(source) == "test" for source, _ in corpus.pairs("test"))


def test_valid_is_recorded_and_a_resume_keeps_it(tmp_path):
    data = gzip_tsv(tmp_path / "data.tsv.gz", numbers(0, 100))
    valid = gzip_tsv(tmp_path / "valid.tsv.gz", numbers(200, 210))
    run = RunFolder(str(tmp_path / "run"))
    source = run.resolve_data_source(data, {}, valid_path=valid)
    os.makedirs(run.path)
    run.record_data_source(source)
    (tmp_path / "run" / "model.keras").write_bytes(b"trained")
    assert run.resolve_data_source(None, {})["valid"]["sha256"] == source["valid"]["sha256"]
    assert run.resolve_data_source(data, {})["valid"]["sha256"] == source["valid"]["sha256"]


@pytest.mark.parametrize("make, message", [
    (lambda folder: (folder / "cut.tsv.gz").write_bytes(
        gzip.compress(b"".join(b"source %d\tcible\n" % n for n in range(5000)))[:3000]),
     "damaged"),
    (lambda folder: None, "No file matches"),
])
def test_a_bad_corpus_is_one_line_and_writes_nothing(tmp_path, capsys, make, message):
    (tmp_path / "corpus").mkdir()
    make(tmp_path / "corpus")
    output = tmp_path / "run"
    assert main(["train", "numbers_fr_tiny", "--data", str(tmp_path / "corpus" / "*.tsv.gz"),
                 "--output", str(output)]) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1
    assert not output.exists()


@pytest.mark.parametrize("name, text, message", [
    ("header.tsv", "text\tlabel\ngreat film\tpositive\ndull film\tnegative\n",
     "line 1 looks like a header ('text', 'label')"),
    ("ids.csv", "id,label,message\n1,ham,see you\n2,spam,win now\n",
     "the first column 'id' looks like a row id"),
])
def test_a_header_read_as_data_is_refused_with_the_columns_hint(tmp_path, name, text, message):
    (tmp_path / name).write_text(text, encoding="utf-8")
    from kseq.errors import KseqError

    with pytest.raises(KseqError, match="--columns") as error:
        prepared_corpus({"task": "classifier"}, file_source(str(tmp_path / name)))
    assert message in str(error.value)


def test_few_held_out_examples_warn_with_the_way_to_give_more(tmp_path):
    from kseq.training.training_data import held_out_warning

    corpus = prepared_corpus(RECIPE, file_source(gzip_tsv(tmp_path / "s.tsv.gz",
                                                          numbers(0, 170))))
    assert "--valid FILE" in held_out_warning(corpus)
    big = prepared_corpus(RECIPE, file_source(gzip_tsv(tmp_path / "b.tsv.gz", numbers(0, 5000))))
    assert held_out_warning(big) is None


def test_a_folder_without_a_model_takes_a_corrected_file_and_a_changed_one_is_named(tmp_path):
    from kseq.errors import KseqError

    data = tmp_path / "data.tsv"
    data.write_text("one\tun\n", encoding="utf-8")
    run = RunFolder(str(tmp_path / "run"))
    os.makedirs(run.path)
    run.record_data_source(run.resolve_data_source(str(data), {}))
    data.write_text("one\tun\ntwo\tdeux\n", encoding="utf-8")  # corrected before any step
    assert run.resolve_data_source(str(data), {})["sha256"] != run.recorded_data_source()[
        "sha256"]
    (tmp_path / "run" / "model.keras").write_bytes(b"a model now")
    with pytest.raises(KseqError, match=r"has changed since \(SHA-256 "):
        run.resolve_data_source(str(data), {})


@pytest.mark.parametrize("recipe, message", [
    ({"training": {"epoch": 1}}, "Unknown recipe key `training.epoch`; did you mean 'epochs'?"),
    ({"training": {"init_from": "x.keras"}}, "Unknown recipe key `training.init_from`"),
    ({"trainig": {}}, "Unknown recipe key `trainig`; did you mean 'training'?"),
])
def test_unknown_recipe_keys_are_refused_with_close_names(recipe, message):
    from kseq.errors import KseqError
    from kseq.training.recipe_checks import check_recipe

    with pytest.raises(KseqError) as error:
        check_recipe(recipe)
    assert message in str(error.value)
