"""`kseq translate`, `caption`, `classify` and `tag`: one result line per input.

`caption` and an image `classify` take each file on its own: every readable file gets its
output, each one that cannot be read a `kseq: warning:` line naming it, and the exit code
is then 1.
"""

import os
import sys

from kseq.cli.results import _check_output_file, _emit, _json_line, _note, _warn
from kseq.cli.task_loading import _load_task
from kseq.errors import KseqError, one_line


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
