"""The `kseq` command: presets, train, translate, caption, classify, tag, evaluate, export.

Every error is one line, `kseq: error: ...`, with exit code 2: bad arguments
(named, with the value received), unreadable files, failed writes, and a
training loss that became NaN. `main(argv)` returns the exit code, so it also
runs in-process.
"""

import argparse
import json
import logging
import os
import sys

from kseq.arguments import check_float, check_int
from kseq.errors import KseqError, one_line


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


def _presets(args):
    from kseq import zoo
    from kseq.presets.catalog import preset_recipe

    print(f"{'preset':30s} {'task':11s} {'arch':31s} {'weights':8s} description")
    for name in zoo.presets():
        recipe = preset_recipe(name)
        entry = recipe.pop("weights", None)
        weights = f"{entry['bytes'] / 1e6:.1f}MB" if entry else "-"
        task, arch = recipe.get("task", "translator"), zoo.describe(recipe)
        print(f"{name:30s} {task:11s} {arch:31s} {weights:8s} {recipe.get('description', '')}")


def _presets_or_parts(args):
    if not args.parts:
        return _presets(args)
    from kseq.models.part_catalog import parts_table

    print("\n".join(parts_table()))


def _train(args):
    from kseq.training import train

    model, splits, history = train(args.recipe, args.output, data_path=args.data,
                                   epochs=args.epochs, minutes=args.minutes,
                                   save_every_steps=args.save_every)
    print(f"saved {os.path.join(args.output, 'model.keras')} "
          f"({model.count_params():,} parameters)")


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
    """The trained model of `model_dir`, when its task answers `command` (its `cli_verbs`)."""
    from kseq.training import load_trained

    model = load_trained(model_dir)
    verbs = getattr(model, "cli_verbs", ())
    if command not in verbs:
        raise KseqError(f"`kseq {command}` needs a model with `{command}`; this folder holds "
                        f"a {type(model).__name__}, which answers {', '.join(verbs) or 'none'}. "
                        f"Received: {model_dir}")
    return model


def _translate(args):
    if args.n_best > args.beam:
        raise KseqError(f"--n-best must be <= --beam. Received: --n-best {args.n_best}, "
                        f"--beam {args.beam}")
    if args.plot_attention:
        _check_plot_folder(args.plot_attention)
    model = _load_task(args.model_dir, "translate")
    texts = _read_inputs(args.texts)
    outputs = model.translate(texts, beam_size=args.beam, n_best=args.n_best, mbr=args.mbr)
    for output in outputs:
        print(" ||| ".join(output) if isinstance(output, list) else output)
    if args.plot_attention:
        os.makedirs(args.plot_attention, exist_ok=True)
        for index, text in enumerate(texts):
            model.plot_attention(text.decode("utf-8", "replace"),
                                 os.path.join(args.plot_attention, f"{index:04d}.png"))
        print(f"attention plots in {args.plot_attention}", file=sys.stderr)


def _caption(args):
    if args.n_best > args.beam:
        raise KseqError(f"--n-best must be <= --beam. Received: --n-best {args.n_best}, "
                        f"--beam {args.beam}")
    if args.plot_attention:
        _check_plot_folder(args.plot_attention)
    model = _load_task(args.model_dir, "caption")
    outputs = model.caption(args.images, beam_size=args.beam, n_best=args.n_best,
                            language=args.language, mbr=args.mbr)
    for image, output in zip(args.images, outputs):
        print(f"{image}\t" + (" ||| ".join(output) if isinstance(output, list) else output))
    if args.plot_attention:
        os.makedirs(args.plot_attention, exist_ok=True)
        for index, image in enumerate(args.images):
            model.plot_attention(image, os.path.join(args.plot_attention, f"{index:04d}.png"))
        print(f"attention plots in {args.plot_attention}", file=sys.stderr)


def _classify(args):
    model = _load_task(args.model_dir, "classify")
    inputs = [text.decode("utf-8", "replace") for text in _read_inputs(args.texts)]
    images = model.preprocessor.input_kind == "images"  # arguments (or lines) are image files
    for value, result in zip(inputs, model.predict_labels(inputs, top_k=args.top_k)):
        pairs = result if isinstance(result, list) else [result]
        print((f"{value}\t" if images else "")
              + "\t".join(f"{label}\t{probability:.4f}" for label, probability in pairs))


def _tag(args):
    model = _load_task(args.model_dir, "tag")
    sentences = [text.decode("utf-8", "replace") for text in _read_inputs(args.texts)]
    for words, tags in model.tag(sentences):
        print(" ".join(f"{word}/{tag}" for word, tag in zip(words, tags)))


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


def _evaluate(args):
    model = _load_task(args.model_dir, "evaluate")
    pairs = _evaluation_pairs(args.model_dir, args.data, model)
    if args.limit:
        pairs = pairs[: args.limit]
    if not pairs:
        raise KseqError(f"The {args.data} split is empty. Received: --data {args.data}")
    given = dict(beam_size=args.beam, mbr=args.mbr, plot=args.plot)  # what the task takes
    result = model.evaluate(pairs, **{name: given[name] for name in model.evaluate_options})
    print(result.summary())
    print(json.dumps(result.to_dict(), indent=2))
    if args.plot and "plot" in model.evaluate_options:
        print(f"plot in {args.plot}", file=sys.stderr)


def _export(args):
    from kseq.export import export_to_serving_layout

    if args.n_best > args.beam:
        raise KseqError(f"--n-best must be <= --beam. Received: --n-best {args.n_best}, "
                        f"--beam {args.beam}")
    base, name = os.path.split(os.path.normpath(args.output))
    if not name or name in (".", ".."):
        raise KseqError(f"--output must be BASE/NAME. Received: --output {args.output}")
    model = _load_task(args.model_dir, "export")
    given = dict(beam_size=args.beam, n_best=args.n_best, xla=args.xla)  # what the task takes
    options = {option: given[option] for option in model.export_options}
    version_dir = export_to_serving_layout(model, base or ".", name, args.version, **options)
    print(f"exported {version_dir} (models.config in {base or '.'})")


MODEL_HELP = "a model folder (kseq train --output), a .keras file, or a preset with weights"


def build_parser():
    parser = _Parser(prog="kseq", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    presets = commands.add_parser("presets", help="list the named presets")
    presets.add_argument("--parts", action="store_true",
                         help="list the encoders and decoders a recipe can name, with options")
    presets.set_defaults(run=_presets_or_parts)

    train = commands.add_parser("train", help="train (or resume) a model from a recipe")
    train.add_argument("recipe", help="preset name or recipe JSON file")
    train.add_argument("--output", required=True, help="output folder (resumes if it exists)")
    train.add_argument("--data", help="a source<TAB>target file instead of the recipe's data")
    train.add_argument("--epochs", type=_integer(1))
    train.add_argument("--minutes", type=_positive_number,
                       help="stop after this much training time")
    train.add_argument("--save-every", type=_integer(1), default=50,
                       help="checkpoint every N steps")
    train.set_defaults(run=_train)

    translate = commands.add_parser("translate", help="translate arguments or stdin lines")
    translate.add_argument("model_dir", help=MODEL_HELP)
    translate.add_argument("texts", nargs="*")
    translate.add_argument("--beam", type=_integer(1), default=4)
    translate.add_argument("--mbr", action="store_true",
                           help="choose among the beam by minimum Bayes risk (expected chrF)")
    translate.add_argument("--n-best", type=_integer(1), default=1)
    translate.add_argument("--plot-attention", metavar="DIR",
                           help="also write one alignment PNG per input (greedy)")
    translate.set_defaults(run=_translate)

    caption = commands.add_parser("caption", help="caption image files (path<TAB>caption lines)")
    caption.add_argument("model_dir", help=MODEL_HELP)
    caption.add_argument("images", nargs="+", metavar="IMAGE",
                         help="PNG, JPEG, GIF, BMP or WebP files")
    caption.add_argument("--beam", type=_integer(1), default=4)
    caption.add_argument("--mbr", action="store_true",
                         help="choose among the beam by minimum Bayes risk (expected chrF)")
    caption.add_argument("--n-best", type=_integer(1), default=1)
    caption.add_argument("--plot-attention", metavar="DIR",
                         help="also write one attention PNG per image (greedy)")
    caption.add_argument("--language", help="caption language of a multilingual captioner "
                                            "(e.g. fr)")
    caption.set_defaults(run=_caption)

    classify = commands.add_parser("classify", help="label and probability per argument or "
                                                    "stdin line (image files for an image "
                                                    "classifier)")
    classify.add_argument("model_dir", help=MODEL_HELP)
    classify.add_argument("texts", nargs="*", metavar="text_or_image")
    classify.add_argument("--top-k", type=_integer(1), default=1)
    classify.set_defaults(run=_classify)

    tag = commands.add_parser("tag", help="word/TAG per word of each argument or stdin line")
    tag.add_argument("model_dir", help=MODEL_HELP)
    tag.add_argument("texts", nargs="*")
    tag.set_defaults(run=_tag)

    evaluate = commands.add_parser("evaluate", help="the task's scores: BLEU / chrF with "
                                                    "sacrebleu's signature, accuracy / F1, "
                                                    "token accuracy")
    evaluate.add_argument("model_dir", help=MODEL_HELP)
    evaluate.add_argument("--data", required=True, help="TSV file, or test/valid")
    evaluate.add_argument("--beam", type=_integer(1), default=4)
    evaluate.add_argument("--mbr", action="store_true",
                          help="choose among the beam by minimum Bayes risk (expected chrF)")
    evaluate.add_argument("--limit", type=_integer(1), help="score the first N pairs")
    evaluate.add_argument("--plot", metavar="PNG",
                          help="classifiers: also write the confusion matrix as a PNG")
    evaluate.set_defaults(run=_evaluate)

    export = commands.add_parser("export", help="write a TF Serving SavedModel")
    export.add_argument("model_dir", help=MODEL_HELP)
    export.add_argument("--output", required=True, help="BASE/NAME; writes BASE/NAME/VERSION")
    export.add_argument("--version", type=_integer(1), help="default: the next free number")
    export.add_argument("--beam", type=_integer(1), default=4)
    export.add_argument("--n-best", type=_integer(1), default=1)
    export.add_argument("--xla", action="store_true",
                        help="compile the search with XLA (TF Serving needs "
                             "--xla_cpu_compilation_enabled)")
    export.set_defaults(run=_export)
    return parser


def main(argv=None):
    """Runs one command; returns the exit code (0, or 2 after a one-line error)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    logging.basicConfig(level=logging.WARNING, format="kseq: %(message)s")
    try:
        args = build_parser().parse_args(argv)
        args.run(args)
    except _UsageError as error:
        print(f"kseq: error: {one_line(error)}", file=sys.stderr)
        return 2
    except (KseqError, ValueError, OSError, ImportError) as error:
        # OSError covers read-only folders, a file where a folder belongs, a full disk.
        print(f"kseq: error: {one_line(error)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
