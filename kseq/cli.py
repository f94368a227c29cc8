"""The `kseq` command: presets, train, translate, caption, classify, tag, evaluate, export.

Every error is one line, `kseq: error: ...`, with exit code 2: bad arguments
(named, with the value received), unreadable files, failed writes, and a
training loss that became NaN. `caption` and an image `classify` take each
file on its own: every readable file gets its output, each one that cannot be
read a `kseq: warning:` line naming it, and the exit code is then 1.
`main(argv)` returns the exit code, so it also runs in-process.

Start-up is quiet and fast. `kseq --help`, `kseq COMMAND --help`, `--version`
and `presets` import no TensorFlow (the package loads its rooms on first use in
this process, see `kseq/__init__.py`; this module imports TensorFlow only inside
the commands). Run as the `kseq` command (`main()` without `argv`), the
process's own stderr is filtered at the file-descriptor level before TensorFlow
loads: TensorFlow's and absl's lines (the absl pre-init warning, oneDNN and CUDA
notices, `WARNING:tensorflow:` lines), which no environment variable silences,
are dropped, every other line passes (`--verbose` keeps them all).
"""

import argparse
import contextlib
import difflib
import json
import logging
import os
import re
import subprocess
import sys

from kseq.arguments import check_float, check_int
from kseq.errors import KseqError, one_line

# TensorFlow's and absl's own lines: absl's C++ log lines (`I0000 00:00:1796.27 22963 port.cc:153]
# ...`, severity I, W or E; F, a fatal error, is kept), absl's pre-init warning, the
# continuation of TensorFlow's CPU-feature notice, and TensorFlow's and absl's Python loggers.
TENSORFLOW_LINE = (rb"^(?:[IWE]\d{4} [\d:.]+\s+\d+ \S+:\d+\] "
                   rb"|WARNING: All log messages before absl::InitializeLog\(\) is called"
                   rb"|To enable the following instructions: .*rebuild TensorFlow"
                   rb"|(?:INFO|WARNING):(?:tensorflow|absl):)")
# The filter runs in a child process of its own (`python -I -S`: ~30 ms), so that a process
# that dies (a fatal TensorFlow error, a kill) still gets its last lines written out.
_FILTER = r"""
import re, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops kseq, which closes the pipe
noise = re.compile(sys.argv[1].encode("latin-1"))
for line in sys.stdin.buffer:
    if not noise.match(line):
        sys.stderr.buffer.write(line)
        sys.stderr.buffer.flush()
"""


def is_tensorflow_line(line):
    """Whether `line` (str or bytes) is one of TensorFlow's or absl's own lines."""
    data = line.encode("utf-8", "replace") if isinstance(line, str) else line
    return re.match(TENSORFLOW_LINE, data) is not None


@contextlib.contextmanager
def tensorflow_lines_filtered():
    """Within the block, file descriptor 2 is a pipe into a child process that writes every
    line except TensorFlow's and absl's (`is_tensorflow_line`) to the original stderr.
    Where that cannot be set up (no pipe, no interpreter), stderr is left as it is."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        child = subprocess.Popen([sys.executable, "-I", "-S", "-c", _FILTER,
                                  TENSORFLOW_LINE.decode("latin-1")],
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=saved)
    except OSError:
        os.close(saved)
        yield
        return
    os.dup2(child.stdin.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)  # fd 2 lets go of the pipe: the child reads to its end and exits
        os.close(saved)
        child.stdin.close()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a grandchild still holds the pipe
            pass


class _UsageError(Exception):
    """argparse's complaint, turned into one line instead of usage text and `sys.exit`."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(message)


def _integer(minimum):
    """An argparse type: the text as an integer >= `minimum` (kseq.arguments' check)."""
    def parse(text):
        try:
            return check_int("value", int(text), minimum=minimum)
        except (ValueError, KseqError):
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}. "
                                             f"Received: {text!r}") from None
    return parse


def _positive_number(text):
    try:
        return check_float("value", float(text), minimum=0.0, exclusive_minimum=True)
    except (ValueError, KseqError):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0. "
                                         f"Received: {text!r}") from None


def _finite_number(text):
    try:
        return check_float("value", float(text))
    except (ValueError, KseqError):
        raise argparse.ArgumentTypeError(f"must be a finite number. "
                                         f"Received: {text!r}") from None


# The sections of a recipe `--set` may change (`kseq.models.recipes`; "weights" is the catalog's).
RECIPE_SECTIONS = ("task", "description", "data", "tokenizer", "model", "training")


def _recipe_override(text):
    """An argparse type for `--set KEY=VALUE`: a dotted recipe key and a JSON value (text
    that is not JSON stays a string) -> the override as a nested dict."""
    key, equals, value = text.partition("=")
    parts = key.strip().split(".")
    if not equals or not all(parts) or parts[0] not in RECIPE_SECTIONS:
        raise argparse.ArgumentTypeError(
            f"must be KEY=VALUE, KEY a dotted recipe key in {', '.join(RECIPE_SECTIONS)} "
            f"(e.g. training.epochs=5 or model.dropout=0.2). Received: {text!r}")
    try:
        override = json.loads(value)
    except ValueError:
        override = value  # a plain word: model.encoder=rnn
    for part in reversed(parts):
        override = {part: override}
    return override


def version_line():
    """`kseq 0.1.0 (TensorFlow 2.21.0, Keras 3.15.1, Python 3.11.9)`, read without importing
    TensorFlow or Keras (their installed distributions' metadata)."""
    import platform
    from importlib import metadata

    from kseq.version import __version__

    def installed(name):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    return (f"kseq {__version__} (TensorFlow {installed('tensorflow')}, Keras "
            f"{installed('keras')}, Python {platform.python_version()})")


class _Version(argparse.Action):
    """`--version`: prints `version_line()` and exits 0 (computed only when asked)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help=None):
        super().__init__(option_strings, dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_line())
        parser.exit()


def _warn(message):
    print(f"kseq: warning: {message}", file=sys.stderr, flush=True)


def _note(args, message):
    """An informational line on stderr, left out with --quiet."""
    if not args.quiet:
        print(message, file=sys.stderr, flush=True)


def _check_output_file(path):
    """`--output FILE` of a command that prints results: a file in an existing folder."""
    if path is None:
        return
    if os.path.isdir(path):
        raise KseqError(f"--output must name a file, not a folder. Received: --output {path}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise KseqError(f"--output's folder does not exist. Received: --output {path}")


def _emit(args, lines):
    """The results: printed, or written to `--output FILE` (atomically: a failed command
    leaves the file as it was)."""
    if getattr(args, "output", None) is None:
        for line in lines:
            print(line)
        return
    from kseq.atomic_files import atomic_write_text

    atomic_write_text(args.output, "".join(f"{line}\n" for line in lines))
    _note(args, f"wrote {len(lines)} lines to {args.output}")


def _json_line(record):
    return json.dumps(record, ensure_ascii=False)


def _close_presets(name):
    """Preset names like `name`: those containing it, then difflib's close matches."""
    from kseq.presets.catalog import presets

    names = presets()
    close = [preset for preset in names if name and name in preset]
    close += difflib.get_close_matches(name, names, n=5, cutoff=0.6)
    return list(dict.fromkeys(close))[:6], names


def _unknown_name(name, what):
    """The error for `name`, neither a file nor a preset: the close preset names (or all of
    them, as the API lists them)."""
    close, names = _close_presets(name)
    listed = (f"close presets: {', '.join(close)}" if close
              else f"the presets: {', '.join(names)}")
    return KseqError(f"No {what} named {name!r}; {listed} (`kseq presets` describes them). "
                     f"Received: {name}")


def _looks_like_a_name(text):
    return os.sep not in text and "/" not in text and not text.endswith((".keras", ".json"))


def _import_every_room():
    """What `import kseq` does outside the command (TensorFlow, Keras, and every kseq class
    registered with Keras), for the commands that load or train a model."""
    from kseq import data, decoding, layers, metrics, models, text, zoo  # noqa: F401


def _presets(args):
    from kseq.presets.listing import preset_rows  # no TensorFlow: `kseq presets` is instant

    rows = preset_rows()
    if args.json:
        print("\n".join(_json_line(row) for row in rows))
        return
    print(f"{'preset':30s} {'task':11s} {'arch':31s} {'weights':8s} description")
    for row in rows:
        print(f"{row['preset']:30s} {row['task']:11s} {row['arch']:31s} {row['weights']:8s} "
              f"{row['description']}")


def _presets_or_parts(args):
    if not args.parts:
        return _presets(args)
    from kseq.models.part_catalog import parts_table

    print("\n".join(parts_table()))


def _training_overrides(args):
    """`--set KEY=VALUE` (in order), then `--batch-size`, `--learning-rate` and `--seed`, as
    one recipe override; `train` merges it, checks it like the recipe and records the merged
    recipe in `recipe.json`."""
    from kseq.models.recipes import merge

    training = {}
    if args.batch_size is not None:  # a batch size replaces the recipe's token budget
        training.update(batch_size=args.batch_size, token_budget=None)
    if args.learning_rate is not None:
        training["peak_learning_rate"] = args.learning_rate
    if args.seed is not None:
        training["seed"] = args.seed
    overrides = merge({}, *(args.set or []), {"training": training} if training else {})
    return overrides or None


def _stop_report():
    """A Keras callback noting where training stopped when a callback (the `--minutes`
    budget) ended it early: the epoch (0-based), the optimizer step and the target epoch."""
    import keras

    class StopReport(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.epoch, self.stopped = 0, None

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

        def on_train_end(self, logs=None):
            if self.model.stop_training:
                self.stopped = (self.epoch, int(self.model.optimizer.iterations.numpy()),
                                self.params.get("epochs"))

    return StopReport()


def _budget_note(args, stopped):
    """Where the `--minutes` budget stopped the run, and the command that continues it (a
    finished run continues by finishing the cut epoch, then `--epochs` more). `target` is
    the stopped `fit` call's last epoch: the run's, unless that call only finished a resumed
    epoch (then it is that epoch, and the advice does not name a target)."""
    import shlex

    epoch, step, target = stopped
    more = (target or 0) - (epoch + 1)
    command = f"kseq train {shlex.quote(args.recipe)} --output {shlex.quote(args.output)}"
    if more >= 1:
        where = f"in epoch {epoch + 1} of {target} (step {step})"
        advice = f"to continue to epoch {target}: {command} --epochs {more}"
    else:
        where = f"in epoch {epoch + 1} (step {step})"
        advice = f"to finish epoch {epoch + 1} and train N more: {command} --epochs N"
    return f"the {args.minutes:g}-minute budget stopped training {where}; {advice}"


def _train(args):
    from kseq.presets.catalog import is_preset

    if not os.path.isfile(args.recipe) and not is_preset(args.recipe):
        if _looks_like_a_name(args.recipe):
            raise _unknown_name(args.recipe, "recipe file or preset")
        raise KseqError(f"No such recipe file. Received: {args.recipe}")
    _import_every_room()
    from kseq.training import train

    report = _stop_report()
    with contextlib.ExitStack() as stack:
        if args.quiet:  # no progress bar and no "starting at step ..." line
            stack.enter_context(contextlib.redirect_stdout(
                stack.enter_context(open(os.devnull, "w", encoding="utf-8"))))
        model, splits, history = train(
            args.recipe, args.output, data_path=args.data, epochs=args.epochs,
            minutes=args.minutes, save_every_steps=args.save_every,
            overrides=_training_overrides(args), verbose=0 if args.quiet else 1,
            extra_callbacks=[report], strategy=args.strategy,
            precision=args.precision, jit_compile=args.jit_compile)
    if not args.quiet:
        print(f"saved {os.path.join(args.output, 'model.keras')} "
              f"({model.count_params():,} parameters)")
    if report.stopped is not None and args.minutes:
        _note(args, _budget_note(args, report.stopped))


def _read_inputs(texts):
    """Arguments, or stdin lines, as bytes: invalid UTF-8 becomes U+FFFD in the tokenizer
    rather than failing the whole batch."""
    if texts:
        return [os.fsencode(text) for text in texts]
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream (tests replace stdin with StringIO)
        return [line.rstrip("\r\n").encode("utf-8", "surrogatepass") for line in sys.stdin]
    return [line.rstrip(b"\r\n") for line in stream]


def _check_plot_folder(folder):
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise KseqError(f"--plot-attention must name a folder, not a file. "
                        f"Received: --plot-attention {folder}")


def _load_task(model_dir, command):
    """The trained model of `model_dir`, when its task answers `command` (its `cli_verbs`).
    A bare name that is neither a folder, a file nor a preset lists the close preset names."""
    from kseq.presets.catalog import is_preset

    if not os.path.exists(model_dir) and not is_preset(model_dir) and _looks_like_a_name(
            model_dir):
        raise _unknown_name(model_dir, "model folder, .keras file or preset")
    _import_every_room()
    from kseq.training import load_trained

    model = load_trained(model_dir)
    verbs = getattr(model, "cli_verbs", ())
    if command not in verbs:
        raise KseqError(f"`kseq {command}` needs a model with `{command}`; this folder holds "
                        f"a {type(model).__name__}, which answers {', '.join(verbs) or 'none'}. "
                        f"Received: {model_dir}")
    return model


def _search_options(args):
    """The search options of a generative command as the API's keywords: `--beam`,
    `--n-best`, `--mbr`, and `--alpha`, `--length-penalty`, `--max-length` where given (the
    API's defaults otherwise)."""
    if args.n_best > args.beam:
        raise KseqError(f"--n-best must be <= --beam. Received: --n-best {args.n_best}, "
                        f"--beam {args.beam}")
    options = dict(beam_size=args.beam, n_best=args.n_best, mbr=getattr(args, "mbr", False))
    given = dict(alpha=args.alpha, length_penalty=args.length_penalty,
                 max_length=args.max_length)
    options.update({name: value for name, value in given.items() if value is not None})
    if options.get("length_penalty") == "none":
        options["length_penalty"] = None
    return options


def _generated_lines(args, inputs, outputs, prefix=False):
    """One line per input: its output (n-best joined by ` ||| `); with `--scores` each output
    followed by a TAB and its score; with `--json` a JSON object `{"input", "text", "score"}`
    (lists of n_best, as the export answers). `prefix`: the input and a TAB first."""
    lines = []
    for value, (output, scores) in zip(inputs, outputs):
        texts = output if isinstance(output, list) else [output]
        if args.json:
            lines.append(_json_line({"input": value, "text": texts,
                                     "score": [float(score) for score in scores]}))
            continue
        if args.scores:
            line = "\t".join(f"{text}\t{score:.4f}" for text, score in zip(texts, scores))
        else:
            line = " ||| ".join(texts)
        lines.append(f"{value}\t{line}" if prefix else line)
    return lines


def _readable_images(model, paths):
    """`(paths, encoded bytes)` of the image files that can be read and decoded; a warning
    line naming each one that cannot (the caller exits 1 if any)."""
    good, encoded = [], []
    for path in paths:
        try:
            encoded += model.preprocessor.encode_inputs([path])
            good.append(path)
        except KseqError as error:
            _warn(f"skipped {path}: {one_line(error)}")
    return good, encoded


def _translate(args):
    options = _search_options(args)
    if args.plot_attention:
        _check_plot_folder(args.plot_attention)
    _check_output_file(args.output)
    model = _load_task(args.model_dir, "translate")
    texts = _read_inputs(args.texts)
    outputs = model.translate(texts, return_scores=True, **options)
    _emit(args, _generated_lines(args, [t.decode("utf-8", "replace") for t in texts], outputs))
    if args.plot_attention:
        os.makedirs(args.plot_attention, exist_ok=True)
        for index, text in enumerate(texts):
            model.plot_attention(text.decode("utf-8", "replace"),
                                 os.path.join(args.plot_attention, f"{index:04d}.png"))
        _note(args, f"attention plots in {args.plot_attention}")


def _caption(args):
    options = _search_options(args)
    if args.plot_attention:
        _check_plot_folder(args.plot_attention)
    _check_output_file(args.output)
    model = _load_task(args.model_dir, "caption")
    paths, images = _readable_images(model, args.images)
    outputs = model.caption(images, return_scores=True, language=args.language,
                            **options) if images else []
    _emit(args, _generated_lines(args, paths, outputs, prefix=True))
    if args.plot_attention and paths:
        os.makedirs(args.plot_attention, exist_ok=True)
        for index, image in enumerate(paths):
            model.plot_attention(image, os.path.join(args.plot_attention, f"{index:04d}.png"))
        _note(args, f"attention plots in {args.plot_attention}")
    return 1 if len(paths) < len(args.images) else 0


def _classify(args):
    _check_output_file(args.output)
    model = _load_task(args.model_dir, "classify")
    inputs = [text.decode("utf-8", "replace") for text in _read_inputs(args.texts)]
    images = getattr(model.preprocessor, "input_kind", "text") == "images"  # files
    values = _readable_images(model, inputs)[0] if images else inputs
    results = model.predict_labels(values, top_k=args.top_k) if values else []
    lines = []
    for value, result in zip(values, results):
        pairs = result if isinstance(result, list) else [result]
        if args.json:
            lines.append(_json_line({"input": value, "label": [label for label, _ in pairs],
                                     "probability": [float(p) for _, p in pairs]}))
        else:
            lines.append((f"{value}\t" if images else "")
                         + "\t".join(f"{label}\t{probability:.4f}"
                                     for label, probability in pairs))
    _emit(args, lines)
    return 1 if len(values) < len(inputs) else 0


def _tag(args):
    _check_output_file(args.output)
    model = _load_task(args.model_dir, "tag")
    sentences = [text.decode("utf-8", "replace") for text in _read_inputs(args.texts)]
    lines = []
    for sentence, (words, tags) in zip(sentences, model.tag(sentences)):
        if args.json:
            lines.append(_json_line({"input": sentence, "words": list(words),
                                     "tags": list(tags)}))
        else:
            lines.append(" ".join(f"{word}/{tag}" for word, tag in zip(words, tags)))
    _emit(args, lines)


def _evaluation_pairs(model_dir, data, model=None):
    """`--data` as a TSV file, or the test/valid split of the data the run trained on."""
    from kseq import zoo
    from kseq.data.pipeline.parallel_text import read_tsv
    from kseq.presets.catalog import is_preset
    from kseq.training.run_folder import RunFolder
    from kseq.training import load_data

    if os.path.isfile(data):
        pairs, _ = read_tsv(data)
        if not pairs:
            raise KseqError(f"No usable `source<TAB>reference` lines. Received: --data {data}")
        if getattr(model.preprocessor, "input_kind", "text") == "images":  # `path<TAB>target`
            from kseq.data.pipeline.image_inputs import read_image_pairs

            pairs = read_image_pairs(pairs, os.path.dirname(os.path.abspath(data)))
        return pairs
    if data in ("test", "valid") and not os.path.exists(model_dir) and is_preset(model_dir):
        return zoo.build_data(zoo.load_recipe(model_dir))[data]  # a shipped preset's data
    run = RunFolder(model_dir)
    recipe_path = run.file("recipe.json")
    if data not in ("test", "valid") or not os.path.isfile(recipe_path):
        raise KseqError("--data must be a TSV file, or 'test'/'valid' for a model "
                        f"trained by `kseq train`. Received: --data {data}")
    recipe = zoo.load_recipe(recipe_path)
    return load_data(recipe, run.resolve_data_source(None, recipe))[data]  # checks the file


def _taken(model, taken, given, optional, command):
    """The options of `given` that the task takes (`taken`: its `evaluate_options` or
    `export_options`); an `optional` one set on the command line that it does not take is
    refused, by its flag."""
    refused = [name for name in optional if given.get(name) is not None and name not in taken]
    if refused:
        flags = ", ".join("--" + name.replace("_", "-") for name in refused)
        raise KseqError(f"`kseq {command}` of a {type(model).__name__} takes no {flags}. "
                        f"Received: {flags}")
    options = {name: given[name] for name in taken
               if name in given and (given[name] is not None or name not in optional)}
    if options.get("length_penalty") == "none":
        options["length_penalty"] = None
    return options


SEARCH_TUNING = ("alpha", "length_penalty", "max_length")  # left to the API's defaults if unset


def _evaluate(args):
    _check_output_file(args.output)
    model = _load_task(args.model_dir, "evaluate")
    given = dict(beam_size=args.beam, mbr=args.mbr, plot=args.plot, alpha=args.alpha,
                 length_penalty=args.length_penalty, max_length=args.max_length)
    options = _taken(model, model.evaluate_options, given, SEARCH_TUNING + ("plot",),
                     "evaluate")
    pairs = _evaluation_pairs(args.model_dir, args.data, model)
    if args.limit:
        pairs = pairs[: args.limit]
    if not pairs:
        raise KseqError(f"The {args.data} split is empty. Received: --data {args.data}")
    result = model.evaluate(pairs, **options)
    report = {"summary": result.summary(), **result.to_dict()}
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(result.summary())  # the headline; the full report with --json or --output
    if args.output:
        from kseq.atomic_files import atomic_write_json

        atomic_write_json(args.output, report)
        _note(args, f"report in {args.output}")
    if args.plot:
        _note(args, f"plot in {args.plot}")


def _export(args):
    from kseq.export import export_to_serving_layout

    if args.n_best > args.beam:
        raise KseqError(f"--n-best must be <= --beam. Received: --n-best {args.n_best}, "
                        f"--beam {args.beam}")
    base, name = os.path.split(os.path.normpath(args.output))
    if not name or name in (".", ".."):
        raise KseqError(f"--output must be BASE/NAME. Received: --output {args.output}")
    model = _load_task(args.model_dir, "export")
    given = dict(beam_size=args.beam, n_best=args.n_best, xla=args.xla, alpha=args.alpha,
                 length_penalty=args.length_penalty, max_length=args.max_length)
    options = _taken(model, model.export_options, given, SEARCH_TUNING, "export")
    version_dir = export_to_serving_layout(model, base or ".", name, args.version, **options)
    if not args.quiet:
        print(f"exported {version_dir} (models.config in {base or '.'})")


MODEL_HELP = "a model folder (kseq train --output), a .keras file, or a preset with weights"
DATA_HELP = ("a TSV file, one example a line: source<TAB>target (translation), "
             "image<TAB>caption (captioning), text<TAB>label or image<TAB>label "
             "(classification), words<TAB>tags with one tag per space-separated word "
             "(tagging); image paths are relative to the file")


def _common_options(default):
    """--verbose / --quiet, on the main parser (`default` False) and, with
    `argparse.SUPPRESS`, on each command (so `kseq --quiet tag ...` and `kseq tag ... --quiet`
    both work)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--verbose", action="store_true", default=default,
                        help="also show TensorFlow's and absl's log lines and kseq's INFO log")
    common.add_argument("--quiet", action="store_true", default=default,
                        help="print only results, warnings and errors (no progress bar or "
                             "notes)")
    return common


def _search_arguments(command, n_best=True, mbr=True):
    """The search options of a generative command (`translate`, `caption`, `evaluate`,
    `export`); those left unset keep the API's defaults."""
    command.add_argument("--beam", type=_integer(1), default=4,
                         help="beam width; 1 is greedy search (default: 4)")
    if n_best:
        command.add_argument("--n-best", type=_integer(1), default=1,
                             help="outputs per input, best first (<= --beam; default: 1)")
    if mbr:
        command.add_argument("--mbr", action="store_true",
                             help="choose among the beam by minimum Bayes risk (expected chrF)")
    command.add_argument("--length-penalty", choices=("gnmt", "fairseq", "none"),
                         help="how scores are normalised by length: gnmt ((5+L)/6)^alpha, "
                              "fairseq L^alpha, none (default: gnmt)")
    command.add_argument("--alpha", type=_finite_number,
                         help="the length penalty's exponent; higher favours longer outputs "
                              "(default: 0.6)")
    command.add_argument("--max-length", type=_integer(1), metavar="N",
                         help="longest output in tokens (default and maximum: the model's "
                              "max_target_length)")


def _result_arguments(command, scores=False):
    """How a command that prints results prints them: `--json`, `--output FILE`, and for a
    generative one `--scores`."""
    if scores:
        command.add_argument("--scores", action="store_true",
                             help="follow each output by a TAB and its score (its log-probability "
                                  "under the length penalty; one pair per --n-best)")
    command.add_argument("--json", action="store_true",
                         help="one JSON object per input instead (input, outputs, scores)")
    command.add_argument("--output", metavar="FILE",
                         help="write the results to FILE instead of printing them")


def build_parser():
    parser = _Parser(prog="kseq", description=__doc__.splitlines()[0],
                     parents=[_common_options(False)])
    parser.add_argument("--version", action=_Version,
                        help="print the versions of kseq, TensorFlow, Keras and Python")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    common = [_common_options(argparse.SUPPRESS)]
    presets = commands.add_parser("presets", help="list the named presets", parents=common)
    presets.add_argument("--parts", action="store_true",
                         help="list the encoders and decoders a recipe can name, with options")
    presets.add_argument("--json", action="store_true", help="one JSON object per preset")
    presets.set_defaults(run=_presets_or_parts)

    train = commands.add_parser("train", help="train (or resume) a model from a recipe",
                                parents=common)
    train.add_argument("recipe", help="preset name or recipe JSON file")
    train.add_argument("--output", required=True, metavar="DIR",
                       help="output folder (resumes if it exists)")
    train.add_argument("--data", metavar="FILE",
                       help=DATA_HELP.replace("a TSV file", "train on a TSV file instead of "
                                                            "the recipe's data builder", 1))
    train.add_argument("--epochs", type=_integer(1), metavar="N",
                       help="epochs to train to (a new or resumed run) or to add (a finished "
                            "run; default: the recipe's)")
    train.add_argument("--minutes", type=_positive_number,
                       help="stop after this much training time (the model is saved; the "
                            "same command continues)")
    train.add_argument("--save-every", type=_integer(1), default=50, metavar="N",
                       help="checkpoint every N steps (default: 50)")
    train.add_argument("--batch-size", type=_integer(1), metavar="N",
                       help="examples per batch (replaces the recipe's batch_size or "
                            "token_budget)")
    train.add_argument("--learning-rate", type=_positive_number, metavar="LR",
                       help="peak learning rate (the recipe's training.peak_learning_rate)")
    train.add_argument("--seed", type=_integer(0),
                       help="seed of the initial weights and the data order (training.seed)")
    train.add_argument("--set", type=_recipe_override, action="append", metavar="KEY=VALUE",
                       help="change one recipe value: a dotted key and a JSON value, e.g. "
                            "--set model.dropout=0.2 --set training.boundaries=[16,32]; "
                            "checked like the recipe and recorded in OUTPUT/recipe.json")
    # The names of kseq.training.distribution.STRATEGIES and .precision.PRECISIONS (a test
    # keeps them equal), written out so that `kseq --help` loads no TensorFlow.
    train.add_argument("--strategy", choices=("auto", "one-device", "mirrored", "multi-worker"),
                       help="devices to train on (default: the recipe's, else auto: every "
                            "GPU when there are two or more); multi-worker reads TF_CONFIG")
    train.add_argument("--precision", choices=("float32", "mixed_bfloat16", "mixed_float16"),
                       help="compute precision (default: the recipe's, else float32); the "
                            "saved model is float32")
    train.add_argument("--jit-compile", action=argparse.BooleanOptionalAction, default=None,
                       help="compile the train step with XLA (default: the recipe's)")
    train.set_defaults(run=_train)

    translate = commands.add_parser("translate", help="translate arguments or stdin lines",
                                    parents=common)
    translate.add_argument("model_dir", help=MODEL_HELP)
    translate.add_argument("texts", nargs="*",
                           help="texts to translate (default: one per stdin line)")
    _search_arguments(translate)
    translate.add_argument("--plot-attention", metavar="DIR",
                           help="also write one alignment PNG per input (greedy)")
    _result_arguments(translate, scores=True)
    translate.set_defaults(run=_translate)

    caption = commands.add_parser("caption", help="caption image files (path<TAB>caption "
                                                  "lines; a file that cannot be read is "
                                                  "skipped with a warning, exit code 1)",
                                  parents=common)
    caption.add_argument("model_dir", help=MODEL_HELP)
    caption.add_argument("images", nargs="+", metavar="IMAGE",
                         help="PNG, JPEG, GIF, BMP or WebP files")
    _search_arguments(caption)
    caption.add_argument("--plot-attention", metavar="DIR",
                         help="also write one attention PNG per image (greedy)")
    caption.add_argument("--language", help="caption language of a multilingual captioner "
                                            "(e.g. fr)")
    _result_arguments(caption, scores=True)
    caption.set_defaults(run=_caption)

    classify = commands.add_parser("classify", help="label and probability per argument or "
                                                    "stdin line (image files for an image "
                                                    "classifier: one that cannot be read is "
                                                    "skipped with a warning, exit code 1)",
                                   parents=common)
    classify.add_argument("model_dir", help=MODEL_HELP)
    classify.add_argument("texts", nargs="*", metavar="text_or_image",
                          help="texts (or image files) to classify (default: stdin lines)")
    classify.add_argument("--top-k", type=_integer(1), default=1, metavar="K",
                          help="the K most probable labels per input (default: 1)")
    _result_arguments(classify)
    classify.set_defaults(run=_classify)

    tag = commands.add_parser("tag", help="word/TAG per word of each argument or stdin line",
                              parents=common)
    tag.add_argument("model_dir", help=MODEL_HELP)
    tag.add_argument("texts", nargs="*",
                     help="sentences to tag, words separated by spaces (default: stdin lines)")
    _result_arguments(tag)
    tag.set_defaults(run=_tag)

    evaluate = commands.add_parser("evaluate", help="the task's scores (BLEU / chrF with "
                                                    "sacrebleu's signature, accuracy / F1, "
                                                    "token accuracy): a summary line, the "
                                                    "full report with --json or --output",
                                   parents=common)
    evaluate.add_argument("model_dir", help=MODEL_HELP)
    evaluate.add_argument("--data", required=True, metavar="FILE|test|valid",
                          help="test or valid (the split of the data the model trained on), "
                               "or " + DATA_HELP)
    _search_arguments(evaluate, n_best=False)
    evaluate.add_argument("--limit", type=_integer(1), help="score the first N pairs")
    evaluate.add_argument("--plot", metavar="PNG",
                          help="classifiers: also write the confusion matrix as a PNG")
    evaluate.add_argument("--json", action="store_true",
                          help="print the full report (every score, per-class tables) as JSON")
    evaluate.add_argument("--output", metavar="FILE",
                          help="also write the full report to FILE as JSON")
    evaluate.set_defaults(run=_evaluate)

    export = commands.add_parser("export", help="write a TF Serving SavedModel",
                                 parents=common)
    export.add_argument("model_dir", help=MODEL_HELP)
    export.add_argument("--output", required=True, help="BASE/NAME; writes BASE/NAME/VERSION")
    export.add_argument("--version", type=_integer(1),
                        help="the model version to write (default: the next free number)")
    _search_arguments(export, mbr=False)
    export.add_argument("--xla", action="store_true",
                        help="compile the search with XLA (TF Serving needs "
                             "--xla_cpu_compilation_enabled)")
    export.set_defaults(run=_export)
    return parser


def _parse(argv):
    """The parsed arguments, or the exit code of `--help` / `--version` (argparse exits)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 0
    if args.verbose and args.quiet:
        raise _UsageError("--verbose and --quiet exclude each other. "
                          "Received: --verbose --quiet")
    return args


def main(argv=None):
    """Runs one command; returns the exit code: 0, 1 when `caption` or an image `classify`
    skipped a file that cannot be read (each named in a warning line), or 2 after a one-line
    error. Run as the `kseq` command (no `argv`), TensorFlow's and absl's lines are filtered
    out of the process's stderr unless `--verbose`."""
    logging.basicConfig(level=logging.WARNING, format="kseq: %(message)s")
    try:
        args = _parse(argv)
        if isinstance(args, int):
            return args
        logging.getLogger("kseq").setLevel(
            logging.ERROR if args.quiet else logging.INFO if args.verbose else logging.NOTSET)
        if not args.verbose:
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        filtered = argv is None and not args.verbose  # before any TensorFlow import
        with tensorflow_lines_filtered() if filtered else contextlib.nullcontext():
            code = args.run(args)
        return code or 0
    except _UsageError as error:
        print(f"kseq: error: {one_line(error)}", file=sys.stderr)
        return 2
    except (KseqError, ValueError, OSError, ImportError) as error:
        # OSError covers read-only folders, a file where a folder belongs, a full disk.
        print(f"kseq: error: {one_line(error)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
