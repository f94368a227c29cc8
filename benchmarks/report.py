"""Shared by the benchmark scripts: print the result as JSON and keep a copy."""

import json


def emit(result, path=None):
    """Prints `result` as indented JSON and writes the same text to `path` when given."""
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
