"""`kseq translate`, `caption`, `classify` and `tag`: one result line per input.

Inputs are arguments, or the lines of `--input FILE` or stdin, decoded as a stream
(`kseq.cli.decode_stream`): chunks of lines in the model's usual batches, each chunk's
results written in input order as soon as they exist. `caption` and an image `classify`
take each file on its own: every readable file gets its output, each one that cannot be read
a `kseq: warning:` line naming it, and the exit code is then 1.
"""

import os

from kseq.cli.decode_stream import decode_stream, input_chunks, opened_input
from kseq.cli.path_checks import check_model_argument, reads_images, unreadable_images
from kseq.cli.results import _check_output_file, _json_line, _note, _warn
from kseq.cli.task_loading import _load_task
from kseq.errors import KseqError, one_line

# Inputs per model call (the API's default `batch_size`: the same batches as before the
# commands streamed) and the longest chunk, 16 batches: `translate` sorts a chunk by length
# before batching it, and on numbers_fr_transformer chunks of 256 to 4096 lines decode as
# fast as the whole input at once (1,350-1,570 lines/s, greedy, 8,192 lines).
GENERATE_BATCH = 64
LABEL_BATCH = 256  # classify and tag
CHUNK_BATCHES = 16


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


def _openable_images(args, given):
    """`(paths, skipped)`: the image files among `given` (arguments) that can be opened, and
    how many cannot, each named in a warning line: checked before the model (and its image
    backbone) loads, so a mistyped path is said at once."""
    check_model_argument(args.model_dir)  # a missing model first: it is the bigger mistake
    unreadable = unreadable_images(given)
    for path, reason in unreadable.items():
        _warn(f"skipped {path}: {reason}")
    openable = [path for path in given if path not in unreadable]
    return openable, len(given) - len(openable)


def _chunks(stream, given, batch):
    """`given` (arguments) as one chunk, or `stream`'s lines: one batch, then doubling up to
    `CHUNK_BATCHES` batches."""
    return input_chunks(given, stream, first=batch, largest=batch * CHUNK_BATCHES)


def _texts(chunk):
    return [line.decode("utf-8", "replace") for line in chunk]


def _translate(args):
    options = _search_options(args)
    if args.plot_attention:
        _check_plot_folder(args.plot_attention)
    _check_output_file(args.output)
    with opened_input(args, args.texts) as stream:
        model = _load_task(args.model_dir, "translate")
        done = 0

        def decode(chunk):
            nonlocal done
            outputs = model.translate(chunk, return_scores=True, batch_size=GENERATE_BATCH,
                                      **options)
            texts = _texts(chunk)
            if args.plot_attention:
                _plot_attention(model, texts, args.plot_attention, done)
            done += len(chunk)
            return _generated_lines(args, texts, outputs)

        chunks = _chunks(stream, args.texts, GENERATE_BATCH)
        code = decode_stream(args, "translated", chunks, decode, stream is not None)
    if args.plot_attention and done:
        _note(args, f"attention plots in {args.plot_attention}")
    return code


def _plot_attention(model, inputs, folder, first):
    """One PNG per input, numbered from `first` (its place in the whole input)."""
    os.makedirs(folder, exist_ok=True)
    for index, value in enumerate(inputs, start=first):
        model.plot_attention(value, os.path.join(folder, f"{index:04d}.png"))


def _caption(args):
    options = _search_options(args)
    if args.plot_attention:
        _check_plot_folder(args.plot_attention)
    _check_output_file(args.output)
    with opened_input(args, args.images) as stream:
        given, skipped = _openable_images(args, args.images)
        if skipped and not given:
            return 1  # no image to caption: the model is not loaded
        model = _load_task(args.model_dir, "caption")
        done = 0

        def decode(chunk):
            nonlocal done, skipped
            paths, images = _readable_images(model, [os.fsdecode(line) for line in chunk])
            skipped += len(chunk) - len(paths)
            outputs = model.caption(images, return_scores=True, language=args.language,
                                    batch_size=GENERATE_BATCH, **options) if images else []
            if args.plot_attention and paths:
                _plot_attention(model, paths, args.plot_attention, done)
            done += len(paths)
            return _generated_lines(args, paths, outputs, prefix=True)

        chunks = _chunks(stream, given, GENERATE_BATCH)
        code = decode_stream(args, "captioned", chunks, decode, stream is not None)
    if args.plot_attention and done:
        _note(args, f"attention plots in {args.plot_attention}")
    return 1 if skipped else code


def _classify(args):
    _check_output_file(args.output)
    with opened_input(args, args.texts) as stream:
        given, skipped = args.texts, 0
        if given and reads_images(args.model_dir):  # image files: checked before it loads
            given, skipped = _openable_images(args, given)
            if skipped and not given:
                return 1
        model = _load_task(args.model_dir, "classify")
        images = getattr(model.preprocessor, "input_kind", "text") == "images"  # files

        def decode(chunk):
            nonlocal skipped
            inputs = _texts(chunk)
            values = _readable_images(model, inputs)[0] if images else inputs
            skipped += len(inputs) - len(values)
            results = model.predict_labels(values, top_k=args.top_k,
                                           batch_size=LABEL_BATCH) if values else []
            return [_label_line(args, value, result, images)
                    for value, result in zip(values, results)]

        chunks = _chunks(stream, given, LABEL_BATCH)
        code = decode_stream(args, "classified", chunks, decode, stream is not None)
    return 1 if skipped else code


def _label_line(args, value, result, images):
    """`label<TAB>probability` per label (`--top-k`), after the file for an image, or
    `--json`'s object."""
    pairs = result if isinstance(result, list) else [result]
    if args.json:
        return _json_line({"input": value, "label": [label for label, _ in pairs],
                           "probability": [float(p) for _, p in pairs]})
    return (f"{value}\t" if images else "") + "\t".join(
        f"{label}\t{probability:.4f}" for label, probability in pairs)


def _tag(args):
    _check_output_file(args.output)
    with opened_input(args, args.texts) as stream:
        model = _load_task(args.model_dir, "tag")
        cut = 0

        def decode(chunk):
            nonlocal cut
            sentences = _texts(chunk)
            tagged = model.tag(sentences, batch_size=LABEL_BATCH, return_truncated=True)
            cut += sum(truncated for _, _, truncated in tagged)
            return [_tag_line(args, sentence, words, tags)
                    for sentence, (words, tags, _) in zip(sentences, tagged)]

        chunks = _chunks(stream, args.texts, LABEL_BATCH)
        code = decode_stream(args, "tagged", chunks, decode, stream is not None)
    if cut:  # once for the whole input, not once a chunk
        model.warn_truncated(cut)
    return code


def _tag_line(args, sentence, words, tags):
    if args.json:
        return _json_line({"input": sentence, "words": list(words), "tags": list(tags)})
    return " ".join(f"{word}/{tag}" for word, tag in zip(words, tags))
