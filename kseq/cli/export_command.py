"""`kseq export`: write a TF Serving SavedModel (BASE/NAME/VERSION)."""

import os

from kseq.cli.task_loading import _load_task
from kseq.cli.task_options import SEARCH_TUNING, _taken
from kseq.errors import KseqError


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
