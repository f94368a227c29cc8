"""`CTranslate2Translator`: a kseq Transformer translator exported to CTranslate2, run as one.

`kseq.models.translator.ctranslate2_export.export_ctranslate2` writes a CTranslate2
model folder (its `model.bin`, `config.json` and vocabularies) with a `kseq_ctranslate2.json`
beside them: the tokenizer settings and search defaults. This class reads such
a folder and offers `translate(texts, ...)` as a `Translator` does: kseq's own
tokenizer cuts each text into tokens (its plain-Python twin,
`kseq.text.PlainTokenizer`: the same tokens as in training, without
TensorFlow), `ctranslate2.Translator.translate_batch` searches, and kseq's
detokenizer joins the output tokens. Search options that CTranslate2 cannot reproduce are
refused in one line (see `translate`).

Shape letters: `B` inputs, `M` outputs per input (`n_best`).
"""

import json
import logging
import os

from kseq.arguments import check_choice, check_float, check_int, check_sampling, check_texts
from kseq.errors import KseqError
from kseq.text.plain_tokenizer import PlainTokenizer

logger = logging.getLogger("kseq")

CONFIG_FILE = "kseq_ctranslate2.json"
FORMAT_VERSION = 1
INSTALL_HINT = "pip install 'kseq[ctranslate2]'"
# kseq's length penalties and CTranslate2's: only `L^α` (and none) exist on both sides.
LENGTH_PENALTIES = ("fairseq", None)


def import_ctranslate2():
    """The `ctranslate2` module, or a one-line `KseqError` naming the extra that installs it."""
    try:
        import ctranslate2
    except ImportError as error:
        raise KseqError(f"CTranslate2 export and inference need the ctranslate2 package: "
                        f"{INSTALL_HINT}. Received: ImportError ({error})") from None
    return ctranslate2


def is_ctranslate2_export(path):
    """Whether `path` is a folder written by `ctranslate2_export.export_ctranslate2`."""
    try:
        return os.path.isfile(os.path.join(os.fspath(path), CONFIG_FILE))
    except TypeError:
        return False


def read_export_config(directory):
    """The `kseq_ctranslate2.json` of `directory`, checked, with the tokenizers' vocabularies
    read back from CTranslate2's vocabulary files."""
    path = os.path.join(directory, CONFIG_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
        for side in ("source", "target"):
            with open(os.path.join(directory, config["vocabularies"][side]),
                      encoding="utf-8") as handle:
                config[f"{side}_tokenizer"]["vocabulary"] = json.load(handle)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise KseqError(f"Not a readable kseq CTranslate2 export ({error}). "
                        f"Received: {path}") from None
    if config.get("format_version") != FORMAT_VERSION:
        raise KseqError(f"This kseq reads CTranslate2 exports of format {FORMAT_VERSION}. "
                        f"Received: format_version={config.get('format_version')!r} in {path}")
    return config


def load_ctranslate2_translator(folder, inputs, options):
    """`kseq.zoo.translator(folder)` for a CTranslate2 export: `inputs` (the builder's
    `train_data`, `vocab`, `recipe`) must be None and `options` only the engine's."""
    given = sorted(name for name, value in inputs.items() if value is not None)
    unknown = sorted(set(options) - {"compute_type", "intra_threads", "inter_threads", "device"})
    if given or unknown:
        raise KseqError(f"A CTranslate2 export is built; it takes only compute_type, "
                        f"intra_threads, inter_threads and device. Received: "
                        f"{', '.join(given + unknown)}")
    return CTranslate2Translator(folder, **options)


class CTranslate2Translator:
    """Translates with a CTranslate2 export; the interface of `Translator.translate`.

    Args:
        directory: a folder written by `ctranslate2_export.export_ctranslate2`.
        compute_type: CTranslate2's compute type (`"default"`: the saved weights'
            type; `"int8"`, `"int8_float32"`, `"float32"`, ...).
        intra_threads: threads per translation (0: CTranslate2's default).
        inter_threads: translations run in parallel.
        device: `"cpu"`, `"cuda"` or `"auto"`.

    Example:
    >>> import kseq, tempfile, os
    >>> folder = os.path.join(tempfile.mkdtemp(), "ct2")
    >>> from kseq.models.translator.ctranslate2_export import export_ctranslate2
    >>> _ = export_ctranslate2(kseq.zoo.translator("numbers_fr_transformer"), folder)
    >>> kseq.zoo.translator(folder).translate(["forty-two"], beam_size=1)
    ['quarante-deux']
    """

    cli_verbs = ("translate",)

    def __init__(self, directory, compute_type="default", intra_threads=0, inter_threads=1,
                 device="cpu"):
        self.ctranslate2 = import_ctranslate2()
        self.directory = os.fspath(directory)
        self.config = read_export_config(self.directory)
        self.source_tokenizer = PlainTokenizer(self.config["source_tokenizer"])
        self.target_tokenizer = PlainTokenizer(self.config["target_tokenizer"])
        self.max_source_length = self.config["max_source_length"]
        self.max_target_length = self.config["max_target_length"]
        self.search_defaults = dict(self.config["search"])
        try:
            self.translator = self.ctranslate2.Translator(
                self.directory, device=device, compute_type=compute_type,
                intra_threads=intra_threads, inter_threads=inter_threads)
        except (RuntimeError, ValueError) as error:
            raise KseqError(f"CTranslate2 cannot load this export ({' '.join(str(error).split())})."
                            f" Received: {self.directory}, compute_type={compute_type!r}, "
                            f"device={device!r}") from None

    def __repr__(self):
        return f"CTranslate2Translator({self.directory!r})"

    # === Text in, text out ===

    def translate(self, texts, beam_size=None, length_penalty="default", alpha=None, n_best=None,
                  batch_size=64, xla=False, return_scores=False, return_truncated=False,
                  prefixes=None, mbr=False, max_length=None, min_length=0,
                  coverage_penalty=0.0, no_repeat_ngram_size=0, sampling=False,
                  temperature=1.0, top_k=0, top_p=1.0, seed=None, patience=None):
        """Translates a list of strings; returns `list[str]`, or `list[list[str]]` for n_best > 1.

        As `Translator.translate`, with these differences: `beam_size`,
        `length_penalty`, `alpha` and `n_best` default to the export's search
        settings (its `kseq_ctranslate2.json`); `length_penalty` is `"fairseq"`
        (`L^α`, `L` counting the end token, as in kseq) or None, since
        CTranslate2 has no GNMT penalty; `xla`, `mbr`, `prefixes` and a
        coverage penalty are refused (CTranslate2 has no XLA, no MBR, and
        scores prefixes and coverage differently). `patience` (CTranslate2's
        own option; default: the export's, 2) lets a beam search run until
        `beam_size · patience` hypotheses have finished: with 1 it stops at the
        first `beam_size`, often before kseq's provable stop, and can miss the
        hypothesis kseq finds.
        """
        options = self._search_options(beam_size, length_penalty, alpha, n_best, max_length,
                                       min_length, no_repeat_ngram_size, sampling,
                                       temperature, top_k, top_p, seed, patience)
        _refuse_unmapped(xla=xla, mbr=mbr, prefixes=prefixes, coverage_penalty=coverage_penalty)
        texts = check_texts("texts", texts)
        batch_size = check_int("batch_size", batch_size)
        n_best = options["num_hypotheses"]
        if not texts:
            return []
        tokens, truncated = self.source_tokens(texts)
        busy = [row for row, pieces in enumerate(tokens) if pieces]  # "" has no output
        results = self.translator.translate_batch(
            [tokens[row] for row in busy], max_batch_size=batch_size, batch_type="examples",
            return_scores=True, max_input_length=0, **options) if busy else []
        hypotheses = [[""] * n_best for _ in texts]
        scores = [[0.0] * n_best for _ in texts]
        flat = [hyp for result in results for hyp in result.hypotheses]
        strings = iter(self.detokenize(flat))
        for row, result in zip(busy, results):
            hypotheses[row] = [next(strings) for _ in result.hypotheses]
            scores[row] = [float(score) for score in result.scores]
        if sum(truncated):
            logger.warning("%d input(s) longer than the model's input length were truncated.",
                           sum(truncated))
        return [_output_item(hyps, row_scores, cut, n_best, return_scores, return_truncated)
                for hyps, row_scores, cut in zip(hypotheses, scores, truncated)]

    def source_tokens(self, texts):
        """`[B]` texts -> `(tokens [B][S] str, truncated [B] bool)`: kseq's tokenizer, cut to
        `max_source_length` as the Keras model's preprocessor cuts them."""
        vocabulary = self.source_tokenizer.vocabulary
        rows = [[vocabulary[i] for i in row] for row in self.source_tokenizer.tokenize(texts)]
        truncated = [len(row) > self.max_source_length for row in rows]
        return [row[: self.max_source_length] for row in rows], truncated

    def detokenize(self, hypotheses):
        """Output token lists -> strings with kseq's detokenizer (stops at `</s>`)."""
        unknown = self.target_tokenizer.ids["<unk>"]
        return self.target_tokenizer.detokenize(
            [[self.target_tokenizer.ids.get(token, unknown) for token in tokens]
             for tokens in hypotheses])

    def plot_attention(self, text, path):
        raise KseqError("Attention plots need the Keras model: a CTranslate2 export keeps no "
                        f"attention weights. Received: {self.directory}")

    def _search_options(self, beam_size, length_penalty, alpha, n_best, max_length, min_length,
                        no_repeat_ngram_size, sampling, temperature, top_k, top_p, seed,
                        patience):
        """kseq's search options (checked as `GenerativeTask.search_settings` checks them) as
        `translate_batch` keywords."""
        defaults = self.search_defaults
        beam_size = check_int("beam_size", defaults["beam_size"] if beam_size is None
                              else beam_size)
        n_best = check_int("n_best", defaults.get("n_best", 1) if n_best is None else n_best)
        if length_penalty == "default":
            length_penalty = defaults["length_penalty"]
        if length_penalty == "gnmt":
            raise KseqError("CTranslate2 normalises scores by L^alpha only: use "
                            "length_penalty='fairseq' (or None); GNMT's ((5+L)/6)^alpha has no "
                            "CTranslate2 counterpart. Received: length_penalty='gnmt'")
        check_choice("length_penalty", length_penalty, LENGTH_PENALTIES)
        alpha = check_float("alpha", defaults["alpha"] if alpha is None else alpha)
        max_length = check_int("max_length", defaults.get("max_length") if max_length is None
                               else max_length, maximum=self.max_target_length,
                               allow_none=True) or self.max_target_length
        min_length = check_int("min_length", min_length, minimum=0, maximum=max_length)
        no_repeat_ngram_size = check_int("no_repeat_ngram_size", no_repeat_ngram_size,
                                         minimum=0)
        temperature, top_k, top_p, seed = check_sampling(sampling, temperature, top_k, top_p,
                                                         seed, n_best, beam_size)
        patience = check_float("patience", defaults.get("patience", 1.0) if patience is None
                               else patience, minimum=1.0)
        # kseq's `L` counts the end token: so must CTranslate2's (it counts the tokens it
        # returns). Greedy search and sampling return the summed log-probability, as in kseq.
        beam = beam_size > 1 and not sampling
        options = dict(beam_size=1 if sampling else beam_size, num_hypotheses=n_best,
                       length_penalty=alpha if beam and length_penalty else 0.0,
                       return_end_token=True, max_decoding_length=max_length,
                       min_decoding_length=min_length, no_repeat_ngram_size=no_repeat_ngram_size,
                       patience=patience if beam else 1.0)
        if sampling:
            if seed is not None:
                self.ctranslate2.set_random_seed(seed)
            options.update(sampling_topk=top_k, sampling_topp=top_p,
                           sampling_temperature=temperature)
        return options


def _refuse_unmapped(xla, mbr, prefixes, coverage_penalty):
    """One line for each `translate` option a CTranslate2 export cannot honour."""
    reasons = {"xla": "CTranslate2 runs its own kernels, not XLA",
               "mbr": "kseq's MBR choice runs on the Keras model's beam",
               "prefixes": "CTranslate2 scores a target prefix differently",
               "coverage_penalty": "CTranslate2 takes coverage from one attention head"}
    values = {"xla": xla, "mbr": mbr, "prefixes": prefixes, "coverage_penalty": coverage_penalty}
    for name, value in values.items():
        if value not in (False, None, 0, 0.0):
            raise KseqError(f"A CTranslate2 export takes no `{name}` ({reasons[name]}); use the "
                            f"Keras model. Received: {name}={value!r}")


def _output_item(hyps, scores, cut, n_best, return_scores, return_truncated):
    """One input's result, shaped as `Translator.translate` shapes it."""
    out = hyps if n_best > 1 else hyps[0]
    item = (out, scores) if return_scores else (out,)
    item += (cut,) if return_truncated else ()
    return item if len(item) > 1 else out
