"""A corpus of several files prepared in several processes reads as one pass's."""

import gzip
import logging
import random

import pytest

from kseq.data.corpus.corpus_parts import merge_samples
from kseq.errors import KseqError
from kseq.training import training_data

CLASSIFIER = {"task": "classifier", "model": {"label_names": ["ham", "spam"]}}


def write_files(folder, bad_row=None):
    """Three gzip TSV files of labelled texts, one ragged line each; `bad_row`: (file,
    line) whose label is unknown."""
    rng = random.Random(0)
    words = ["free", "win", "call", "home", "lunch", "meet", "prize", "now"]
    paths = []
    for number in range(3):
        path = folder / f"part-{number}.tsv.gz"
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            for line in range(1, 401):
                label = "spam" if line % 3 == 0 else "ham"
                if bad_row == (number, line):
                    label = "promo"
                text = " ".join(rng.choice(words) for _ in range(rng.randint(2, 6)))
                handle.write(f"{text} {number} {line}\t{label}\n")
            handle.write("a line without a tab\n")
        paths.append(str(path))
    return paths


def prepared(folder, monkeypatch, tmp_path, processes, name, level=logging.WARNING):
    logging.getLogger("kseq").setLevel(level)  # ERROR: as `--quiet` sets it
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path / name))
    monkeypatch.setenv("KSEQ_PREPARATION_PROCESSES", str(processes))
    source = training_data.file_source(str(folder / "*.tsv.gz"))
    return training_data.prepared_corpus(CLASSIFIER, source, report=lambda line: None)


@pytest.mark.slow
def test_two_processes_prepare_what_one_pass_does(tmp_path, monkeypatch, caplog):
    data = tmp_path / "data"
    data.mkdir()
    write_files(data)
    one = prepared(data, monkeypatch, tmp_path, 1, "one", level=logging.ERROR)
    assert not [r for r in caplog.records if r.name == "kseq"]  # quiet: nothing printed
    two = prepared(data, monkeypatch, tmp_path, 2, "two")
    logging.getLogger("kseq").setLevel(logging.NOTSET)
    assert len(two.manifest["shards"]["train"]) == 2  # written by two processes
    for split in ("train", "valid", "test"):
        assert sorted(one.pairs(split)) == sorted(two.pairs(split))
    assert two.manifest["counts"] == one.manifest["counts"]
    assert sum(two.manifest["counts"].values()) == 1200
    assert two.manifest["labels"] == one.manifest["labels"] == {
        "ham": one.manifest["labels"]["ham"], "spam": one.manifest["labels"]["spam"]}
    assert two.manifest["skipped"] == one.manifest["skipped"] == {
        "empty": 0, "ragged": 3, "not_utf8": 0}
    # in the files' order; under --quiet too (kept, not printed)
    assert two.manifest["warnings"] == one.manifest["warnings"] != []
    assert [line.split(":")[0] for line in two.manifest["warnings"]] == \
        [str(data / f"part-{n}.tsv.gz") for n in range(3)]
    sample = two.sample()
    assert len(sample) == len(set(sample)) == two.size("train")  # all: under the size
    assert set(sample) <= set(two.pairs("train"))

    # a bad label in the last file: its file and line, as one pass says it
    bad = tmp_path / "bad"
    bad.mkdir()
    write_files(bad, bad_row=(2, 7))
    with pytest.raises(KseqError, match=r"part-2\.tsv\.gz.* 7.*promo"):
        prepared(bad, monkeypatch, tmp_path, 2, "bad-home")
    assert not [path for path in (tmp_path / "bad-home").rglob("*") if path.is_file()]


def test_a_merged_sample_draws_each_stream_by_its_share():
    big, small = (list(range(50)), 900), (list(range(1000, 1050)), 100)
    from_small = [sum(item >= 1000 for item in merge_samples([big, small], 50, seed))
                  for seed in range(300)]
    assert 4.5 < sum(from_small) / len(from_small) < 5.5  # 50 * 100 / 1000 = 5
    merged = merge_samples([big, small], 50, 0)
    assert len(merged) == len(set(merged)) == 50
    assert merge_samples([big, small], 50, 0) == merged  # seeded
    assert sorted(merge_samples([(list("ab"), 2), (list("c"), 1)], 10, 0)) == list("abc")
