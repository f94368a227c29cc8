"""The files of a `kseq train` output folder, and the data source it was trained on.

`data_source.json` records what a run trained on: a TSV or CSV file (absolute
path, SHA-256 and the header `columns` it was read by, null for the default) or
the recipe's data builder. A resumed or continued run, and `kseq evaluate
--data test|valid`, use the recorded source (its columns too); passing another
one, or other columns, is refused with a message instead of silently switching
data. Folders written before this file existed fall back to the recipe's builder.

Example:
>>> import tempfile
>>> from kseq.training.run_folder import RunFolder
>>> run = RunFolder(tempfile.mkdtemp())
>>> source = run.resolve_data_source(None, {"data": {"builder": "numbers"}})
>>> source["kind"], run.recorded_data_source()
('builder', None)
"""

import contextlib
import csv
import json
import os
import re
import shutil

from kseq.atomic_files import (TEMPORARY_PREFIX, atomic_path, atomic_write_json,
                               atomic_write_text)
from kseq.errors import KseqError
from kseq.training.recipe_checks import check_continuation


# The files a run records about itself; a discarded run puts them back as they were.
RECORDS = ("recipe.json", "data_source.json", "model_config.json", "history.csv", "curves.png")


def check_output_folder(path):
    """`path` must be a folder or not exist yet; a file there is refused."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise KseqError(f"The output must be a folder, not a file. Received: --output {path}")
    parent = os.path.dirname(os.path.abspath(path))
    probe = path if os.path.isdir(path) else parent
    while probe and not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if probe and not os.access(probe, os.W_OK | os.X_OK):
        raise KseqError(f"The output folder is not writable ({probe}). Received: --output {path}")


class RunFolder:
    """Paths and metadata of one training output folder."""

    def __init__(self, path):
        self.path = path

    def file(self, name):
        return os.path.join(self.path, name)

    @property
    def model_path(self):
        return self.file("model.keras")

    @property
    def backup_folder(self):
        return self.file("backup")

    def remove_partial_files(self):
        """Deletes temporary files a killed save left (one trainer per folder at a time)."""
        if not os.path.isdir(self.path):
            return
        for name in os.listdir(self.path):
            path = os.path.join(self.path, name)
            if name.startswith(TEMPORARY_PREFIX) and os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)  # a backup/ renamed for deletion
            elif name.startswith(TEMPORARY_PREFIX):
                with contextlib.suppress(OSError):
                    os.remove(path)

    def snapshot(self, names=RECORDS):
        """`{name: bytes, or None when absent}` of the folder's record files now."""
        kept = {}
        for name in names:
            try:
                with open(self.file(name), "rb") as handle:
                    kept[name] = handle.read()
            except FileNotFoundError:
                kept[name] = None
        return kept

    def restore(self, snapshot):
        """Puts the files of `snapshot` back as they were (removing those that were absent)."""
        for name, data in snapshot.items():
            if data is None:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(self.file(name))
            else:
                with atomic_path(self.file(name)) as scratch, open(scratch, "wb") as handle:
                    handle.write(data)

    def recorded_data_source(self):
        """The recorded source dict, or None (a new folder, or one from an older kseq)."""
        path = self.file("data_source.json")
        if not os.path.isfile(path):
            return None
        try:
            with open(path, encoding="utf-8") as handle:
                source = json.load(handle)
            if source.get("kind") == "file":
                if not isinstance(source["path"], list):
                    source["path"] = str(source["path"])
                source["sha256"] = str(source["sha256"])
                source["files"] = [str(f) for f in source.get("files") or [source["path"]]]
                source["columns"] = _checked_columns(source.get("columns"))
            elif source.get("kind") != "builder":
                raise ValueError(f"unknown kind {source.get('kind')!r}")
            return source
        except (OSError, ValueError, KeyError, AttributeError) as error:
            raise KseqError(f"{path} is unreadable ({error}); delete it to train on the data "
                            f"given now. Received: {path}") from None

    def recorded_recipe(self):
        """The `recipe.json` of an earlier run into this folder, or None."""
        path = self.file("recipe.json")
        if not os.path.isfile(path):
            return None
        try:
            with open(path, encoding="utf-8") as handle:
                recipe = json.load(handle)
            if not isinstance(recipe, dict):
                raise ValueError("not a JSON object")
            return recipe
        except (OSError, ValueError) as error:
            raise KseqError(f"{path} is unreadable ({error}); train into a new --output. "
                            f"Received: {path}") from None

    def holds_a_model(self):
        """Whether a run goes on from this folder's `model.keras` or checkpoints."""
        if os.path.isfile(self.model_path):
            return True
        with contextlib.suppress(OSError):
            return any(re.fullmatch(r"step-\d+\.json", name)
                       for name in os.listdir(self.backup_folder))
        return False

    def check_recipe_change(self, recipe):
        """Refuses a changed task, model or tokenizer for a folder that holds a model
        (`kseq.training.recipe_checks.check_continuation`)."""
        if self.holds_a_model():
            check_continuation(self.recorded_recipe(), recipe, self.path)

    def resolve_data_source(self, data_path, recipe, columns=None, valid_path=None):
        """The source to train on: `data_path` (read by its header `columns`, `(input,
        target)`), the recorded one, or the recipe's builder.

        Refuses a source that differs from the recorded one: another builder, a file with
        other content, or other `columns` (none given: the recorded ones). A folder that
        holds no model yet (a run stopped before its first checkpoint) is not bound to
        what it recorded: the data given now replaces it.
        """
        recorded = self.recorded_data_source()
        columns = None if columns is None else [str(name) for name in columns]
        recorded_file = recorded if recorded is not None and recorded["kind"] == "file" else None
        if data_path:
            from kseq.training.training_data import file_source

            given = file_source(data_path, columns)  # a file, several, a glob or a folder
            if recorded is not None and not self.holds_a_model() and \
                    recorded.get("sha256") != given["sha256"]:
                recorded = recorded_file = None  # nothing trained on it: a corrected file
            if columns is None and recorded_file and recorded_file["sha256"] == given["sha256"]:
                given["columns"] = recorded_file["columns"]  # the same file, read as before
            if valid_path:
                given["valid"] = file_source(valid_path, given["columns"])
            elif recorded_file and recorded_file["sha256"] == given["sha256"] \
                    and recorded_file.get("valid"):
                given["valid"] = recorded_file["valid"]  # the same validation files
        elif valid_path:
            raise KseqError(f"--valid gives the validation files of a --data corpus; pass "
                            f"--data too. Received: --valid {valid_path}")
        elif columns is not None and recorded_file is None:
            raise KseqError(f"--columns picks the columns of a --data file; pass --data FILE "
                            f"too. Received: --columns {','.join(columns)}")
        elif recorded_file is not None and columns not in (None, recorded_file["columns"]):
            given = dict(recorded_file, columns=columns)  # other columns: refused below
        elif recorded is not None and recorded["kind"] == "builder" and "data" in recipe:
            given = {"kind": "builder", "data": recipe["data"]}  # a changed builder: refused
        elif recorded is not None:
            given = recorded
        else:
            if "data" not in recipe:
                raise KseqError("This recipe names no data builder: pass --data FILE.tsv. "
                                "Received: no --data")
            given = {"kind": "builder", "data": recipe["data"]}
        if recorded is not None and not _same_source(recorded, given):
            if given["kind"] == "file" and recorded.get("path") == given.get("path") and \
                    recorded.get("columns") == given.get("columns"):
                raise KseqError(
                    f"The data this run trained on has changed since (SHA-256 "
                    f"{recorded.get('sha256', '')[:12]}..., now {given['sha256'][:12]}...); "
                    f"restore it or train into a new --output. Received: "
                    f"{describe_source(given)}")
            raise KseqError(
                f"This run folder was trained on {describe_source(recorded)}; resume with the "
                f"same data or train into a new --output. Received: {describe_source(given)}")
        if given["kind"] == "file" and given is recorded:
            from kseq.data.corpus.corpus_files import fingerprint

            gone = [path for path in given["files"] if not os.path.isfile(path)]
            if gone:
                raise KseqError(f"The data file this run trained on is gone; pass it again "
                                f"with --data. Received: {gone[0]}")
            now = fingerprint(given["files"])
            if now != recorded.get("sha256"):
                raise KseqError(f"The data this run trained on has changed since (SHA-256 "
                                f"{recorded.get('sha256', '')[:12]}..., now {now[:12]}...); "
                                f"restore it or train into a new --output. Received: "
                                f"{describe_source(given)}")
        return given

    def record_data_source(self, source):
        atomic_write_json(self.file("data_source.json"), source)

    def keep_history_before(self, epoch):
        """Drops `history.csv` rows of epoch `epoch` and later: a resumed run logs them again."""
        path = self.file("history.csv")
        if not os.path.isfile(path):
            return
        with open(path, encoding="utf-8", newline="") as handle:
            lines = handle.read().splitlines(keepends=True)
        if not lines:
            return
        kept = [lines[0]] + [line for line in lines[1:] if _epoch_of(line) < epoch]
        if len(kept) != len(lines):
            atomic_write_text(path, "".join(kept))

    def logged_rows(self):
        """Epoch rows already in `history.csv` (a resumed run keeps drawing the same curves)."""
        path = self.file("history.csv")
        if not os.path.isfile(path):
            return []
        rows = []
        with open(path, encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                try:
                    rows.append({k: float(v) for k, v in row.items()
                                 if k not in ("epoch", None) and v not in ("", None)})
                except (TypeError, ValueError):  # a row cut by a kill: skip it
                    continue
        return rows


def _epoch_of(csv_line):
    try:
        return int(csv_line.split(",", 1)[0])
    except ValueError:  # a row cut by a kill
        return 1 << 62


def _same_source(recorded, given):
    """The same builder spec, or a file with the same content (wherever it now lies)."""
    if recorded is given:
        return True
    if recorded.get("kind") != given.get("kind"):
        return False
    if given["kind"] == "file":
        return (recorded.get("sha256") == given["sha256"]
                and recorded.get("columns") == given.get("columns")
                and (recorded.get("valid") or {}).get("sha256")
                == (given.get("valid") or {}).get("sha256"))
    return recorded.get("data") == given.get("data")


def _checked_columns(columns):
    """A recorded `columns`: None or two column names."""
    if columns is not None and not (isinstance(columns, list) and len(columns) == 2
                                    and all(isinstance(name, str) and name for name in columns)):
        raise ValueError(f"columns must be null or two names, not {columns!r}")
    return columns


def describe_source(source):
    if source.get("kind") == "file":
        columns, path = source.get("columns"), source.get("path")
        path = " ".join(path) if isinstance(path, list) else path
        valid = (source.get("valid") or {}).get("path")
        valid = " ".join(valid) if isinstance(valid, list) else valid
        return f"--data {path}" + (f" --columns {','.join(columns)}" if columns else "") + \
            (f" --valid {valid}" if valid else "")
    return f"the recipe's data builder {json.dumps(source.get('data'), sort_keys=True)}"
