"""TF Serving's `models.config`: read its entries, merge one in, write it atomically.

The file is a text-format `ModelServerConfig`:

    model_config_list {
      config {
        name: "translator"
        base_path: "/models/translator"
        model_platform: "tensorflow"
      }
    }

`merge_models_config` keeps everything already in the file (every other
model's `config { ... }` entry verbatim, with any version policy or label it
has, and comments), replaces the entry of the same name or adds one before
the list's closing brace, and writes the result under a temporary name that
then replaces the file. Names are escaped inside the quoted strings (`"`, `\\`
and control characters). A file that is not a `model_config_list` raises a
`KseqError` naming it, and is left as it was.

Example:
>>> from kseq.export.models_config import merged_text, parse_models_config
>>> text = merged_text("", "a", "/models/a")
>>> [entry["name"] for entry in parse_models_config(merged_text(text, 'say "hi"', "/models/hi"))[0]]
['a', 'say "hi"']
"""

import contextlib
import os
import re

from kseq.atomic_files import atomic_write_text
from kseq.errors import KseqError

_TOKEN = re.compile(r"""
    (?P<space>\s+|\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<word>[A-Za-z0-9_.+-]+)
  | (?P<punct>[{}<>:;,\[\]])
""", re.VERBOSE)
_CLOSERS = {"{": "}", "<": ">"}
_ESCAPES = {"n": b"\n", "t": b"\t", "r": b"\r", "a": b"\a", "b": b"\b", "f": b"\f",
            "v": b"\v", "\\": b"\\", "'": b"'", '"': b'"', "?": b"?"}


class _ParseError(Exception):
    pass


def quote(text):
    """`text` as a double-quoted text-format string."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\{ord(char):03o}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _unquote(token):
    body, out, i = token[1:-1], bytearray(), 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out += char.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1]
        octal = re.match(r"[0-7]{1,3}", body[i + 1:])
        hexa = re.match(r"[xX]([0-9a-fA-F]{1,2})", body[i + 1:])
        if octal:
            out.append(int(octal.group(), 8) & 0xFF)
            i += 1 + len(octal.group())
        elif hexa:
            out.append(int(hexa.group(1), 16))
            i += 1 + len(hexa.group())
        else:
            out += _ESCAPES.get(nxt, nxt.encode("utf-8"))
            i += 2
    return out.decode("utf-8", errors="replace")


def _tokens(text):
    tokens, position = [], 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match:
            line = text.count("\n", 0, position) + 1
            raise _ParseError(f"unexpected {text[position]!r} on line {line}")
        if match.lastgroup != "space":
            tokens.append((match.lastgroup, match.group(), match.start(), match.end()))
        position = match.end()
    return tokens


def _parse_message(tokens, i, closer):
    """Fields until `closer` (None: end of text) -> (fields, index after the closer)."""
    fields = []
    while True:
        if i == len(tokens):
            if closer is None:
                return fields, i
            raise _ParseError(f"missing {closer!r}")
        kind, value, start, _ = tokens[i]
        if closer is not None and value == closer and kind == "punct":
            return fields, i + 1
        if kind != "word":
            raise _ParseError(f"expected a field name, found {value!r}")
        field = {"name": value, "start": start}
        i += 1
        if i < len(tokens) and tokens[i][1] == ":":
            i += 1
        if i == len(tokens):
            raise _ParseError(f"missing the value of {value!r}")
        opener = tokens[i][1]
        if opener in _CLOSERS:
            field["fields"], i = _parse_message(tokens, i + 1, _CLOSERS[opener])
            field["close"] = tokens[i - 1][2]
        else:
            field["value"], i = _parse_value(tokens, i)
        if i < len(tokens) and tokens[i][1] in (";", ","):
            i += 1
        field["end"] = tokens[i - 1][3]
        fields.append(field)


def _parse_value(tokens, i):
    kind, value = tokens[i][0], tokens[i][1]
    if kind == "string":
        parts = []
        while i < len(tokens) and tokens[i][0] == "string":  # "a" "b" is one string
            parts.append(_unquote(tokens[i][1]))
            i += 1
        return "".join(parts), i
    if kind == "word":
        return value, i + 1
    if value == "[":
        values, i = [], i + 1
        while i < len(tokens) and tokens[i][1] != "]":
            if tokens[i][1] == ",":
                i += 1
                continue
            item, i = _parse_value(tokens, i)
            values.append(item)
        if i == len(tokens):
            raise _ParseError("missing ']'")
        return values, i + 1
    raise _ParseError(f"unexpected {value!r}")


def parse_models_config(text, path="models.config"):
    """`(entries, list_field)` of a models.config text; `list_field` is None when empty.

    Each entry is a dict: `name`, `start` and `end` (its text span), `fields`.
    Raises `KseqError` naming `path` for a file that is not a model config list.
    """
    try:
        top, _ = _parse_message(_tokens(text), 0, None)
    except (_ParseError, IndexError) as error:
        raise KseqError(f"{path} is not a readable TF Serving models.config ({error}); fix or "
                        f"remove it. Received: {path}") from None
    if not top:
        return [], None
    lists = [f for f in top if f["name"] == "model_config_list" and "fields" in f]
    if len(lists) != 1 or len(top) != 1:
        raise KseqError(f"{path} must hold one model_config_list {{ ... }} and nothing else "
                        f"(kseq merges its entries). Received: "
                        f"{', '.join(f['name'] for f in top)} in {path}")
    entries = []
    for field in lists[0]["fields"]:
        names = [f.get("value") for f in field.get("fields", []) if f["name"] == "name"]
        if field["name"] != "config" or "fields" not in field or len(names) != 1 \
                or not isinstance(names[0], str):
            raise KseqError(f"{path}: every entry of model_config_list must be config {{ name: "
                            f"... }}. Received: {field['name']} in {path}")
        entries.append({**field, "name": names[0]})
    return entries, lists[0]


def entry_text(name, base_path, model_platform="tensorflow"):
    return (f"  config {{\n    name: {quote(name)}\n    base_path: {quote(base_path)}\n"
            f"    model_platform: {quote(model_platform)}\n  }}\n")


def merged_text(text, name, base_path, model_platform="tensorflow", path="models.config"):
    """`text` with the entry for `name` added, or replaced if it is there."""
    entries, config_list = parse_models_config(text, path)
    entry = entry_text(name, base_path, model_platform)
    if config_list is None:
        return "model_config_list {\n" + entry + "}\n"
    same = [e for e in entries if e["name"] == name]
    if same:
        # Replace the first entry of this name; drop repeats (TF Serving rejects them).
        for extra in reversed(same[1:]):
            text = text[: extra["start"]] + text[extra["end"]:]
        first = same[0]
        return text[: first["start"]] + entry.strip() + text[first["end"]:]
    close = config_list["close"]
    line_start = text.rfind("\n", 0, close) + 1
    if text[line_start:close].strip():  # the brace shares its line with an entry
        return text[:close] + "\n" + entry + text[close:]
    return text[:line_start] + entry + text[line_start:]


def read_models_config(path):
    """The text of `path` ('' when it does not exist), checked to be parseable."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as error:
        raise KseqError(f"Cannot read {path}: {error}. Received: {path}") from None
    parse_models_config(text, path)
    return text


def merge_models_config(path, name, base_path, model_platform="tensorflow"):
    """Adds or replaces `name`'s entry in the models.config at `path`, atomically.

    Holds an exclusive lock on the file's folder meanwhile (POSIX), so two
    exports merging at once both keep their entry.
    """
    with _folder_lock(os.path.dirname(os.path.abspath(path))):
        text = read_models_config(path)
        atomic_write_text(path, merged_text(text, name, base_path, model_platform, path))
    return path


@contextlib.contextmanager
def _folder_lock(folder):
    try:
        import fcntl
    except ImportError:  # Windows: no lock
        yield
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock
