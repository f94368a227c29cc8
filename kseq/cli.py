"""The `kseq` command: presets, train, translate, evaluate, export."""

import argparse
import json
import logging
import os
import sys


def _presets(args):
    from kseq import zoo

    for name in zoo.presets():
        print(f"{name:28s} {zoo.load_recipe(name).get('description', '')}")


def _train(args):
    from kseq.training import train

    model, splits, history = train(args.recipe, args.output, data_path=args.data,
                                   epochs=args.epochs, minutes=args.minutes,
                                   save_every_steps=args.save_every)
    print(f"saved {os.path.join(args.output, 'model.keras')} "
          f"({model.count_params():,} parameters)")


def _read_inputs(texts):
    if texts:
        return list(texts)
    return [line.rstrip("\n") for line in sys.stdin]


def _translate(args):
    from kseq.training import load_trained

    model = load_trained(args.model_dir)
    texts = _read_inputs(args.texts)
    outputs = model.translate(texts, beam_size=args.beam, n_best=args.n_best)
    for output in outputs:
        print(" ||| ".join(output) if isinstance(output, list) else output)
    if args.plot_attention:
        os.makedirs(args.plot_attention, exist_ok=True)
        for index, text in enumerate(texts):
            model.plot_attention(text, os.path.join(args.plot_attention, f"{index:04d}.png"))
        print(f"attention plots in {args.plot_attention}", file=sys.stderr)


def _evaluate(args):
    from kseq import zoo
    from kseq.data.parallel_text import read_tsv
    from kseq.training import load_trained

    model = load_trained(args.model_dir)
    if os.path.isfile(args.data):
        pairs, _ = read_tsv(args.data)
    else:
        recipe_path = os.path.join(args.model_dir, "recipe.json")
        if args.data not in ("test", "valid") or not os.path.isfile(recipe_path):
            raise FileNotFoundError("--data must be a TSV file, or 'test'/'valid' for a model "
                                    f"trained by `kseq train`. Received: --data {args.data}")
        with open(recipe_path, encoding="utf-8") as handle:
            pairs = zoo.build_data(json.load(handle))[args.data]
    result = model.evaluate_bleu(pairs[: args.limit] if args.limit else pairs,
                                 beam_size=args.beam)
    print(json.dumps({k: v for k, v in result.items() if k != "hypotheses"}, indent=2))


def _export(args):
    from kseq.export import serving_layout
    from kseq.training import load_trained

    model = load_trained(args.model_dir)
    base, name = os.path.split(os.path.normpath(args.output))
    if not name:
        raise ValueError(f"--output must be BASE/NAME. Received: --output {args.output}")
    version_dir = serving_layout(base or ".", name, args.version)
    model.export(version_dir, beam_size=args.beam, n_best=args.n_best, xla=args.xla)
    print(f"exported {version_dir} (models.config in {base or '.'})")


def build_parser():
    parser = argparse.ArgumentParser(prog="kseq", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("presets", help="list the named presets").set_defaults(run=_presets)

    train = commands.add_parser("train", help="train (or resume) a model from a recipe")
    train.add_argument("recipe", help="preset name or recipe JSON file")
    train.add_argument("--output", required=True, help="output folder (resumes if it exists)")
    train.add_argument("--data", help="a source<TAB>target file instead of the recipe's data")
    train.add_argument("--epochs", type=int)
    train.add_argument("--minutes", type=float, help="stop after this much training time")
    train.add_argument("--save-every", type=int, default=50, help="checkpoint every N steps")
    train.set_defaults(run=_train)

    translate = commands.add_parser("translate", help="translate arguments or stdin lines")
    translate.add_argument("model_dir")
    translate.add_argument("texts", nargs="*")
    translate.add_argument("--beam", type=int, default=4)
    translate.add_argument("--n-best", type=int, default=1)
    translate.add_argument("--plot-attention", metavar="DIR",
                           help="also write one alignment PNG per input (greedy)")
    translate.set_defaults(run=_translate)

    evaluate = commands.add_parser("evaluate", help="BLEU / chrF with sacrebleu's signature")
    evaluate.add_argument("model_dir")
    evaluate.add_argument("--data", required=True, help="TSV file, or test/valid")
    evaluate.add_argument("--beam", type=int, default=4)
    evaluate.add_argument("--limit", type=int)
    evaluate.set_defaults(run=_evaluate)

    export = commands.add_parser("export", help="write a TF Serving SavedModel")
    export.add_argument("model_dir")
    export.add_argument("--output", required=True, help="BASE/NAME; writes BASE/NAME/VERSION")
    export.add_argument("--version", type=int, help="default: the next free number")
    export.add_argument("--beam", type=int, default=4)
    export.add_argument("--n-best", type=int, default=1)
    export.add_argument("--xla", action="store_true",
                        help="compile the search with XLA (TF Serving needs "
                             "--xla_cpu_compilation_enabled)")
    export.set_defaults(run=_export)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    logging.basicConfig(level=logging.WARNING, format="kseq: %(message)s")
    try:
        args.run(args)
    except (ValueError, FileNotFoundError, ImportError) as error:
        print(f"kseq: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
