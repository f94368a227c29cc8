"""The corpus layer: files of any kind, one preparation pass, token shards read per epoch."""

import gzip
import os

import pytest
import tensorflow as tf

from kseq.data.corpus.corpus_files import corpus_files
from kseq.data.corpus.corpus_preparation import CorpusRow, prepare_corpus
from kseq.data.corpus.held_out_split import split_of
from kseq.data.corpus.prepared_corpus import PreparedCorpus
from kseq.data.corpus.token_store import TokenStore
from kseq.data.pipeline.parallel_text import ParallelTextError, iter_table_rows
from kseq.errors import KseqError

QUIET = dict(report=lambda line: None)


def gzip_tsv(path, pairs):
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(f"{s}\t{t}\n" for s, t in pairs)
    return str(path)


def test_a_file_a_glob_a_folder_and_a_list_name_the_same_files(tmp_path):
    first = gzip_tsv(tmp_path / "part-1.tsv.gz", [("a", "b")])
    second = gzip_tsv(tmp_path / "part-2.tsv.gz", [("c", "d")])
    (tmp_path / "README.md").write_text("not data")
    both = [first, second]
    assert corpus_files(str(tmp_path)) == both
    assert corpus_files(str(tmp_path / "*.tsv.gz")) == both
    assert corpus_files([second, first, first]) == both
    assert corpus_files(first) == [first]


@pytest.mark.parametrize("spec, message", [
    ("missing.tsv", "No such data file"),
    ("nothing-*.tsv", "No file matches"),
    ("empty-folder", "holds no data file"),
])
def test_a_name_that_gives_no_file_is_one_line(tmp_path, spec, message):
    (tmp_path / "empty-folder").mkdir()
    with pytest.raises(KseqError, match=message):
        corpus_files(str(tmp_path / spec))


def test_csv_and_tsv_files_are_not_mixed(tmp_path):
    (tmp_path / "a.tsv").write_text("x\ty\n")
    (tmp_path / "b.csv").write_text("x,y\n")
    with pytest.raises(KseqError, match="mixes CSV and TSV"):
        corpus_files(str(tmp_path))


def test_gzip_rows_stream_with_their_line_numbers(tmp_path):
    path = gzip_tsv(tmp_path / "c.tsv.gz", [("one", "un"), ("", "vide"), ("two", "deux")])
    skipped = {"empty": 0, "ragged": 0, "not_utf8": 0}
    rows = iter_table_rows(path, skipped=skipped)
    assert next(rows) == (1, "one", "un")  # a generator: nothing read ahead into a list
    assert list(rows) == [(3, "two", "deux")] and skipped["empty"] == 1


def test_a_gzip_csv_is_read_by_its_header(tmp_path):
    path = tmp_path / "c.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write('id,en,fr\n1,"one, two","un, deux"\n')
    assert list(iter_table_rows(str(path), ("en", "fr"))) == [(2, "one, two", "un, deux")]


def test_a_cut_gzip_file_is_one_line_naming_file_and_line(tmp_path):
    whole = gzip_tsv(tmp_path / "whole.tsv.gz",
                     [(f"source {n} " * 20, "cible") for n in range(2000)])
    data = open(whole, "rb").read()
    cut = tmp_path / "cut.tsv.gz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ParallelTextError) as error:
        list(iter_table_rows(str(cut)))
    message = str(error.value)
    assert f"{cut}:" in message and "damaged" in message and "\n" not in message


def rows(count, split=None):
    return (CorpusRow("mem", n, f"{n} apples", f"{n} pommes", split) for n in range(count))


def test_preparation_splits_by_hash_and_samples_within_its_bound(tmp_path):
    manifest = prepare_corpus(rows(2000), str(tmp_path / "c"), sample_size=100, seed=1, **QUIET)
    corpus = PreparedCorpus(str(tmp_path / "c"))
    for split in ("train", "valid", "test"):
        pairs = corpus.pairs(split)
        assert len(pairs) == manifest["counts"][split]
        assert all(split_of(source) == split for source, _ in pairs)
    sample = corpus.sample()
    assert len(sample) == 100 and set(sample) <= set(corpus.pairs("train"))
    again = prepare_corpus(rows(2000), str(tmp_path / "d"), sample_size=100, seed=1, **QUIET)
    assert PreparedCorpus(str(tmp_path / "d")).sample() == sample and again["counts"] == \
        manifest["counts"]


def test_every_label_reaches_the_sample(tmp_path):
    rare = next(n for n in range(1500, 2000) if split_of(f"text {n}") == "train")
    labelled = [CorpusRow("mem", n, f"text {n}", "rare" if n == rare else "common")
                for n in range(2000)]
    prepare_corpus(iter(labelled), str(tmp_path / "c"), sample_size=10, labels=True, **QUIET)
    corpus = PreparedCorpus(str(tmp_path / "c"))
    assert {label for _, label in corpus.sample()} == {"rare", "common"}
    assert corpus.labels["rare"] == 1 and len(corpus.sample()) <= 12  # + each first row


def test_a_killed_preparation_leaves_nothing_readable(tmp_path):
    def broken():
        yield from rows(10)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        prepare_corpus(broken(), str(tmp_path / "c"), **QUIET)
    assert not os.path.exists(tmp_path / "c")
    assert not [name for name in os.listdir(tmp_path) if not name.startswith(".")]


def test_token_store_epochs_are_permutations_reproducible_and_different(tmp_path):
    examples = tf.data.Dataset.range(500).map(lambda n: ({"ids": tf.fill([n % 5 + 1], n)}, n))
    store = TokenStore.build(str(tmp_path / "t"), examples.ragged_batch(16), shards=3, chunk=16)
    order = lambda epoch: [int(y) for _, y in store.epoch(seed=7, epoch=epoch, window=50)]
    first = order(0)
    assert sorted(first) == list(range(500)) and store.size == 500
    assert order(0) == first  # the same epoch, read again (as a resumed run does)
    assert order(1) != first and sorted(order(1)) == sorted(first)
    reopened = TokenStore(str(tmp_path / "t"))
    assert [int(y) for _, y in reopened.epoch(7, 0, 50)] == first
    ids = [int(i) for i, _ in store.epoch(7, 0, 50, with_ids=True)]
    assert sorted(ids) == list(range(500))


def test_batches_counted_a_chunk_at_a_time_match_one_at_a_time():
    from kseq.data.pipeline.bucketing import count_bucketed_batches, count_bucketed_chunks

    examples = tf.data.Dataset.range(300).map(
        lambda n: ({"source_ids": tf.fill([n % 11 + 1], n),
                    "decoder_ids": tf.fill([n % 5 + 2], n)}, tf.fill([n % 5 + 2], n)))
    for boundaries, options in (([4, 8], {"batch_size": 7}), ([3, 6, 9], {"token_budget": 20})):
        one = count_bucketed_batches(examples.filter(lambda f, l: tf.size(f["source_ids"]) <= max(
            boundaries)), boundaries, **options)
        assert count_bucketed_chunks(examples.ragged_batch(64), boundaries, **options) == one


def test_plain_fit_trains_on_a_glob_of_files(tmp_path, monkeypatch):
    import kseq

    monkeypatch.setenv("KSEQ_HOME", str(tmp_path / "home"))
    pairs = [(f"number {n}", f"nombre {n}") for n in range(40)]
    gzip_tsv(tmp_path / "a.tsv.gz", pairs[:20])
    gzip_tsv(tmp_path / "b.tsv.gz", pairs[20:])
    model = kseq.zoo.translator("rnn", train_data=pairs, units=8)
    batches = model.preprocessor.training_dataset(str(tmp_path / "*.tsv.gz"), [8], batch_size=8)
    assert int(batches.cardinality()) == 5  # every row trains: 40 pairs, one bucket
    history = model.fit(batches, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2 and history.history["loss"][1] < 20
