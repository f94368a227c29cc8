"""`CTranslate2LanguageModel`: a kseq Transformer language model exported to CTranslate2.

`kseq.models.language_model.ctranslate2_export.export_ctranslate2` writes the folder; this
class reads it and offers `generate(prompts, category, ...)` as `LanguageModel.generate`
does: kseq's plain-Python tokenizer cuts each prompt, `ctranslate2.Generator.generate_batch`
continues `[category token or <s>] + prompt` (the prompt forwarded at once, as kseq's
prefill), category tokens suppressed (kseq never predicts them), and kseq's detokenizer
joins the continuation. No TensorFlow is imported.
"""

import json
import os

from kseq.arguments import check_float, check_int, check_sampling, check_texts
from kseq.ctranslate2.translator import CONFIG_FILE, FORMAT_VERSION, import_ctranslate2
from kseq.errors import KseqError
from kseq.text.plain_tokenizer import PlainTokenizer


class CTranslate2LanguageModel:
    """Generates with a CTranslate2 export of a `LanguageModel`.

    Args:
        directory: a folder written by the language model's `export_ctranslate2`.
        compute_type, intra_threads, inter_threads, device: CTranslate2's `Generator`
            options.
    """

    cli_verbs = ("generate",)

    def __init__(self, directory, compute_type="default", intra_threads=0, inter_threads=1,
                 device="cpu"):
        self.ctranslate2 = import_ctranslate2()
        self.directory = os.fspath(directory)
        path = os.path.join(self.directory, CONFIG_FILE)
        try:
            with open(path, encoding="utf-8") as handle:
                self.config = json.load(handle)
            with open(os.path.join(self.directory, self.config["vocabulary"]),
                      encoding="utf-8") as handle:
                vocabulary = json.load(handle)
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise KseqError(f"Not a readable kseq CTranslate2 export ({error}). "
                            f"Received: {path}") from None
        if self.config.get("format_version") != FORMAT_VERSION or \
                self.config.get("task") != "language_model":
            raise KseqError(f"Not a kseq language model export of format {FORMAT_VERSION}. "
                            f"Received: {path}")
        self.category_tokens = dict(self.config["categories"])
        text_size = len(vocabulary) - len(self.category_tokens)
        self.tokenizer = PlainTokenizer({**self.config["tokenizer"],
                                         "vocabulary": vocabulary[:text_size]})
        self.max_length = int(self.config["max_length"])
        try:
            self.generator = self.ctranslate2.Generator(
                self.directory, device=device, compute_type=compute_type,
                intra_threads=intra_threads, inter_threads=inter_threads)
        except (RuntimeError, ValueError) as error:
            raise KseqError(f"CTranslate2 cannot load this export ({' '.join(str(error).split())})."
                            f" Received: {self.directory}") from None

    @property
    def categories(self):
        return list(self.category_tokens)

    def __repr__(self):
        return f"CTranslate2LanguageModel({self.directory!r})"

    def generate(self, prompts, category=None, *, max_length=None, beam_size=1, sample=False,
                 temperature=1.0, top_k=None, top_p=None, seed=None, n_best=1,
                 length_penalty="fairseq", alpha=0.6, no_repeat_ngram_size=0,
                 return_scores=False, batch_size=64, patience=2.0):
        """As `LanguageModel.generate`; `length_penalty` is "fairseq" (`L^α`) or None
        (CTranslate2 has no GNMT penalty), a seed draws CTranslate2's own random stream
        (the same seed, the same texts here; not the Keras model's draws), and `patience`
        lets a beam search run until `beam_size · patience` hypotheses have finished
        (CTranslate2 stops there; kseq stops when no live beam can win)."""
        prompts = [p.decode("utf-8", "replace") for p in check_texts("prompts", prompts)]
        categories = [category or ""] * len(prompts) if category is None or isinstance(
            category, str) else [c or "" for c in category]
        if len(categories) != len(prompts):
            raise KseqError(f"`category` needs one name per prompt. Received: "
                            f"{len(categories)} categories for {len(prompts)} prompts")
        for name in categories:
            if name and name not in self.category_tokens:
                raise KseqError(f"Unknown category; the model knows "
                                f"{sorted(self.category_tokens) or 'none'}. Received: "
                                f"category={name!r}")
        if length_penalty not in ("fairseq", None):
            raise KseqError(f"CTranslate2 normalises scores by L^alpha only: length_penalty "
                            f"must be 'fairseq' or None. Received: length_penalty="
                            f"{length_penalty!r}")
        max_length = check_int("max_length", max_length, maximum=self.max_length,
                               allow_none=True) or self.max_length
        beam_size, n_best = check_int("beam_size", beam_size), check_int("n_best", n_best)
        temperature, top_k, top_p, seed = check_sampling(
            sample, temperature, 0 if top_k is None else top_k, 1.0 if top_p is None else top_p,
            seed, n_best, beam_size)
        if sample and seed is not None:
            self.ctranslate2.set_random_seed(seed)
        vocabulary = self.tokenizer.vocabulary
        rows = [[vocabulary[i] for i in ids][: self.max_length - 1]
                for ids in self.tokenizer.tokenize(prompts)]
        options = dict(beam_size=1 if sample else beam_size, num_hypotheses=n_best,
                       length_penalty=check_float("alpha", alpha) if length_penalty and
                       beam_size > 1 and not sample else 0.0,
                       no_repeat_ngram_size=no_repeat_ngram_size,
                       suppress_sequences=[[token] for token in self.category_tokens.values()]
                       or None, include_prompt_in_result=False, return_scores=True,
                       patience=check_float("patience", patience, minimum=1.0)
                       if beam_size > 1 and not sample else 1.0)
        if sample:
            options.update(sampling_topk=top_k, sampling_topp=top_p,
                           sampling_temperature=temperature)
        results = [None] * len(prompts)
        # One call per prompt length: the continuation's room is `max_length - prompt`.
        by_length = {}
        for row, tokens in enumerate(rows):
            by_length.setdefault(len(tokens), []).append(row)
        for length, members in sorted(by_length.items()):
            starts = [[self.category_tokens.get(categories[row], "<s>")] + rows[row]
                      for row in members]
            for begin in range(0, len(starts), batch_size):
                chunk = members[begin : begin + batch_size]
                found = self.generator.generate_batch(
                    starts[begin : begin + batch_size], max_length=max(max_length - length, 1),
                    **options)
                for row, result in zip(chunk, found):
                    texts = self.tokenizer.detokenize(
                        [[self.tokenizer.ids.get(t, 1) for t in seq] for seq in result.sequences])
                    out = texts if n_best > 1 else texts[0]
                    results[row] = (out, [float(s) for s in result.scores]) if return_scores \
                        else out
        return results
