"""Shared by the benchmark scripts: print the result as JSON and keep a copy."""

import json


def emit(result, path=None):
    """Prints `result` as indented JSON and writes the same text to `path` when given."""
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")


def cpu_flags():
    """The CPU's vector-instruction flags (AVX*, AMX*, FMA), recorded with every figure."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            flags = next((line.split(":", 1)[1].split() for line in handle
                          if line.startswith("flags")), [])
    except OSError:
        flags = []
    return sorted(f for f in flags if f.startswith(("avx", "amx", "fma")))
