"""`kseq evaluate`: the task's scores on a TSV or CSV file or the run's test/valid split."""

import json
import os

from kseq.cli.results import _check_output_file, _note
from kseq.cli.task_loading import _load_task
from kseq.cli.task_options import SEARCH_TUNING, _taken
from kseq.errors import KseqError


def _evaluation_pairs(model_dir, data, model=None, columns=None):
    """`--data` as a TSV or CSV file (`columns`: its input and reference columns by header
    name), or the test/valid split of the data the run trained on (read as it was)."""
    from kseq import zoo
    from kseq.data.pipeline.parallel_text import read_table_rows
    from kseq.presets.catalog import is_preset
    from kseq.training.run_folder import RunFolder
    from kseq.training import load_data

    if os.path.isfile(data):
        rows, _ = read_table_rows(data, columns)
        if not rows:
            raise KseqError(f"No usable rows (an input and a reference each) in the data "
                            f"file. Received: --data {data}")
        pairs = [(source, target) for _, source, target in rows]
        if getattr(model.preprocessor, "input_kind", "text") == "images":  # image paths
            from kseq.data.pipeline.image_inputs import read_image_pairs

            pairs = read_image_pairs(pairs, os.path.dirname(os.path.abspath(data)))
        return pairs
    if data in ("test", "valid") and not os.path.exists(model_dir) and is_preset(model_dir):
        return zoo.build_data(zoo.load_recipe(model_dir))[data]  # a shipped preset's data
    run = RunFolder(model_dir)
    recipe_path = run.file("recipe.json")
    if data not in ("test", "valid") or not os.path.isfile(recipe_path):
        raise KseqError("--data must be a TSV or CSV file, or 'test'/'valid' for a model "
                        f"trained by `kseq train`. Received: --data {data}")
    recipe = zoo.load_recipe(recipe_path)
    return load_data(recipe, run.resolve_data_source(None, recipe))[data]  # checks the file


def _evaluate(args):
    _check_output_file(args.output)
    if args.columns and args.data in ("test", "valid") and not os.path.isfile(args.data):
        raise KseqError(f"--columns picks the columns of a --data file; the {args.data} split "
                        f"is read as the run recorded it. Received: --data {args.data} "
                        f"--columns {','.join(args.columns)}")
    model = _load_task(args.model_dir, "evaluate")
    given = dict(beam_size=args.beam, mbr=args.mbr, plot=args.plot, alpha=args.alpha,
                 length_penalty=args.length_penalty, max_length=args.max_length)
    options = _taken(model, model.evaluate_options, given, SEARCH_TUNING + ("plot",),
                     "evaluate")
    pairs = _evaluation_pairs(args.model_dir, args.data, model, args.columns)
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
