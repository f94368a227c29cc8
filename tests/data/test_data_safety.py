"""Caches that a kill or a second process cannot corrupt, `read_mo` at scale, and argument checks.

Real processes race and get killed for the WordPiece cache (two children,
~10 s on 2 cores); the LibreOffice builder runs with a fake
`apt-get download` / `dpkg-deb -x` (tar files), so no apt or network is needed.
"""

import json
import logging
import os
import signal
import struct
import subprocess
import sys
import tarfile
import threading
import time

import pytest

from kseq.models import recipes
from kseq.atomic_files import TEMPORARY_PREFIX
from kseq.data import bucket_batch_sizes, bucket_by_length, filter_by_length, numbers_dataset
from kseq.data.datasets import libreoffice, libreoffice_packages
from kseq.data.sources import debian_packages
from kseq.data.datasets.libreoffice import build_from_tree, clean_and_split, libreoffice_dataset
from kseq.data.datasets.libreoffice_packages import LibreOfficeDataError
from kseq.data.datasets.mo_catalog import read_mo
from kseq.data.pipeline.parallel_text import read_tsv
from kseq.errors import KseqError
from kseq.text.vocabulary_cache import (
    VocabularyFileError,
    parse_vocabulary,
    read_vocabulary_file,
    vocabulary_text,
    wordpiece_cache_path,
)
from kseq.text.wordpiece_tokenizer import WordPieceTokenizer
from test_libreoffice import make_tree

TEXTS = [f"the quick brown fox number {i} jumps over the lazy dog" for i in range(40)] + [
    "unbelievable understandings reorganisation", "reorganised misunderstandings"]
MAX_SIZE = 60
RESERVED = ["<pad>", "<unk>", "<s>", "</s>"]

# --- WordPiece vocabulary cache ------------------------------------------------------------

CHILD = r"""
import json, os, sys, time
import kseq.atomic_files as atomic_files
from kseq.text.vocabulary_cache import cached_wordpiece
import keras_hub  # imported before the first command, so both builders start together

with open(sys.argv[1]) as handle:
    texts = json.load(handle)
fsync, mode = atomic_files._fsync_file, None
def before_rename(path):  # the last moment before the temporary file gets the final name
    if mode == "kill":
        with open(path, "r+b") as handle:  # and torn, as a kill mid-write leaves it
            handle.truncate(os.path.getsize(path) // 2)
        print("stalled", flush=True)
        time.sleep(600)
    time.sleep(1.0)  # both racers hold a written temporary file at the same time
    fsync(path)
atomic_files._fsync_file = before_rename
print("ready", flush=True)
for line in sys.stdin:  # "<race|kill> <KSEQ_HOME>"
    mode, home = line.split()
    folder = os.path.join(home, "vocabularies")
    print(json.dumps(cached_wordpiece(texts, %d, {}, folder).vocabulary), flush=True)
""" % MAX_SIZE


def _reply(child, log_path):
    line = child.stdout.readline()
    assert line, open(log_path).read()[-3000:]
    return line.strip()


@pytest.fixture(scope="module")
def child_runs(tmp_path_factory):
    """Two children build the same vocabulary at once; then one is SIGKILLed before a rename.

    Two processes only (each imports TensorFlow): the first also does the kill run.
    """
    base = tmp_path_factory.mktemp("children")
    texts_path = base / "texts.json"
    texts_path.write_text(json.dumps(TEXTS))
    shared, killed = base / "shared", base / "killed"
    logs = [base / "a.log", base / "b.log"]
    children = []
    try:
        for log_path in logs:
            with open(log_path, "w") as log:
                children.append(subprocess.Popen(
                    [sys.executable, "-c", CHILD, str(texts_path)], stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=log, text=True,
                    env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")))
        for child, log_path in zip(children, logs):
            assert _reply(child, log_path) == "ready"
        for child in children:
            child.stdin.write(f"race {shared}\n")
            child.stdin.flush()
        vocabularies = [json.loads(_reply(c, log_path)) for c, log_path in zip(children, logs)]
        children[0].stdin.write(f"kill {killed}\n")
        children[0].stdin.flush()
        assert _reply(children[0], logs[0]) == "stalled"
        children[0].send_signal(signal.SIGKILL)
        assert children[0].wait(timeout=60) == -signal.SIGKILL
        children[1].stdin.close()
        assert children[1].wait(timeout=60) == 0
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    return {"shared": shared, "killed": killed, "vocabularies": vocabularies}


@pytest.fixture(scope="module")
def learned():
    return WordPieceTokenizer.build_vocabulary(TEXTS, max_size=MAX_SIZE).vocabulary


def _no_learning(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the vocabulary was learned again instead of read from the cache")
    monkeypatch.setattr(WordPieceTokenizer, "build_vocabulary", classmethod(refuse))


@pytest.mark.slow
def test_two_concurrent_builders_leave_one_whole_cache_that_a_third_run_reads(
        child_runs, monkeypatch, caplog):
    first, second = child_runs["vocabularies"]
    assert first == second and first[:4] == RESERVED and len(first) == MAX_SIZE
    folder = child_runs["shared"] / "vocabularies"
    path = wordpiece_cache_path(str(folder), TEXTS, MAX_SIZE, {})
    assert os.listdir(folder) == [os.path.basename(path)]  # no temporary file left behind
    assert read_vocabulary_file(path, require_marker=True) == first
    monkeypatch.setenv("KSEQ_HOME", str(child_runs["shared"]))
    _no_learning(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="kseq"):
        assert recipes._cached_wordpiece(TEXTS, MAX_SIZE, {}).vocabulary == first
    assert not caplog.records


@pytest.mark.slow
def test_a_killed_builder_leaves_no_file_that_is_trusted(child_runs, monkeypatch):
    folder = child_runs["killed"] / "vocabularies"
    left = os.listdir(folder)
    assert len(left) == 1 and left[0].startswith(TEMPORARY_PREFIX)  # never the final name
    with pytest.raises(VocabularyFileError, match="no end marker"):
        read_vocabulary_file(folder / left[0], require_marker=True)
    monkeypatch.setenv("KSEQ_HOME", str(child_runs["killed"]))
    rebuilt = recipes._cached_wordpiece(TEXTS, MAX_SIZE, {}).vocabulary
    assert rebuilt == child_runs["vocabularies"][0]


def test_every_cut_or_altered_vocabulary_file_is_refused():
    tokens = RESERVED + ["chat", "##on", "é", "x\u2028y"]  # U+2028 is no line break here
    data = vocabulary_text(tokens).encode("utf-8")
    assert parse_vocabulary(data, require_marker=True) == tokens
    assert parse_vocabulary(data) == tokens
    for cut in range(len(data)):  # every prefix, including the empty file
        with pytest.raises(VocabularyFileError):
            parse_vocabulary(data[:cut], require_marker=True)
    marker_start = data.rindex(b"\n#kseq-vocabulary") + 6  # past "#kseq"
    for cut in range(marker_start, len(data)):  # cut inside the marker: never a plain file
        with pytest.raises(VocabularyFileError, match="end marker"):
            parse_vocabulary(data[:cut])
    altered = data.replace(b"chat", b"chut")
    with pytest.raises(VocabularyFileError, match="checksum"):
        parse_vocabulary(altered)  # a marker is checked even where not required
    # Plain user files (no marker) keep working, whatever their newlines.
    assert parse_vocabulary(b"<pad>\r\n<unk>\r\n\r\n<s>\n</s>") == RESERVED
    with pytest.raises(VocabularyFileError, match="not UTF-8"):
        parse_vocabulary(b"<pad>\n\xff\n")


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["empty", "cut_at_a_line", "older_kseq_without_marker",
                                    "no_reserved_tokens"])
def test_a_damaged_cache_file_is_ignored_with_a_warning_and_rebuilt(
        damage, learned, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path))
    full = learned
    path = wordpiece_cache_path(str(tmp_path / "vocabularies"), TEXTS, MAX_SIZE, {})
    os.makedirs(os.path.dirname(path))
    lines = [f"{token}\n" for token in full]
    # A cut at a line boundary keeps the reserved tokens: the old cache trusted it and
    # silently trained with a smaller vocabulary.
    damaged = {"empty": "", "cut_at_a_line": "".join(lines[: len(lines) // 2]),
               "older_kseq_without_marker": "".join(lines),
               "no_reserved_tokens": vocabulary_text(full[4:])}[damage]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(damaged)
    with caplog.at_level(logging.WARNING, logger="kseq"):
        assert recipes._cached_wordpiece(TEXTS, MAX_SIZE, {}).vocabulary == full
    [record] = caplog.records
    assert "Ignoring the cached WordPiece vocabulary" in record.getMessage()
    assert path in record.getMessage() and "\n" not in record.getMessage()
    assert read_vocabulary_file(path, require_marker=True) == full  # overwritten, whole


def test_an_unreadable_vocabulary_argument_is_a_one_line_error_naming_the_file(tmp_path):
    with pytest.raises(KseqError, match=r"Cannot read .*Received: '.*missing\.txt'"):
        recipes.make_tokenizer(str(tmp_path / "missing.txt"), {"kind": "word"})
    altered = tmp_path / "altered.txt"
    altered.write_bytes(vocabulary_text(RESERVED + ["a", "b"]).encode().replace(b"a\n", b"z\n"))
    with pytest.raises(KseqError, match="checksum.*altered.txt"):
        recipes.make_tokenizer(str(altered), {"kind": "word"})


# --- LibreOffice builder -----------------------------------------------------------------

PACKAGE_PARTS = {  # which part of the fixture tree each fake package holds
    "libreoffice-help-en-us": ["usr/share/libreoffice/help/en-US"],
    "libreoffice-help-fr": ["usr/share/libreoffice/help/fr", "usr/share/doc"],
    "libreoffice-l10n-fr": ["usr/lib"],
}


class FakeApt:
    """`apt-get download` writes tar files named like debs; `dpkg-deb -x` extracts them."""

    def __init__(self, tree, barrier=None, fail=False):
        self.tree, self.barrier, self.fail = tree, barrier, fail
        self.unpacked = []

    def __call__(self, command, cwd=None, timeout=600):
        if command[:2] == ["apt-get", "download"]:
            for name in command[2:]:
                path = os.path.join(cwd, f"{name}_1%3a7.4.7-1_all.deb")
                if self.fail:  # a dropped connection: half a file, then an error
                    with open(path, "wb") as handle:
                        handle.write(b"!<arch>\npartial")
                    return subprocess.CompletedProcess(command, 100, "", "E: connection reset")
                with tarfile.open(path, "w") as archive:
                    for part in PACKAGE_PARTS[name]:
                        archive.add(os.path.join(self.tree, part), arcname=part)
            if self.barrier:
                self.barrier.wait(timeout=30)  # both builders are downloading now
            return subprocess.CompletedProcess(command, 0, "", "")
        if command[:2] == ["dpkg-deb", "-x"]:
            self.unpacked.append(os.path.basename(command[2]))
            with tarfile.open(command[2]) as archive:
                archive.extractall(command[3])
            return subprocess.CompletedProcess(command, 0, "", "")
        raise AssertionError(f"unexpected command {command}")


@pytest.fixture
def fake_apt(tmp_path, monkeypatch):
    tree = tmp_path / "fixture_tree"
    make_tree(str(tree))
    monkeypatch.setattr(libreoffice_packages, "_require_tools", lambda: None)
    monkeypatch.setattr(libreoffice_packages, "_ensure_apt_lists", lambda: None)
    monkeypatch.setattr(libreoffice_packages, "offered_languages", lambda: ["de", "fr"])

    def install(**options):
        apt = FakeApt(str(tree), **options)
        monkeypatch.setattr(debian_packages, "_run", apt)
        return apt

    expected, _ = build_from_tree(str(tree), "fr", held_out_percent=50, progress=lambda m: None)
    return install, expected


def _temporary_entries(folder):
    found = []
    for parent, names, files in os.walk(folder):
        found += [os.path.join(parent, n) for n in names + files if n.startswith(TEMPORARY_PREFIX)]
    return found


def test_only_the_named_packages_just_downloaded_are_unpacked(fake_apt, tmp_path):
    install, expected = fake_apt
    apt = install()
    cache = tmp_path / "cache"
    (cache / "debs").mkdir(parents=True)
    stray = tmp_path / "stray"
    (stray / "usr/share/stray").mkdir(parents=True)
    with tarfile.open(cache / "debs/libreoffice-help-de_1_all.deb", "w") as archive:
        archive.add(stray / "usr", arcname="usr")  # another language's package
    # A half download with a final-looking name, left by an older kseq that was killed.
    (cache / "debs/libreoffice-help-fr_0.9_all.deb").write_bytes(b"!<arch>\ntorn")
    splits = libreoffice_dataset("fr", held_out_percent=50, cache_dir=str(cache))
    assert splits == expected
    assert sorted(apt.unpacked) == sorted(f"{name}_1%3a7.4.7-1_all.deb"
                                          for name in PACKAGE_PARTS)
    assert not (cache / "root/usr/share/stray").exists()
    assert (cache / "root/.unpacked").read_text().split() == apt.unpacked
    assert not _temporary_entries(cache)


def test_a_failed_download_leaves_no_deb_or_tree_that_is_trusted(fake_apt, tmp_path):
    install, expected = fake_apt
    install(fail=True)
    cache = tmp_path / "cache"
    with pytest.raises(LibreOfficeDataError, match="connection reset"):
        libreoffice_dataset("fr", held_out_percent=50, cache_dir=str(cache))
    assert os.listdir(cache) == ["debs"] and os.listdir(cache / "debs") == []
    install()
    assert libreoffice_dataset("fr", held_out_percent=50, cache_dir=str(cache)) == expected


def test_two_concurrent_builders_share_the_cache_folder_safely(fake_apt, tmp_path):
    install, expected = fake_apt
    install(barrier=threading.Barrier(2))
    cache = str(tmp_path / "cache")
    results, errors = [], []

    def build():
        try:
            results.append(libreoffice_dataset("fr", held_out_percent=50, cache_dir=cache))
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors and results == [expected, expected]
    assert sorted(os.listdir(cache)) == ["debs", "root", "v1-held50"]
    assert len(os.listdir(os.path.join(cache, "debs"))) == 3
    assert not _temporary_entries(cache)
    assert libreoffice.read_split_folder(os.path.join(cache, "v1-held50")) == expected


@pytest.mark.parametrize("damage", ["no_report", "cut_train_tsv", "older_kseq_report",
                                    "report_not_json"])
def test_a_damaged_split_cache_is_ignored_with_a_warning_and_rebuilt(
        damage, fake_apt, tmp_path, caplog):
    install, expected = fake_apt
    install()
    cache = tmp_path / "cache"
    assert libreoffice_dataset("fr", held_out_percent=50, cache_dir=str(cache)) == expected
    folder = cache / "v1-held50"
    report = folder / "report.json"
    if damage == "no_report":  # an interrupted build of an older kseq
        report.unlink()
    elif damage == "cut_train_tsv":
        data = (folder / "train.tsv").read_bytes()
        (folder / "train.tsv").write_bytes(data[: len(data) // 2])
    elif damage == "older_kseq_report":
        report.write_text(json.dumps({k: v for k, v in json.loads(report.read_text()).items()
                                      if k != "files"}))
    else:
        report.write_text('{"sizes": {"tra')
    with caplog.at_level(logging.WARNING, logger="kseq"):
        assert libreoffice_dataset("fr", held_out_percent=50, cache_dir=str(cache)) == expected
    [record] = caplog.records
    assert "Ignoring the cached splits" in record.getMessage()
    assert "\n" not in record.getMessage()
    assert libreoffice.read_split_folder(str(folder)) == expected  # rewritten whole
    assert read_tsv(str(folder / "train.tsv"))[0] == expected["train"]
    assert not _temporary_entries(cache)


# --- read_mo -----------------------------------------------------------------------------


def _catalog(pairs, order="<"):
    """A gettext catalog of `pairs` (bytes), built with joins (linear in its size)."""
    header = 7 * 4
    originals, translations = header, header + 8 * len(pairs)
    offset = translations + 8 * len(pairs)
    tables, blob = ([], []), []
    for side in (0, 1):
        for pair in pairs:
            tables[side].append(struct.pack(order + "2I", len(pair[side]), offset))
            blob.append(pair[side] + b"\0")
            offset += len(pair[side]) + 1
    magic = 0x950412DE
    head = struct.pack(order + "7I", magic, 0, len(pairs), originals, translations, 0, 0)
    return head + b"".join(tables[0]) + b"".join(tables[1]) + b"".join(blob)


def test_read_mo_is_linear_on_a_200k_entry_catalog(tmp_path):
    pairs = [(f"message {i:06d}".encode(), f"nachricht {i} é".encode()) for i in range(200_000)]
    pairs[7] = (b"one file", b"une fichier\0des fichiers")  # plural forms: the first one
    pairs[8] = (b"no translation", b"")  # dropped, as msgfmt's untranslated entries
    path = tmp_path / "big.mo"
    path.write_bytes(_catalog(pairs))
    started = time.perf_counter()
    entries = read_mo(str(path))
    elapsed = time.perf_counter() - started  # ~0.3 s; the old reader took minutes
    assert len(entries) == 199_999, elapsed
    assert entries[7] == ("one file", "une fichier")
    assert entries[8] == ("message 000009", "nachricht 9 é")
    assert entries[-1] == ("message 199999", "nachricht 199999 é")
    big_endian = tmp_path / "big_endian.mo"
    big_endian.write_bytes(_catalog(pairs[:50], order=">"))
    assert read_mo(str(big_endian)) == entries[:49]


@pytest.mark.parametrize("cut", ["header", "tables", "strings"])
def test_read_mo_refuses_a_cut_catalog_naming_the_file(cut, tmp_path):
    data = _catalog([(b"open", b"ouvrir"), (b"close", b"fermer")])
    end = {"header": 12, "tables": 40, "strings": len(data) - 3}[cut]
    path = tmp_path / "cut.mo"
    path.write_bytes(data[:end])
    with pytest.raises(ValueError, match=r"Received: .*cut\.mo"):
        read_mo(str(path))


# --- arguments ---------------------------------------------------------------------------

BAD_ARGUMENTS = [
    (numbers_dataset, dict(train_size=-5), "train_size=-5"),
    (numbers_dataset, dict(valid_size=-1), "valid_size=-1"),
    (numbers_dataset, dict(test_size=2.5), "test_size=2.5"),
    (numbers_dataset, dict(train_size=True), "train_size=True"),
    (numbers_dataset, dict(train_size="100"), "train_size='100'"),
    (numbers_dataset, dict(train_size=None), "train_size=None"),
    (numbers_dataset, dict(seed=-1), "seed=-1"),
    (numbers_dataset, dict(seed=0.5), "seed=0.5"),
    (numbers_dataset, dict(train_size=0, valid_size=0, test_size=0), "train_size=0"),
    (numbers_dataset, dict(train_size=1_000_000, valid_size=1), "valid_size=1"),
    (numbers_dataset, dict(target_language="xx"), "target_language='xx'"),
    (numbers_dataset, dict(target_language=["fr"]), "target_language=['fr']"),
    (numbers_dataset, dict(source="letters"), "source='letters'"),
    (libreoffice_dataset, dict(held_out_percent=0), "held_out_percent=0"),
    (libreoffice_dataset, dict(held_out_percent=101), "held_out_percent=101"),
    (libreoffice_dataset, dict(held_out_percent=6.0), "held_out_percent=6.0"),
    (libreoffice_dataset, dict(held_out_percent=True), "held_out_percent=True"),
    (libreoffice_dataset, dict(held_out_percent="6"), "held_out_percent='6'"),
    (libreoffice_dataset, dict(target_language="xx"), "target_language='xx'"),
    (libreoffice_dataset, dict(cache_dir=5), "cache_dir=5"),
    (lambda **k: clean_and_split([], [], **k), dict(held_out_percent=-1), "held_out_percent=-1"),
    (lambda **k: bucket_batch_sizes([8], **k), dict(batch_size=0), "batch_size=0"),
    (lambda **k: bucket_batch_sizes([8], **k), dict(batch_size=2.5), "batch_size=2.5"),
    (lambda **k: bucket_batch_sizes([8], **k), dict(token_budget=-64), "token_budget=-64"),
    (lambda **k: bucket_batch_sizes([8], **k), dict(batch_size=4, token_budget=64),
     "batch_size=4, token_budget=64"),
    (bucket_by_length, dict(boundaries=[], batch_size=4), "boundaries=[]"),
    (bucket_by_length, dict(boundaries=[0, 8], batch_size=4), "boundaries=[0, 8]"),
    (bucket_by_length, dict(boundaries=8, batch_size=4), "boundaries=8"),
    (filter_by_length, dict(max_length=0), "max_length=0"),
    (filter_by_length, dict(max_length=None), "max_length=None"),
]


@pytest.mark.parametrize("function, arguments, received", BAD_ARGUMENTS,
                         ids=[f"{i}-{r}" for i, (_, _, r) in enumerate(BAD_ARGUMENTS)])
def test_bad_data_arguments_get_one_line_naming_them(function, arguments, received, tmp_path,
                                                     monkeypatch):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path))
    if function is libreoffice_dataset and "cache_dir" not in arguments:
        arguments = dict(arguments, cache_dir=str(tmp_path / "cache"))
    with pytest.raises(KseqError) as caught:
        function(**arguments)
    message = str(caught.value)
    assert "\n" not in message and "Received: " in message and received in message, message
    assert os.listdir(tmp_path) == []  # nothing was written or downloaded


def test_zero_sized_splits_are_allowed_and_numpy_integers_accepted():
    import numpy as np

    splits = numbers_dataset("fr", train_size=0, valid_size=np.int64(0), test_size=3, seed=2)
    assert [len(splits[name]) for name in ("train", "valid", "test")] == [0, 0, 3]
    assert bucket_batch_sizes((np.int32(16), 8), token_budget=64) == [8, 4]
