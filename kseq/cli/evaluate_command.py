"""`kseq evaluate`: the task's scores on a TSV or CSV file or the run's test/valid split."""

import contextlib
import itertools
import json
import logging
import os

from kseq.cli.path_checks import check_evaluation_data
from kseq.cli.results import _check_output_file, _note
from kseq.cli.task_loading import _load_task
from kseq.cli.task_options import SEARCH_TUNING, _taken
from kseq.errors import KseqError


def _evaluation_pairs(model_dir, data, model=None, columns=None, limit=None):
    """`--data` as a TSV or CSV file (`columns`: its input and reference columns by header
    name), or the test/valid split of the data the run trained on (read as it was); the
    first `limit` pairs (all if None)."""
    from kseq import zoo
    from kseq.presets.catalog import is_preset
    from kseq.training.run_folder import RunFolder
    from kseq.training import load_data

    if os.path.isfile(data):
        return _file_pairs(data, model, columns, limit)
    if data in ("test", "valid") and not os.path.exists(model_dir) and is_preset(model_dir):
        return zoo.build_data(zoo.load_recipe(model_dir))[data][:limit]  # a preset's data
    run = RunFolder(_run_folder_of(model_dir))
    recipe_path = run.file("recipe.json")
    if not os.path.isfile(recipe_path):
        raise KseqError(f"--data {data} is a split of the run a model trained in; this model "
                        f"has no run folder (recipe.json): give --data FILE. Received: "
                        f"--data {data}")
    recipe = zoo.load_recipe(recipe_path)
    return load_data(recipe, run.resolve_data_source(None, recipe))[data][:limit]  # checked


def _run_folder_of(model_dir):
    """The run folder of a model argument: the folder itself, or a `.keras` file's folder
    (`kseq evaluate RUN/model.keras --data test` reads RUN's split)."""
    if str(model_dir).endswith(".keras") and os.path.isfile(model_dir):
        return os.path.dirname(os.path.abspath(model_dir))
    return model_dir


def _file_pairs(path, model, columns, limit):
    """The `(input, reference)` pairs of a data file, read row by row and only up to `limit`
    (`--limit` on a large file reads that many rows, not the file); image paths are read
    relative to the file."""
    from kseq.data.pipeline.parallel_text import iter_table_rows

    reader = getattr(model, "read_data_file", None)  # a task whose rows are not pairs of
    if reader is not None:                           # columns (a language model's texts)
        return reader(path, limit)
    skipped = {"empty": 0, "ragged": 0, "not_utf8": 0}
    with contextlib.closing(iter_table_rows(path, columns, skipped=skipped)) as rows:
        pairs = [(source, target) for _, source, target in itertools.islice(rows, limit)]
    if any(skipped.values()):  # as `read_table_rows` reports them
        logging.getLogger("kseq").warning(
            "%s: skipped %s", path, {kind: count for kind, count in skipped.items() if count})
    if not pairs:
        raise KseqError(f"No usable rows (an input and a reference each) in the data "
                        f"file. Received: --data {path}")
    if getattr(model.preprocessor, "input_kind", "text") == "images":  # image paths
        from kseq.data.pipeline.image_inputs import read_image_pairs

        pairs = read_image_pairs(pairs, os.path.dirname(os.path.abspath(path)))
    return pairs


def _evaluate(args):
    _check_output_file(args.output)
    if args.columns and args.data in ("test", "valid") and not os.path.isfile(args.data):
        raise KseqError(f"--columns picks the columns of a --data file; the {args.data} split "
                        f"is read as the run recorded it. Received: --data {args.data} "
                        f"--columns {','.join(args.columns)}")
    check_evaluation_data(args.data, args.model_dir)  # before the model (and TensorFlow) loads
    model = _load_task(args.model_dir, "evaluate")
    given = dict(beam_size=args.beam, mbr=args.mbr, plot=args.plot, alpha=args.alpha,
                 length_penalty=args.length_penalty, max_length=args.max_length)
    options = _taken(model, model.evaluate_options, given, SEARCH_TUNING + ("plot",),
                     "evaluate")
    pairs = _evaluation_pairs(args.model_dir, args.data, model, args.columns, args.limit)
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
