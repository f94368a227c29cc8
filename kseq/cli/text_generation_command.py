"""`kseq generate`: a language model's continuation of each prompt, one result line per prompt.

Prompts are `--prompt` arguments (repeatable; `--prompt ""` starts from nothing), or the
lines of `--input FILE` or stdin, decoded as a stream like `kseq translate`
(`kseq.cli.decode_stream`). `--category C` conditions every prompt; without it, a line
`category<TAB>prompt` names its own. `--count N` generates N texts per prompt (with
`--sample`, N draws). Each result line is the continuation (the text after the prompt;
n-best joined by ` ||| `), with `--scores` its score, with `--json` an object.
"""

from kseq.cli.decode_stream import decode_stream, input_chunks, opened_input
from kseq.cli.results import _check_output_file
from kseq.cli.task_loading import _load_task
from kseq.errors import KseqError

GENERATE_BATCH = 64  # prompts per model call
CHUNK_BATCHES = 16


def _options(args):
    """The API keywords of the command's search flags (unset ones keep the API's defaults)."""
    if args.n_best > args.beam:
        raise KseqError(f"--n-best must be <= --beam-size. Received: --n-best {args.n_best}, "
                        f"--beam-size {args.beam}")
    if not args.sample:
        for flag, value in (("--temperature", args.temperature), ("--top-k", args.top_k),
                            ("--top-p", args.top_p), ("--seed", args.seed)):
            if value is not None:
                raise KseqError(f"{flag} applies to --sample. Received: {flag} {value}")
    options = dict(beam_size=args.beam, n_best=args.n_best, sample=args.sample)
    given = dict(temperature=args.temperature, top_k=args.top_k, top_p=args.top_p,
                 seed=args.seed, max_length=args.max_length, alpha=args.alpha,
                 length_penalty=args.length_penalty,
                 no_repeat_ngram_size=args.no_repeat_ngram_size)
    options.update({name: value for name, value in given.items() if value is not None})
    if options.get("length_penalty") == "none":
        options["length_penalty"] = None
    return options


def _prompts(chunk, category):
    """`(prompts, categories)` of a chunk of bytes lines: `category` for all, or each line's
    own `category<TAB>prompt` when `category` is None."""
    prompts, categories = [], []
    for line in chunk:
        text = line.decode("utf-8", "replace")
        if category is None and "\t" in text:
            name, text = text.split("\t", 1)
        else:
            name = category or ""
        prompts.append(text)
        categories.append(name)
    return prompts, categories


def _lines(args, prompts, categories, outputs):
    from kseq.cli.results import _json_line

    lines = []
    for prompt, category, (output, scores) in zip(prompts, categories, outputs):
        texts = output if isinstance(output, list) else [output]
        if args.json:
            lines.append(_json_line({"prompt": prompt, "category": category, "text": texts,
                                     "score": [float(score) for score in scores]}))
        elif args.scores:
            lines.append("\t".join(f"{text}\t{score:.4f}" for text, score in zip(texts, scores)))
        else:
            lines.append(" ||| ".join(texts))
    return lines


def _generate(args):
    options = _options(args)
    _check_output_file(args.output)
    with opened_input(args, args.prompt) as stream:
        model = _load_task(args.model_dir, "generate")

        def decode(chunk):
            prompts, categories = _prompts(chunk, args.category)
            prompts = [p for p in prompts for _ in range(args.count)]
            categories = [c for c in categories for _ in range(args.count)]
            outputs = model.generate(prompts, categories, return_scores=True,
                                     batch_size=GENERATE_BATCH, **options)
            return _lines(args, prompts, categories, outputs)

        chunks = input_chunks(args.prompt, stream, first=GENERATE_BATCH,
                              largest=GENERATE_BATCH * CHUNK_BATCHES)
        return decode_stream(args, "generated", chunks, decode, stream is not None)


def add_generate_command(commands, common, model_help, integer, finite, fraction):
    """The `generate` command's arguments (its argument types are the parser's)."""
    generate = commands.add_parser(
        "generate", help="a language model's continuation of each --prompt, or of each stdin "
                         "(or --input FILE) line as a stream", parents=common)
    generate.add_argument("model_dir", help=model_help)
    generate.add_argument("--prompt", action="append", metavar="TEXT",
                          help="a prompt (repeatable; \"\" starts from nothing; default: one "
                               "per stdin line, category<TAB>prompt lines naming their own "
                               "category)")
    generate.add_argument("--input", metavar="FILE",
                          help="read the prompts from FILE, one a line ('-' is stdin)")
    generate.add_argument("--category", metavar="C",
                          help="the category every prompt is generated for")
    generate.add_argument("--count", type=integer(1), default=1, metavar="N",
                          help="texts per prompt (default: 1)")
    generate.add_argument("--sample", action="store_true",
                          help="draw each token (default: greedy, or beam search)")
    generate.add_argument("--temperature", type=finite, metavar="T",
                          help="with --sample: divide the logits by T (default: 1)")
    generate.add_argument("--top-k", type=integer(1), metavar="K",
                          help="with --sample: draw among the K best tokens")
    generate.add_argument("--top-p", type=fraction, metavar="P",
                          help="with --sample: draw among the best tokens holding P of the "
                               "probability")
    generate.add_argument("--seed", type=integer(0), metavar="S",
                          help="with --sample: the same seed gives the same texts")
    generate.add_argument("--beam-size", "--beam", dest="beam", type=integer(1), default=1,
                          metavar="K", help="beam width (default: 1, greedy)")
    generate.add_argument("--n-best", type=integer(1), default=1,
                          help="outputs per prompt, best first (<= --beam-size)")
    generate.add_argument("--length-penalty", choices=("gnmt", "fairseq", "none"),
                          help="beam search's length normalisation (default: gnmt)")
    generate.add_argument("--alpha", type=finite, help="the length penalty's exponent")
    generate.add_argument("--max-length", type=integer(1), metavar="N",
                          help="most tokens of prompt and text (default and maximum: the "
                               "model's max_length)")
    generate.add_argument("--no-repeat-ngram-size", type=integer(1), metavar="N",
                          help="never repeat an n-gram of N tokens")
    generate.add_argument("--scores", action="store_true",
                          help="follow each text by a TAB and its score")
    generate.add_argument("--json", action="store_true",
                          help="one JSON object per text instead (prompt, category, text, "
                               "score)")
    generate.add_argument("--output", metavar="FILE",
                          help="write the results to FILE instead of printing them")
    generate.set_defaults(run=_generate)
    return generate
