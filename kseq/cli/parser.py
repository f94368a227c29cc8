"""The `kseq` command's arguments: every command, its options and their help.

Imports no TensorFlow (the command modules import it only inside the commands), so
`kseq --help`, `kseq COMMAND --help` and `--version` stay instant.
"""

import argparse

from kseq.cli.argument_types import (_column_names, _data_service_override, _finite_number,
                                     _fraction, _integer, _positive_number, _recipe_override)
from kseq.cli.data_service_command import add_data_service_command
from kseq.cli.evaluate_command import _evaluate
from kseq.cli.export_command import _export
from kseq.cli.generate_commands import _caption, _classify, _tag, _translate
from kseq.cli.presets_command import _presets_or_parts
from kseq.cli.text_generation_command import add_generate_command
from kseq.cli.train_command import _train
from kseq.cli.version_option import _Version

# CTranslate2's weight types (`ctranslate2_export.QUANTIZATIONS`, which a test compares):
# written out here because importing that module would import TensorFlow into `--help`.
CTRANSLATE2_QUANTIZATIONS = ("int8", "int8_float32", "int8_float16", "int8_bfloat16", "int16",
                             "float16", "bfloat16", "float32")

DESCRIPTION = ("The `kseq` command: presets, train, translate, caption, classify, tag, "
               "generate, evaluate, export.")


class _UsageError(Exception):
    """argparse's complaint, turned into one line instead of usage text and `sys.exit`."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(message)


MODEL_HELP = "a model folder (kseq train --output), a .keras file, or a preset with weights"
DATA_HELP = ("a TSV file, one example a line: source<TAB>target (translation), "
             "image<TAB>caption (captioning), text<TAB>label or image<TAB>label "
             "(classification), words<TAB>tags with one tag per space-separated word "
             "(tagging); image paths are relative to the file; or a .csv file with a "
             "header row (see --columns)")
COLUMNS_HELP = ("the input and target columns of the --data file by their header names "
                "(a .csv file's default: its first two columns); a TSV file given --columns "
                "has a header row too and may have more columns")


def _columns_argument(command, help_text):
    command.add_argument("--columns", type=_column_names, metavar="INPUT,TARGET",
                         help=help_text)


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


def _input_argument(command, what="inputs"):
    """`--input FILE`: a command's inputs, one a line, read as a stream like stdin."""
    command.add_argument("--input", metavar="FILE",
                         help=f"read the {what} from FILE, one a line (default: stdin, when "
                              f"none is given as an argument); '-' is stdin. Lines are read "
                              f"and decoded in chunks, each chunk's results written at once")


def build_parser():
    parser = _Parser(prog="kseq", description=DESCRIPTION,
                     parents=[_common_options(False)])
    parser.add_argument("--version", action=_Version,
                        help="print the versions of kseq, TensorFlow, Keras and Python")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    common = [_common_options(argparse.SUPPRESS)]
    presets = commands.add_parser("presets", help="list the named presets (as wide as the "
                                                  "terminal: COLUMNS), or show one's card",
                                  parents=common)
    presets.add_argument("name", nargs="?", metavar="NAME",
                         help="a preset: its card (recipe, data, weights and their scores)")
    presets.add_argument("--parts", action="store_true",
                         help="list the encoders and decoders a recipe can name, with options")
    presets.add_argument("--json", action="store_true",
                         help="one JSON object per preset, every field uncut (with NAME: its "
                              "catalog entry)")
    presets.set_defaults(run=_presets_or_parts)

    train = commands.add_parser("train", help="train (or resume) a model from a recipe",
                                parents=common)
    train.add_argument("recipe", nargs="?",
                       help="preset name or recipe JSON file (with --from: optional, of the "
                            "source's task and shape)")
    train.add_argument("--from", dest="init_from", metavar="SOURCE",
                       help="fine-tune: start from a preset that ships weights, a run folder "
                            "or a .keras file (its weights, vocabulary and labels; a fresh "
                            "optimizer and the recipe's fine_tuning schedule)")
    train.add_argument("--freeze", choices=("encoder", "embeddings", "backbone"),
                       help="with --from: keep these weights as the source's "
                            "(fine_tuning.freeze; backbone: all but a classifier's or "
                            "tagger's head)")
    train.add_argument("--keep-original", type=_fraction, metavar="FRACTION",
                       help="with --from: save FRACTION x the source's weights + the rest x "
                            "the fine-tuned ones (fine_tuning.keep_original; default 0): keeps "
                            "more of the source's own domain")
    train.add_argument("--extend-vocabulary", action="store_true", default=None,
                       help="with --from: add the data's unknown tokens seen twice or more to "
                            "a word or char vocabulary (fine_tuning.extend_vocabulary)")
    train.add_argument("--output", required=True, metavar="DIR",
                       help="output folder (resumes if it exists)")
    train.add_argument("--data", metavar="FILE", nargs="+",
                       help=DATA_HELP.replace("a TSV file", "train on a TSV file instead of "
                                                            "the recipe's data builder", 1)
                       + "; or several files, a quoted glob ('corpus/*.tsv.gz') or a folder, "
                         "plain or gzip-compressed, of any size (prepared once, then streamed). "
                         "Each example's split comes from a hash of its input: 96%% training, "
                         "2%% validation, 2%% test (kseq evaluate --data valid|test)")
    train.add_argument("--valid", metavar="FILE", nargs="+",
                       help="validation files for --data (a file, several, a glob or a folder, "
                            "read by the same columns): --data then holds out only its 2%% "
                            "test share")
    _columns_argument(train, COLUMNS_HELP + "; recorded, so a resume reads the same ones")
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
    train.add_argument("--data-service", type=_data_service_override, action="append",
                       dest="set", metavar="grpc://HOST:PORT",
                       help="train on batches made by a tf.data service (kseq data-service; "
                            "training.data_service)")
    train.set_defaults(run=_train)

    translate = commands.add_parser("translate", help="translate arguments, or stdin (or "
                                                      "--input FILE) lines as a stream",
                                    parents=common)
    translate.add_argument("model_dir", help=MODEL_HELP)
    translate.add_argument("texts", nargs="*",
                           help="texts to translate (default: one per stdin line)")
    _input_argument(translate, "texts")
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
    caption.add_argument("images", nargs="*", metavar="IMAGE",
                         help="PNG, JPEG, GIF, BMP or WebP files (default: one path per "
                              "stdin line)")
    _input_argument(caption, "image paths")
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
    _input_argument(classify, "texts (or image paths)")
    classify.add_argument("--top-k", type=_integer(1), default=1, metavar="K",
                          help="the K most probable labels per input (default: 1)")
    _result_arguments(classify)
    classify.set_defaults(run=_classify)

    tag = commands.add_parser("tag", help="word/TAG per word of each argument or stdin line",
                              parents=common)
    tag.add_argument("model_dir", help=MODEL_HELP)
    tag.add_argument("texts", nargs="*",
                     help="sentences to tag, words separated by spaces (default: stdin lines)")
    _input_argument(tag, "sentences")
    _result_arguments(tag)
    tag.set_defaults(run=_tag)

    add_generate_command(commands, common, MODEL_HELP, _integer, _finite_number, _fraction)

    evaluate = commands.add_parser("evaluate", help="the task's scores (BLEU / chrF with "
                                                    "sacrebleu's signature, accuracy / F1, "
                                                    "token accuracy): a summary line, the "
                                                    "full report with --json or --output",
                                   parents=common)
    evaluate.add_argument("model_dir", help=MODEL_HELP)
    evaluate.add_argument("--data", required=True, metavar="FILE|test|valid",
                          help="test or valid (the split of the data the model trained on), "
                               "or " + DATA_HELP)
    _columns_argument(evaluate, COLUMNS_HELP + " (not with test or valid: they read the "
                                               "columns the run recorded)")
    _search_arguments(evaluate, n_best=False)
    evaluate.add_argument("--limit", type=_integer(1), help="score the first N pairs")
    evaluate.add_argument("--plot", metavar="PNG",
                          help="classifiers: also write the confusion matrix as a PNG")
    evaluate.add_argument("--json", action="store_true",
                          help="print the full report (every score, per-class tables) as JSON")
    evaluate.add_argument("--output", metavar="FILE",
                          help="also write the full report to FILE as JSON")
    evaluate.set_defaults(run=_evaluate)

    export = commands.add_parser("export", help="write a TF Serving SavedModel (or a "
                                 "CTranslate2 model folder)", parents=common)
    export.add_argument("model_dir", help=MODEL_HELP)
    export.add_argument("--format", choices=("tf_saved_model", "ctranslate2"),
                        default="tf_saved_model",
                        help="tf_saved_model (default) or ctranslate2: a CTranslate2 model folder "
                             "of a Transformer translator (pip install 'kseq[ctranslate2]')")
    export.add_argument("--output", required=True,
                        help="BASE/NAME; writes BASE/NAME/VERSION (ctranslate2: the folder)")
    export.add_argument("--version", type=_integer(1),
                        help="the model version to write (default: the next free number)")
    export.add_argument("--quantization", choices=CTRANSLATE2_QUANTIZATIONS,
                        help="ctranslate2 only: the weight type to store (int8 is about 4x "
                             "smaller and 2-3x faster on CPU; default: float32 as trained)")
    _search_arguments(export, mbr=False)
    export.add_argument("--xla", action="store_true",
                        help="compile the search with XLA (TF Serving needs "
                             "--xla_cpu_compilation_enabled)")
    export.set_defaults(run=_export)
    add_data_service_command(commands, common, _integer)
    return parser
