"""The package imports in one direction: no module imports a room above its own.

Every `import` / `from` node in `kseq/` is read, including those inside
functions (a lazy import is still a dependency):
`{text, data (pipeline, sources, datasets), decoding, metrics, export and the shared helpers}
< {layers, presets, ctranslate2} < models < zoo < training < cli, demo`.
Inside `models`, the shared bases and parts sit below the task folders, and no
task folder imports another (`MODEL_RANKS`). Over all of `kseq`, the module
graph has no cycle (`test_no_import_cycle`).
"""

import ast
import collections
import pathlib

import kseq

PACKAGE = pathlib.Path(kseq.__file__).parent
# Top-level modules not named by the order: helpers every room may use sit at the
# bottom; the training run's own pieces sit with `training`.
RANKS = {"text": 0, "data.pipeline": 0, "data.sources": 0, "data.datasets": 0, "data.corpus": 0,
         "data": 0,
         "decoding": 0, "metrics": 0, "export": 0, "version": 0, "errors": 0, "arguments": 0,
         "atomic_files": 0,
         "layers": 1, "presets": 1, "ctranslate2": 1,
         "models": 2, "zoo": 3, "training": 4, "cli": 5, "demo": 5}


def _room(module):
    """`kseq.models.task` -> "models"; the package itself (`kseq`) -> None."""
    parts = [part for part in module.split(".") if part != "__init__"]
    if len(parts) > 2 and parts[:2] == ["kseq", "data"]:
        return f"data.{parts[2]}"  # data's rooms: pipeline, sources, datasets, corpus
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


# === Inside kseq.models ===

# The first name below `kseq.models`: preprocessors, part plumbing and the helpers of the
# task bases (recipes, evaluation results, schedules, the optimizer), then the parts (encoders,
# decoders), then the task bases, then one folder per task (`TASK_FOLDERS`), none of
# which imports another.
MODEL_RANKS = {"part": 0, "part_catalog": 0, "preprocessors": 0, "schedules": 0, "fused_adam": 0,
               "real_rows_train_step": 0, "recipes": 0, "evaluation_result": 0,
               "renamed_arguments": 0, "recipe_values": 0, "label_spellings": 0,
               "encoders": 1, "decoders": 1,
               "task": 2, "generative_task": 2, "encoder_decoder_task": 2,
               "vocabulary_extension": 2, "raw_examples": 0, "saved_files": 0,
               "ctranslate2_layers": 0,
               "translator": 3, "captioner": 3, "classifier": 3, "tagger": 3,
               "language_model": 3}
TASK_FOLDERS = {room for room, rank in MODEL_RANKS.items() if rank == 3}


def _module_name(path):
    """`kseq/models/task.py` -> "kseq.models.task"; `kseq/text/__init__.py` -> "kseq.text"."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _ancestors(module):
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def _edges(module, source, is_package, modules):
    """`(imported kseq module, line)` for every import node of `module`'s `source`.

    `from kseq.x import y` with `y` a module is an edge to `kseq.x.y`; importing
    `kseq.x.y` also runs the `__init__` of `kseq.x`, so that is an edge too,
    unless `kseq.x` is `module`'s own package (already running when it is imported).
    """
    package = module if is_package else module.rpartition(".")[0]
    own = _ancestors(module) | {module}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: `from . import x`, `from ..y import z`
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            targets = [(base, alias.name) for alias in node.names]
        else:
            continue
        for target, name in targets:
            if target.split(".")[0] != "kseq":
                continue
            if name is not None and f"{target}.{name}" in modules:
                yield f"{target}.{name}", node.lineno
                if target not in own:
                    yield target, node.lineno
            elif target != module:
                yield target, node.lineno
            yield from ((parent, node.lineno) for parent in sorted(_ancestors(target) - own))


def _graph(modules):
    """`{module: {imported module: (file, line)}}` over `modules` (`{name: path}`)."""
    graph = {module: {} for module in modules}
    for module, path in modules.items():
        source = path.read_text(encoding="utf-8")
        for target, line in _edges(module, source, path.name == "__init__.py", modules):
            if target != module:
                graph[module].setdefault(target, f"{path.relative_to(PACKAGE.parent)}:{line}")
    return graph


def _reach(graph, start):
    """`{module: the module it was reached from}` for every module `start` reaches."""
    came_from, queue = {}, collections.deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(graph.get(node, ())):
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    return came_from


def _cycles(graph):
    """One shortest cycle per group of modules that import each other (a strongly
    connected component), through its first module, printed with each import's line."""
    reach = {module: _reach(graph, module) for module in graph}
    printed, seen = [], set()
    for start in sorted(graph):
        if start in seen or start not in reach[start]:
            continue
        seen |= {module for module in reach[start] if start in reach[module]}
        path = [start]
        while path[-1] != start or len(path) == 1:
            path.append(reach[start][path[-1]] if len(path) > 1 else reach[start][start])
        path = path[::-1]  # start -> ... -> start, read forward
        printed.append(" -> ".join(f"{a} ({graph[a][b]})" for a, b in zip(path, path[1:]))
                       + f" -> {start}")
    return printed


def _model_room(module):
    """`kseq.models.translator.legacy` -> "translator"; outside a models room -> None."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["kseq", "models"] else None


def test_every_models_module_has_a_rank():
    rooms = {_model_room(module) for module in MODULES} - {None}
    assert rooms <= set(MODEL_RANKS), sorted(rooms - set(MODEL_RANKS))


def test_inside_models_bases_and_parts_sit_below_the_task_folders():
    wrong = []
    for module, imports in _graph(MODULES).items():
        own = _model_room(module)
        if own is None:
            continue
        for target, where in imports.items():
            room = _model_room(target)
            if room is None or room == own:
                continue
            if MODEL_RANKS[room] > MODEL_RANKS[own]:
                wrong.append(f"{where}: {module} ({own}) imports {target} ({room}), a rank above")
            elif own in TASK_FOLDERS and room in TASK_FOLDERS:
                wrong.append(f"{where}: task folder {own} imports task folder {room}")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycle():
    cycles = _cycles(_graph(MODULES))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_cycle_check_sees_lazy_imports_submodules_and_package_inits(tmp_path):
    files = {
        "kseq/__init__.py": "",
        "kseq/a/__init__.py": "from kseq.a.one import ONE\nfrom kseq.a import two\n",
        "kseq/a/one.py": "ONE = 1\n",
        "kseq/a/two.py": "def later():\n    from kseq.b.low import LOW\n    return LOW\n",
        "kseq/b/__init__.py": "from kseq.b import low\n",
        "kseq/b/low.py": "from . import high\nLOW = 0\n",
        "kseq/b/high.py": "import kseq.a.one\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    modules = {".".join(pathlib.Path(name).with_suffix("").parts[:-1] if name.endswith(
        "__init__.py") else pathlib.Path(name).with_suffix("").parts): tmp_path / name
        for name in files}
    graph = {module: {} for module in modules}
    for module, path in modules.items():
        for target, line in _edges(module, path.read_text(encoding="utf-8"),
                                   path.name == "__init__.py", modules):
            if target != module:
                graph[module].setdefault(target, f"{path.name}:{line}")
    assert graph["kseq.a"] == {"kseq.a.one": "__init__.py:1", "kseq.a.two": "__init__.py:2"}
    assert graph["kseq.a.two"] == {"kseq.b.low": "two.py:2", "kseq.b": "two.py:2"}
    assert graph["kseq.b.low"] == {"kseq.b.high": "low.py:1"}
    assert graph["kseq.b.high"] == {"kseq.a.one": "high.py:1", "kseq.a": "high.py:1"}
    # kseq.a -> a.two -> (lazily) b.low -> b.high -> kseq.a (its __init__ runs first)
    assert _cycles(graph) == ["kseq.a (__init__.py:2) -> kseq.a.two (two.py:2) -> kseq.b.low "
                              "(low.py:1) -> kseq.b.high (high.py:1) -> kseq.a"]
    del graph["kseq.b.high"]["kseq.a"], graph["kseq.b.high"]["kseq.a.one"]
    assert _cycles(graph) == []
