"""`kseq export`: write a TF Serving SavedModel (BASE/NAME/VERSION) and print its size.

The export holds the weights and vocabularies serving reads, never the
optimizer state a trained folder's `model.keras` keeps (`kseq.export`).
"""

import os

from kseq.cli.path_checks import check_model_argument
from kseq.cli.task_loading import _load_task
from kseq.cli.task_options import SEARCH_TUNING, _taken
from kseq.errors import KseqError


def _export(args):
    check_model_argument(args.model_dir)  # before TensorFlow loads with `kseq.export`
    from kseq.export import export_bytes, export_to_serving_layout

    if args.n_best > args.beam:
        raise KseqError(f"--n-best must be <= --beam. Received: --n-best {args.n_best}, "
                        f"--beam {args.beam}")
    if args.format == "ctranslate2":
        return _export_ctranslate2(args)
    if args.quantization is not None:
        raise KseqError("--quantization applies to `--format ctranslate2` only (a SavedModel "
                        f"keeps the trained float32 weights). Received: --quantization "
                        f"{args.quantization}")
    base, name = os.path.split(os.path.normpath(args.output))
    if not name or name in (".", ".."):
        raise KseqError(f"--output must be BASE/NAME. Received: --output {args.output}")
    model = _load_task(args.model_dir, "export")
    given = dict(beam_size=args.beam, n_best=args.n_best, xla=args.xla, alpha=args.alpha,
                 length_penalty=args.length_penalty, max_length=args.max_length)
    options = _taken(model, model.export_options, given, SEARCH_TUNING, "export")
    version_dir = export_to_serving_layout(model, base or ".", name, args.version, **options)
    if not args.quiet:
        print(f"exported {version_dir}: {_size(export_bytes(version_dir))} "
              f"(models.config in {base or '.'})")


def _size(count):
    """Bytes as `"3.2 MB"` (`"85 kB"` under 0.1 MB)."""
    return f"{count / 1e6:.1f} MB" if count >= 100_000 else f"{count / 1e3:.0f} kB"


def _export_ctranslate2(args):
    """`--format ctranslate2`: the folder `--output` (a Transformer translator's CTranslate2
    model: `kseq.models.translator.ctranslate2_export`); the search options become its
    defaults."""
    from kseq.export import export_bytes
    from kseq.models.translator.ctranslate2_export import export_ctranslate2

    for flag, value in (("--version", args.version), ("--xla", args.xla or None)):
        if value is not None:
            raise KseqError(f"`--format ctranslate2` writes one folder, with no {flag}. "
                            f"Received: {flag}")
    model = _load_task(args.model_dir, "export")
    if hasattr(model, "export_ctranslate2"):  # a task with a layout of its own (a language
        folder = model.export_ctranslate2(args.output, quantization=args.quantization)
        if not args.quiet:                    # model's: CTranslate2's decoder-only Generator)
            print(f"exported {folder}: {_size(export_bytes(folder))} (CTranslate2)")
        return None
    given = dict(alpha=args.alpha, length_penalty=args.length_penalty,
                 max_length=args.max_length)
    options = {name: value for name, value in given.items() if value is not None}
    if options.get("length_penalty") == "none":
        options["length_penalty"] = None
    folder = export_ctranslate2(model, args.output, beam_size=args.beam, n_best=args.n_best,
                                quantization=args.quantization, **options)
    if not args.quiet:
        weights = f", {args.quantization} weights" if args.quantization else ""
        print(f"exported {folder}: {_size(export_bytes(folder))} (CTranslate2{weights})")
