"""The package imports in one direction: no module imports a room above its own.

Every `import` / `from` node in `kseq/` is read, including those inside
functions (a lazy import is still a dependency):
`{text, data (pipeline, sources, datasets), decoding, metrics, export and the shared helpers}
< {layers, presets} < models < zoo < training < cli, demo`.
"""

import ast
import pathlib

import kseq

PACKAGE = pathlib.Path(kseq.__file__).parent
# Top-level modules not named by the order: helpers every room may use sit at the
# bottom; the training run's own pieces sit with `training`.
RANKS = {"text": 0, "data.pipeline": 0, "data.sources": 0, "data.datasets": 0, "data": 0,
         "decoding": 0, "metrics": 0, "export": 0, "version": 0, "errors": 0, "arguments": 0,
         "atomic_files": 0,
         "layers": 1, "presets": 1, "models": 2, "zoo": 3, "training": 4, "cli": 5, "demo": 5}


def _room(module):
    """`kseq.models.task` -> "models"; the package itself (`kseq`) -> None."""
    parts = [part for part in module.split(".") if part != "__init__"]
    if len(parts) > 2 and parts[:2] == ["kseq", "data"]:
        return f"data.{parts[2]}"  # data's rooms: pipeline, sources, datasets
    return parts[1] if len(parts) > 1 and parts[0] == "kseq" else None


def _imports(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module == "kseq":  # `from kseq import zoo` imports kseq.zoo
                yield from (f"kseq.{alias.name}" for alias in node.names)
            else:
                yield node.module


def test_every_module_has_a_rank():
    rooms = {_room("kseq." + ".".join(p.relative_to(PACKAGE).with_suffix("").parts))
             for p in PACKAGE.rglob("*.py") if p.parent != PACKAGE or p.name != "__init__.py"}
    assert rooms <= set(RANKS), sorted(rooms - set(RANKS))


def test_no_module_imports_a_room_above_its_own():
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE)
        if relative == pathlib.Path("__init__.py"):
            continue  # the package re-exports every room
        own = _room("kseq." + ".".join(relative.with_suffix("").parts))
        for module in _imports(path):
            room = _room(module)
            if module == "kseq":
                wrong.append(f"{relative}: import kseq (the whole package)")
            elif room is not None and RANKS[room] > RANKS[own]:
                wrong.append(f"{relative} ({own}) imports {module} ({room})")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_export_knows_nothing_about_text_models_or_layers():
    for path in (PACKAGE / "export").rglob("*.py"):
        rooms = {_room(module) for module in _imports(path)}
        assert not rooms & {"text", "models", "layers"}, (path.name, rooms)
