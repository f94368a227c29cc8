"""`GenerativeTask`: a task whose output is a sequence found by search (translation, captions).

A subclass defines the step protocol — `encode(inputs) -> memory`,
`initial_state(memory)`, `step(token_ids, state, memory, t)`, and optionally
`prefill(input_ids [B, P], state, memory) -> state` (positions `< P` in one
pass) — and holds a preprocessor with `inference_inputs`, `input_signature`,
`detokenize` and `prompt_inputs`, and `max_target_length`. This class gives it
validated search settings, the search (with optional prompts: output tokens to
start from, see `kseq.decoding.prompts`), a compiled search typed by the
preprocessor, `generate()` (raw inputs in, strings out), `evaluate_bleu()` and
`evaluate(pairs)` (BLEU and chrF as an `EvaluationResult`).
"""

import logging

import numpy as np
import tensorflow as tf

from kseq.arguments import check_choice, check_float, check_int, check_sampling, check_texts
from kseq.decoding import beam_search, greedy_search, sample
from kseq.decoding.length_penalty import LENGTH_PENALTIES
from kseq.decoding.mbr import mbr_choice
from kseq.errors import KseqError
from kseq.metrics.bleu_callback import BleuCallback
from kseq.metrics.text_scores import corpus_scores
from kseq.models.evaluation_result import EvaluationResult
from kseq.models.task import Task
from kseq.text.tokenizer import END_ID, START_ID

logger = logging.getLogger("kseq")


def check_mbr(mbr, temperature, beam_size, n_best, search_options):
    """Validates `generate`'s MBR options (one choice out of a beam); returns the
    temperature as a float. Types are checked first, as everywhere else."""
    if not isinstance(mbr, bool):
        raise KseqError(f"`mbr` must be True or False. Received: mbr={mbr!r}")
    temperature = check_float("mbr_temperature", temperature, minimum=0.0,
                              exclusive_minimum=True)
    if not mbr:
        return temperature
    beam_size, n_best = check_int("beam_size", beam_size), check_int("n_best", n_best)
    sampling = search_options.get("sampling", False)
    if sampling is not False or n_best != 1 or beam_size < 2:
        raise KseqError("`mbr=True` chooses one output among a beam's hypotheses: it needs "
                        f"beam_size >= 2, n_best=1 and no sampling. Received: beam_size="
                        f"{beam_size}, n_best={n_best}, sampling={sampling!r}")
    return temperature


def _output_item(hyps, scores, cut, n_best, mbr, mbr_temperature, return_scores,
                 return_truncated):
    """One input's `generate` result from its beam: the top (or MBR-chosen) hypothesis, or
    all `n_best`, with scores and the truncation flag when asked for."""
    if mbr:
        chosen = mbr_choice(hyps, scores, mbr_temperature)
        hyps, scores = [hyps[chosen]], [scores[chosen]]
    out = hyps if n_best > 1 else hyps[0]
    item = (out, scores) if return_scores else (out,)
    item += (cut,) if return_truncated else ()
    return item if len(item) > 1 else out


class _SettingsSearch:
    """`model.search(inputs, settings, *prompt)` for one `settings`, as its own callable.

    TensorFlow counts a `tf.function`'s traces per Python code object: with a
    lambda, the cached searches of every settings would share one count, and
    five settings in a row would log a "triggered tf.function retracing"
    warning although each search is traced once. An object is counted on its
    own.
    """

    def __init__(self, model, settings, xla=False):
        self.model = model
        self.settings = settings
        self.xla = xla

    def __call__(self, inputs, *prompt):
        return self.model.search(inputs, self.settings, *prompt, xla=self.xla)


class _SettingsGenerate:
    """`generate`'s graph for one compiled search (its own callable, as `_SettingsSearch`):
    raw inputs (and prompt strings) -> strings, scores, empty and truncated flags."""

    def __init__(self, model, search):
        self.model = model
        self.search = search

    def __call__(self, inputs, *prompts):
        preprocessor = self.model.preprocessor
        model_inputs = preprocessor.traced("inference_inputs")(inputs)
        prompt = preprocessor.prompt_inputs(prompts[0]) if prompts else ()
        ids, scores, _ = self.search(model_inputs[preprocessor.input_signature[0].name],
                                     *prompt)
        return (self.model.output_strings(ids), scores, model_inputs["empty"],
                model_inputs["truncated"])


class GenerativeTask(Task):
    """Base class of search-decoded tasks; see the module docstring."""

    evaluate_options = ("beam_size", "mbr", "length_penalty", "alpha", "max_length")

    def search_settings(self, beam_size=4, length_penalty="gnmt", alpha=0.6, n_best=1,
                        max_length=None, min_length=0, coverage_penalty=0.0,
                        no_repeat_ngram_size=0, sampling=False, temperature=1.0, top_k=0,
                        top_p=1.0, seed=None):
        """The full, validated search configuration (a hashable tuple of items).

        Every argument is checked here, before tracing, so a bad value gives one
        `KseqError` line instead of an autograph listing. `max_length=None` means
        `max_target_length`.
        """
        beam_size = check_int("beam_size", beam_size)
        n_best = check_int("n_best", n_best)
        max_length = check_int("max_length", max_length, maximum=self.max_target_length,
                               allow_none=True) or self.max_target_length
        min_length = check_int("min_length", min_length, minimum=0, maximum=max_length)
        check_choice("length_penalty", length_penalty, LENGTH_PENALTIES)
        alpha = check_float("alpha", alpha)
        coverage_penalty = check_float("coverage_penalty", coverage_penalty, minimum=0.0)
        no_repeat_ngram_size = check_int("no_repeat_ngram_size", no_repeat_ngram_size, minimum=0)
        temperature, top_k, top_p, seed = check_sampling(sampling, temperature, top_k, top_p,
                                                         seed, n_best, beam_size)
        return tuple(sorted(dict(
            beam_size=beam_size, length_penalty=length_penalty, alpha=alpha, n_best=n_best,
            max_length=max_length, min_length=min_length, coverage_penalty=coverage_penalty,
            no_repeat_ngram_size=no_repeat_ngram_size, sampling=sampling,
            temperature=temperature, top_k=top_k, top_p=top_p, seed=seed,
        ).items()))

    def search(self, inputs, settings, prompt_ids=None, prompt_lengths=None, xla=False,
               compact_finished_rows=True, seed=None):
        """Model inputs -> `(ids [B, M, T], scores [B, M], lengths [B, M])`, traceable.

        With `prompt_ids [B, P]` (right-padded) and `prompt_lengths [B]`, every
        output starts with its prompt, which is not scored. `xla=True` when the
        search is compiled with XLA: the state then keeps fixed shapes (see
        `search_state`). Greedy and beam search stop computing finished rows
        (`kseq.decoding.row_compaction`) unless `xla` (fixed shapes) or
        `compact_finished_rows=False` (the same outputs, for comparisons);
        sampling never does. `seed` (an int or a scalar int tensor: an export's input)
        replaces the settings' sampling seed.
        """
        s = dict(settings)
        compact = compact_finished_rows and not xla
        memory = self.encode(inputs)
        state, state_shapes = self.search_state(memory, fixed_shapes=xla)
        start = self.search_start_ids(inputs, memory)
        common = dict(max_length=s["max_length"], end_id=END_ID, min_length=s["min_length"],
                      no_repeat_ngram_size=s["no_repeat_ngram_size"], prompt_ids=prompt_ids,
                      prompt_lengths=prompt_lengths, prefill=getattr(self, "prefill", None),
                      state_shapes=state_shapes)
        if s["sampling"]:
            ids, scores, lengths = sample(
                self.step, state, memory, start, temperature=s["temperature"],
                top_k=s["top_k"], top_p=s["top_p"], seed=s["seed"] if seed is None else seed,
                **common)
        elif s["beam_size"] == 1:
            ids, scores, lengths = greedy_search(self.step, state, memory, start,
                                                 compact_finished_rows=compact, **common)
        else:
            return beam_search(
                self.step, state, memory, start, beam_size=s["beam_size"],
                length_penalty=s["length_penalty"], alpha=s["alpha"],
                coverage_penalty=s["coverage_penalty"], n_best=s["n_best"],
                compact_finished_rows=compact, **common)
        return ids[:, None], scores[:, None], lengths[:, None]

    def search_start_ids(self, inputs, memory):
        """The first input token of each row, `[B]` int32: here `<s>` (a language model
        starts each row with its category's token)."""
        return tf.fill([tf.shape(memory["mask"])[0]], START_ID)

    def search_state(self, memory, fixed_shapes=False):
        """`(state, state_shapes)` a search starts from (see `kseq.decoding.greedy_search`).

        A decoder with `growing_state(memory)` (the Transformer's: a KV cache that
        starts with a block of slots and grows by blocks as the output gets longer)
        gives a state whose cache is only as long as the longest row so far needs,
        with the same outputs; `fixed_shapes=True` (XLA needs fixed loop shapes)
        and other decoders give `initial_state(memory)`, whose shapes never change.
        """
        decoder = getattr(self, "decoder", None)
        if fixed_shapes or not hasattr(decoder, "growing_state"):
            return self.initial_state(memory), None
        return decoder.growing_state(memory)

    def compiled_search(self, settings, xla=False, prompts=False):
        """A `tf.function` over the preprocessor's `input_signature`, cached per settings.

        `prompts=True` adds two inputs: `prompt_ids [B, P]` and `prompt_lengths [B]`.
        """
        cache = self.__dict__.setdefault("_compiled_searches", {})
        key = (settings, xla, prompts)
        if key not in cache:
            signature = list(self.preprocessor.input_signature)
            if prompts:
                signature += [tf.TensorSpec([None, None], tf.int32, name="prompt_ids"),
                              tf.TensorSpec([None], tf.int32, name="prompt_lengths")]
            # No autograph (the search is explicit `tf.while_loop`s, as in the exports):
            # autograph re-reads the source at trace time, so a file edited while a long
            # training runs could be traced instead of the code that was loaded.
            cache[key] = tf.function(_SettingsSearch(self, settings, xla),
                                     input_signature=signature,
                                     jit_compile=xla or None, autograph=False)
        return cache[key]

    def generate(self, inputs, beam_size=4, length_penalty="gnmt", alpha=0.6, n_best=1,
                 batch_size=64, xla=False, return_scores=False, return_truncated=False,
                 prompts=None, mbr=False, mbr_temperature=1.0, **search_options):
        """Raw inputs (a list) -> `list[str]`, or `list[list[str]]` for n_best > 1.

        Inputs are sorted by size and cut into batches of `batch_size`, and the
        output comes back in input order. `beam_size=1` is greedy search;
        `sampling=True` (with `temperature`, `top_k`, `top_p`, `seed`) samples.
        Over-long inputs are truncated with a warning; an empty input gives "".
        Each item becomes a tuple `(output, scores)` with `return_scores`, and
        gains a last element `truncated` (bool) with `return_truncated`: the
        exported model's outputs, row for row. `prompts` (one output-side
        string per input) are the start of each output: the search continues
        them (a translator's forced prefix). `mbr=True` returns, of the beam's
        `beam_size` finished hypotheses, the one with the highest expected chrF
        against the others under the model's probabilities (softmax of the
        scores / `mbr_temperature`; `kseq.decoding.mbr`) instead of the top one.
        """
        inputs = self.check_generate_inputs(inputs)
        batch_size = check_int("batch_size", batch_size)
        mbr_temperature = check_mbr(mbr, mbr_temperature, beam_size, n_best, search_options)
        if prompts is not None:
            prompts = check_texts("prompts", prompts)
            if len(prompts) != len(inputs):
                raise KseqError("`prompts` needs one string per input. Received: "
                                f"{len(prompts)} prompts for {len(inputs)} inputs")
        if not inputs:
            return []
        settings = self.search_settings(beam_size, length_penalty, alpha,
                                        beam_size if mbr else n_best, **search_options)
        search = self.compiled_generate(settings, xla, prompts=prompts is not None)
        order = sorted(range(len(inputs)), key=lambda i: len(inputs[i]))
        results, truncated = [None] * len(inputs), 0
        shape = dict(n_best=n_best, mbr=mbr, mbr_temperature=mbr_temperature,
                     return_scores=return_scores, return_truncated=return_truncated)
        for begin in range(0, len(inputs), batch_size):
            chunk = order[begin : begin + batch_size]
            rows = self._search_rows(search, [inputs[i] for i in chunk],
                                     None if prompts is None else [prompts[i] for i in chunk])
            for index, (hyps, scores, cut) in zip(chunk, rows):
                truncated += cut
                results[index] = _output_item(hyps, scores, cut, **shape)
        if truncated:
            logger.warning("%d input(s) longer than the model's input length were truncated.",
                           truncated)
        return results

    def output_strings(self, ids):
        """The search's `ids [B, M, T]` -> `[B, M]` strings, eagerly or in a graph (an
        export's endpoint): the one place where M outputs per input are detokenized."""
        shape = tf.shape(ids)
        flat = tf.reshape(ids, [shape[0] * shape[1], shape[2]])  # [B·M, T]
        # In a graph, one trace of the detokenizer serves every search and export.
        detokenize = (self.preprocessor.detokenize if tf.executing_eagerly()
                      else self.preprocessor.traced("detokenize"))
        return tf.reshape(detokenize(flat), shape[:2])  # [B, M]

    def compiled_generate(self, settings, xla=False, prompts=False):
        """`generate`'s one graph call per batch, cached per settings: raw inputs `[B]` (and,
        with `prompts`, output-side prompt strings `[B]`) -> `(strings [B, M], scores
        [B, M], empty [B], truncated [B])`. Tokenisation, `compiled_search` (XLA or not)
        and detokenisation run in it: run eagerly, the first and last cost ~20 ms a call."""
        cache = self.__dict__.setdefault("_compiled_generates", {})
        key = (settings, xla, prompts)
        if key not in cache:
            strings = tf.TensorSpec([None], tf.string)
            cache[key] = tf.function(
                _SettingsGenerate(self, self.compiled_search(settings, xla, prompts)),
                input_signature=[strings, strings] if prompts else [strings], autograph=False)
        return cache[key]

    def _search_rows(self, generate, inputs, prompts):
        """One batch through `compiled_generate`: `[(hypotheses [M], scores [M], truncated)]`
        per input. An empty input (also "   ") has no output: "" with score 0, as served."""
        texts = (tf.constant(inputs),) + (() if prompts is None else (tf.constant(prompts),))
        strings, scores, empty, cut = (x.numpy() for x in generate(*texts))  # [B, M] / [B]
        scores = np.where(empty[:, None], 0.0, scores)
        return [(["" if empty[row] else s.decode("utf-8") for s in strings[row]],
                 scores[row].tolist(), bool(cut[row])) for row in range(len(inputs))]

    def validation_callback(self, examples, training, verbose=True):
        """BLEU of greedy output on at most `training["bleu_subset"]` (200) examples, each epoch."""
        return BleuCallback(examples, subset=training.get("bleu_subset", 200), verbose=verbose)

    def check_generate_inputs(self, inputs):
        """The raw inputs `generate` accepts, checked (text tasks: a list of str or bytes)."""
        return check_texts("texts", inputs)

    def raw_input(self, value):
        """One input read from a dataset (numpy bytes) as `generate` takes it: text here."""
        return value.decode("utf-8")

    def evaluate_bleu(self, pairs, beam_size=4, print_signature=True, **generate_options):
        """sacrebleu BLEU and chrF of detokenised output against the raw references.

        Args:
            pairs: `(input, reference)` pairs, or a `tf.data.Dataset` of them.

        Returns:
            dict with `bleu`, `chrf`, `exact_match` (share of identical strings),
            `bleu_signature`, `chrf_signature`, `hypotheses`.
        """
        if isinstance(pairs, tf.data.Dataset):
            pairs = [(self.raw_input(x), t.decode("utf-8")) for x, t in pairs.as_numpy_iterator()]
        pairs = list(pairs)
        if not pairs:
            raise KseqError("evaluate_bleu needs at least one (input, reference) pair. "
                            "Received: 0 pairs")
        for index, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2 or not isinstance(pair[1], str):
                raise KseqError(f"`pairs` must hold (input, reference string) pairs; item "
                                f"{index} is not one. Received: pairs[{index}]={pair!r:.200}")
        for option in ("n_best", "return_scores", "return_truncated"):
            if generate_options.get(option) not in (None, False, 1):
                raise KseqError(f"evaluate_bleu scores one string per input: `{option}` is not "
                                f"taken. Received: {option}={generate_options[option]!r}")
        references = [t for _, t in pairs]
        hypotheses = self.generate([s for s, _ in pairs], beam_size=beam_size, **generate_options)
        result = {**corpus_scores(hypotheses, references), "hypotheses": hypotheses}
        if print_signature:
            print(f"BLEU {result['bleu']} ({result['bleu_signature']}) | "
                  f"chrF {result['chrf']} ({result['chrf_signature']})")
        return result

    def evaluate_pairs(self, pairs, beam_size=4, **generate_options):
        """`evaluate(pairs)`: sacrebleu BLEU and chrF of the outputs (`evaluate_bleu`) as an
        `EvaluationResult`, summarised as `BLEU 42.1 chrF 65.2 (200 pairs) | <BLEU
        signature>`; the outputs are in its `outputs`."""
        scores = self.evaluate_bleu(pairs, beam_size=beam_size, print_signature=False,
                                    **generate_options)
        hypotheses = scores.pop("hypotheses")
        scores["pairs"] = len(hypotheses)
        return EvaluationResult(scores, [("BLEU", "bleu", ".1f"), ("chrF", "chrf", ".1f")],
                                count="pairs", note=scores["bleu_signature"], outputs=hypotheses)
