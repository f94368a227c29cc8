"""The `turkish_pos` task: part-of-speech tags of the Turkish Web Treebank (TWT).

The data is Google's Turkish Web Treebank (Kayadelen, Öztürel & Bohnet, LREC
2020), published on PyPI as `turkish-treebanks==1.0.0` (Apache License 2.0:
the wheel's METADATA says "License: Apache 2.0" with the OSI Apache classifier,
and its `LICENSE` file is the Apache 2.0 text). `turkish_pos()` fetches that
wheel once with `pip download --no-deps --only-binary=:all:` into
`$KSEQ_HOME/turkish_pos/` (it is never installed; the sdist holds no data) and
reads `data/web.conllu` and `data/wiki.conllu` out of it with `zipfile`.

Facts checked on the files: 4,851 sentences (web 2,541, wiki 2,310, as the
project README says; not 4,849) and 81,370 tokens. Tokens are the treebank's
own: inflectional groups, so "Açıklanmayan" is four tokens `Açık la nma yan`
(`SpaceAfter=No` joins them in the text); they are kept as they are. The
tags are the UPOS column (the 4th), which this treebank fills with Google's
universal tagset plus two tags (the 14 of `TAGS`), not UD's UPOS; the 5th
column holds fine tags (NN, VB, ...) and is not used.

CoNLL-U details: `#` comment lines are skipped; a multiword-token range line
(`1-2`) is skipped and its word lines kept, and an empty node (`1.1`) is
skipped, as UD tagging does (the tags sit on the word lines). TWT has neither,
so this only matters for other CoNLL-U files given to `parse_conllu`.

Split, as the README advises "for comparable results" (and its API does):
within each file, sentence `i` (from 0) is valid if `i % 10 == 8`, test if
`i % 10 == 9`, train otherwise; web comes before wiki. All sections: train
3,881 / valid 485 / test 485 sentences (64,707 / 8,638 / 8,025 tokens).

Example:
>>> from kseq.data.datasets.turkish_pos import parse_conllu
>>> range_line = "1-2\\tEvmi" + "\\t_" * 8 + "\\n"
>>> text = "# text = Ev mi?\\n" + range_line + \\
...        "1\\tEv\\tev\\tNOUN\\tNN\\t_\\t0\\troot\\t_\\t_\\n" + \\
...        "2\\tmi\\tmi\\tPRT\\tRPQ\\t_\\t1\\tprt\\t_\\t_\\n"
>>> parse_conllu(text)
[(['Ev', 'mi'], ['NOUN', 'PRT'])]
"""

import io
import os
import sys
import zipfile

from kseq.arguments import check_choice
from kseq.data.sources.kseq_home import kseq_home
from kseq.data.sources.pypi_wheels import fetch_wheel as fetch_pypi_wheel
from kseq.errors import KseqError

REQUIREMENT = "turkish-treebanks==1.0.0"
WHEEL = "turkish_treebanks-1.0.0-py3-none-any.whl"
WHEEL_SHA256 = "5a009c29a8e96e8f7e25059d59ac293c3baead6d746bf0fa4c9d3349b1e37ba0"
MEMBERS = {"web": "data/web.conllu", "wiki": "data/wiki.conllu"}  # in the README's order
SECTIONS = ("all", "web", "wiki")
SPLITS = ("train", "valid", "test")
LICENSE = "Apache-2.0"
# Petrov, Das & McDonald's universal tagset, plus ONOM (onomatopoeia) and AFFIX.
TAGS = ("ADJ", "ADP", "ADV", "AFFIX", "CONJ", "DET", "NOUN", "NUM", "ONOM", "PRON", "PRT",
        "PUNCT", "VERB", "X")
_TAG_COLUMN = 3  # UPOS, the 4th column: TWT's coarse (universal) tags


def cache_folder():
    """`$KSEQ_HOME/turkish_pos`: the wheel is kept there."""
    return os.path.join(kseq_home(), "turkish_pos")


def pip_command(folder):
    """The `pip download` command that fetches the wheel into `folder`."""
    return [sys.executable, "-m", "pip", "download", REQUIREMENT, "--no-deps",
            "--only-binary=:all:", "-d", folder]


def split_of(index):
    """The README's split of sentence `index` (from 0) within its file."""
    return "valid" if index % 10 == 8 else ("test" if index % 10 == 9 else "train")


def turkish_pos(section="all"):
    """Builds `{"train", "valid", "test"}` lists of `(tokens, tags)` pairs from TWT.

    `tokens` and `tags` are lists of `str` of equal length: TWT's inflectional
    groups and their tags from `TAGS` (see the module docstring for the
    tokens, the tag column and the README's split, which is used as it is).

    Args:
        section: `"all"` (web then wiki), `"web"` or `"wiki"`.

    The first call downloads the 1.2 MB wheel (one line on stderr); later calls
    read the cached copy (about a second). Licence: Apache-2.0.

    Raises:
        KseqError: a bad `section`; pip cannot fetch the wheel (the message
            gives the command to run by hand); a file is not what it should be.
    """
    check_choice("section", section, SECTIONS)
    names = list(MEMBERS) if section == "all" else [section]
    wheel = fetch_wheel()
    splits = {name: [] for name in SPLITS}
    for name in names:
        for index, pair in enumerate(read_section(wheel, name)):
            splits[split_of(index)].append(pair)
    return splits


def fetch_wheel():
    """The cached wheel's path, downloading it with pip the first time
    (`kseq.data.sources.pypi_wheels.fetch_wheel`: checked, renamed into place whole, so a
    file under that name is always the right one; copying it there works offline)."""
    return fetch_pypi_wheel(REQUIREMENT, WHEEL, WHEEL_SHA256, cache_folder(),
                            "The turkish_pos sentences",
                            pip_command=lambda scratch: pip_command(scratch))


def read_section(wheel, section):
    """The `(tokens, tags)` pairs of one section (`"web"` or `"wiki"`), in file order."""
    member = MEMBERS[section]
    try:
        with zipfile.ZipFile(wheel) as archive:
            data = archive.read(member)
    except (zipfile.BadZipFile, KeyError, OSError) as error:
        raise KseqError(f"{wheel} should be the {REQUIREMENT} wheel holding {member}. "
                        f"Received: {error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise KseqError(f"{member} should be UTF-8 text. Received: {error}") from None
    return parse_conllu(text, source=member)


def parse_conllu(text, source="<text>"):
    """`(tokens, tags)` pairs of the CoNLL-U `text`: FORM and UPOS of each word line.

    Comments, multiword-token ranges (`1-2`) and empty nodes (`1.1`) are
    skipped; word ids must run 1, 2, 3, ... in each sentence, and tags must be
    in `TAGS`.
    """
    sentences, lines = [], []
    for number, line in enumerate(io.StringIO(text), 1):
        line = line.rstrip("\r\n")
        if line.strip():
            lines.append((number, line))
        elif lines:
            sentences.append(_parse_sentence(lines, source))
            lines = []
    if lines:
        sentences.append(_parse_sentence(lines, source))
    return sentences


def _parse_sentence(lines, source):
    tokens, tags = [], []
    for number, line in lines:
        if line.startswith("#"):
            continue
        fields = line.split("\t")
        where = f"{source} line {number}"
        if len(fields) != 10:
            raise KseqError(f"{where} should have 10 tab-separated CoNLL-U fields. "
                            f"Received: {len(fields)} fields in {line[:80]!r}")
        word_id = fields[0]
        if "-" in word_id or "." in word_id:  # a multiword range or an empty node
            continue
        if word_id != str(len(tokens) + 1):
            raise KseqError(f"{where} should have word id {len(tokens) + 1}. "
                            f"Received: {word_id!r}")
        tag = fields[_TAG_COLUMN]
        if tag not in TAGS:
            raise KseqError(f"{where} should have a tag from {TAGS} in its UPOS column. "
                            f"Received: {tag!r}")
        tokens.append(fields[1])
        tags.append(tag)
    if not tokens:
        raise KseqError(f"{source} has a sentence without word lines. "
                        f"Received: line {lines[0][0]}")
    return tokens, tags
