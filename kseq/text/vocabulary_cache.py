"""Vocabulary files, and the WordPiece cache that a kill or a second process cannot corrupt.

A vocabulary file holds one token per line. A file kseq writes ends with one
more line, the end marker, which says how many tokens come before it and
their SHA-256:

    <pad>
    ...
    #kseq-vocabulary v1 tokens=8000 sha256=3f1c...

A cut file has no marker (or a wrong checksum), so it is never mistaken for a
smaller vocabulary. A token never holds a space (tokenizers split on
whitespace), so the marker line cannot be a token.

WordPiece learning takes minutes on a real corpus, so `cached_wordpiece` keeps
its result in a folder (`$KSEQ_HOME/vocabularies/`), keyed by a hash of the
texts and the options. Each writer uses its own temporary name
(`kseq.atomic_files`) and renames it over the final name, so two processes
building the same vocabulary at once both finish with a whole file; a cached
file that fails the checks is ignored with a one-line warning and rebuilt.

Example:
>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
>>> write_vocabulary_file(path, ["<pad>", "<unk>", "<s>", "</s>", "chat"])
>>> read_vocabulary_file(path, require_marker=True)
['<pad>', '<unk>', '<s>', '</s>', 'chat']
"""

import contextlib
import hashlib
import json
import logging
import os
import sys
import time

from kseq.atomic_files import TEMPORARY_PREFIX, atomic_write_text
from kseq.errors import KseqError

logger = logging.getLogger("kseq")

MARKER = "#kseq-vocabulary"
_STALE_SECONDS = 3600  # a temporary file this old belongs to a writer that died


class VocabularyFileError(KseqError):
    """A vocabulary file that cannot be read, or that is cut or altered."""


def vocabulary_text(tokens):
    """The file contents for `tokens`: one token a line, then the end marker."""
    body = "".join(f"{token}\n" for token in tokens)
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    return f"{body}{MARKER} v1 tokens={len(tokens)} sha256={digest}\n"


def write_vocabulary_file(path, tokens):
    """Writes `tokens` with the end marker, atomically (temporary name + rename)."""
    tokens = list(tokens)
    bad = [token for token in tokens if not token or any(c in token for c in "\r\n")]
    if bad:
        raise VocabularyFileError("Vocabulary tokens must be non-empty and hold no line break. "
                                  f"Received: {bad[0]!r}")
    atomic_write_text(path, vocabulary_text(tokens))


def parse_vocabulary(data, require_marker=False):
    """Tokens from a file's bytes; raises `VocabularyFileError` (without the path) if bad.

    Bytes ending in the end marker must match it exactly. Other bytes are a
    plain vocabulary (one token a line, blank lines skipped, any newline
    convention), accepted unless `require_marker`.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise VocabularyFileError(f"not UTF-8 ({error.reason} at byte {error.start})") from None
    body, _, last = text[:-1].rpartition("\n") if text.endswith("\n") else ("", "", "")
    if text.rpartition("\n")[2].startswith(MARKER[:5]):  # "#kseq...": a marker line, cut
        raise VocabularyFileError(f"its end marker `{MARKER} ...` is cut")
    if not last.startswith(MARKER + " "):
        if require_marker:
            raise VocabularyFileError(f"no end marker `{MARKER} ...`: the file is cut or was "
                                      "not written by kseq")
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        return [line for line in lines if line]
    body = body + "\n" if body else ""
    fields = dict(field.partition("=")[::2] for field in last.split()[2:])
    tokens = body.split("\n")[:-1]
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    if last.split()[1:2] != ["v1"] or fields.get("sha256") != digest:
        raise VocabularyFileError("its checksum does not match its end marker")
    if fields.get("tokens") != str(len(tokens)) or not all(tokens):
        raise VocabularyFileError("its token count does not match its end marker")
    return tokens


def read_vocabulary_file(path, require_marker=False):
    """Tokens of the vocabulary file `path` (see `parse_vocabulary`).

    Raises `VocabularyFileError` naming the file when it cannot be read or
    fails the checks.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise VocabularyFileError(f"Cannot read the vocabulary file ({error.strerror}). "
                                  f"Received: {os.fspath(path)!r}") from None
    try:
        return parse_vocabulary(data, require_marker)
    except VocabularyFileError as error:
        raise VocabularyFileError(f"The vocabulary file is unusable: {error}. "
                                  f"Received: {os.fspath(path)!r}") from None


def wordpiece_cache_path(folder, texts, max_size, spec):
    """`folder/wordpiece-<hash of options and texts>.txt`."""
    digest = hashlib.sha1(json.dumps([max_size, spec], sort_keys=True).encode("utf-8"))
    for text in texts:
        digest.update(text.encode("utf-8") + b"\0")
    return os.path.join(folder, f"wordpiece-{digest.hexdigest()[:16]}.txt")


def cached_wordpiece(texts, max_size, spec, folder):
    """A `WordPieceTokenizer` learned from `texts`, read from `folder` when cached there.

    A cached file that is cut, altered or not a valid vocabulary is ignored
    with a warning and replaced by a freshly learned one. A folder that cannot
    be written only costs the next run the same learning time.
    """
    from kseq.text.wordpiece_tokenizer import WordPieceTokenizer

    texts = list(texts)
    path = wordpiece_cache_path(folder, texts, max_size, spec)
    if os.path.exists(path):
        try:
            return WordPieceTokenizer(read_vocabulary_file(path, require_marker=True), **spec)
        except ValueError as error:  # VocabularyFileError, or no reserved tokens / duplicates
            logger.warning("Ignoring the cached WordPiece vocabulary %s and rebuilding it: %s",
                           path, str(error).replace("\n", " "))
    # Learning takes minutes on a large corpus: say so rather than sit silent.
    print(f"[wordpiece] learning a {max_size}-entry vocabulary from {len(texts):,} texts "
          f"(minutes on a large corpus; cached in {folder})", file=sys.stderr, flush=True)
    started = time.perf_counter()
    tokenizer = WordPieceTokenizer.build_vocabulary(texts, max_size=max_size, **spec)
    print(f"[wordpiece] {tokenizer.vocabulary_size} entries learned in "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    try:
        os.makedirs(folder, exist_ok=True)
        write_vocabulary_file(path, tokenizer.vocabulary)
    except OSError as error:
        logger.warning("WordPiece vocabulary not cached in %s (%s)", folder, error)
    _remove_stale_temporary_files(folder)
    return tokenizer


def _remove_stale_temporary_files(folder):
    """Deletes temporary files that killed writers left over an hour ago."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if entry.name.startswith(TEMPORARY_PREFIX) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    if time.time() - entry.stat().st_mtime > _STALE_SECONDS:
                        os.remove(entry.path)
