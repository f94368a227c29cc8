"""A missing file is said before TensorFlow loads (issue 49 item 7): `--data` / `--valid`
files, globs and folders, model folders and `.keras` files, `evaluate --data` files (and a
`test` split of a model without a run folder), and the image files of `caption` and of an
image `classify` (checked before the model and its backbone load; each missing one gets its
warning line, exit code 1 when none is left).

The rows run in one fresh process that is the `kseq` command (its `sys.argv[0]`, so
`import kseq` leaves the rooms unimported), through `kseq.cli.main(argv)`, and after each
row the process checks that `tensorflow` is still not in `sys.modules`: time-independent.
"""

import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRESETS = os.path.join(ROOT, "kseq", "presets")

CHILD = """
import contextlib, io, json, sys
sys.argv[0] = "kseq"  # the command: `import kseq` imports no room
from kseq.cli import main
results = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv)
    results.append([code, err.getvalue(), "tensorflow" in sys.modules])
print(json.dumps(results))
"""


def rows(tmp):
    """`(argv, exit code, what each stderr line says)`."""
    gone, data = f"{tmp}/gone", f"{tmp}/pairs.tsv"
    shapes, tiny = f"{tmp}/shapes.keras", f"{tmp}/tiny.keras"
    return [
        (["train", "numbers_fr_tiny", "--output", f"{tmp}/run", "--data", f"{gone}.tsv"], 2,
         [f"No such data file. Received: --data {gone}.tsv"]),
        (["train", "numbers_fr_tiny", "--output", f"{tmp}/run", "--data", f"{gone}/*.tsv"],
         2, [f"No file matches the pattern. Received: --data {gone}/*.tsv"]),
        (["train", "numbers_fr_tiny", "--output", f"{tmp}/run", "--data", data, f"{gone}/"],
         2, [f"No such data file. Received: --data {gone}/"]),  # a missing folder
        (["train", "numbers_fr_tiny", "--output", f"{tmp}/run", "--data", data, "--valid",
          f"{gone}.tsv"], 2, [f"No such data file. Received: --valid {gone}.tsv"]),
        (["translate", gone, "one"], 2, [f"No such model folder or .keras file. Received: "
                                         f"{gone}"]),
        (["export", f"{gone}.keras", "--output", f"{tmp}/serving/m"], 2,
         [f"No such model folder or .keras file. Received: {gone}.keras"]),
        (["tag", tmp, "x"], 2, ["the folder holds no model.keras"]),
        (["classify", data, "x"], 2, ["a .keras file or a preset name, not this file"]),
        (["evaluate", tiny, "--data", f"{gone}.tsv"], 2,
         [f"No such data file (--data takes a TSV or CSV file, or test / valid"]),
        (["evaluate", tiny, "--data", "test"], 2, ["this model has no run folder (recipe.json)"]),
        (["caption", shapes, f"{gone}.png", f"{gone}.jpg"], 1,
         [f"skipped {gone}.png: Cannot read the image file (No such file or directory)",
          f"skipped {gone}.jpg: Cannot read the image file"]),
        (["classify", "imagenet_lite0_classifier", f"{gone}.png"], 1, [f"skipped {gone}.png"]),
        (["caption", gone, f"{gone}.png"], 2, ["No such model folder"]),  # the model first
    ]


def test_missing_files_are_said_before_tensorflow_loads(tmp_path):
    tmp = str(tmp_path)
    (tmp_path / "pairs.tsv").write_text("one\tun\n")
    shutil.copyfile(os.path.join(PRESETS, "shapes_captioner.keras"), tmp_path / "shapes.keras")
    (tmp_path / "tiny.keras").write_bytes(b"a .keras file: read only by the command's model")
    table = rows(tmp)
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps([r[0] for r in table])],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    failures = []
    for (argv, code, said), (got, err, tensorflow) in zip(table, json.loads(done.stdout)):
        lines = err.splitlines()
        if (got != code or tensorflow or len(lines) != len(said)
                or not all(text in line for text, line in zip(said, lines))):
            failures.append((argv, got, err, tensorflow))
    assert failures == []
    assert sorted(os.listdir(tmp_path)) == ["pairs.tsv", "shapes.keras", "tiny.keras"]


def test_the_image_preprocessors_named_are_the_ones_reading_images():
    """`path_checks.IMAGE_PREPROCESSORS` (written out: the check imports no TensorFlow) are
    the preprocessor classes whose `input_kind` is "images"."""
    import kseq.models  # noqa: F401 (every task's preprocessor defined)
    from kseq.cli.path_checks import IMAGE_PREPROCESSORS
    from kseq.models.preprocessors.preprocessor import Preprocessor

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    reading = {cls.__name__ for cls in subclasses(Preprocessor)
               if getattr(cls, "input_kind", None) == "images"}
    assert reading == set(IMAGE_PREPROCESSORS)
