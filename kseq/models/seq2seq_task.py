"""What every text-to-text task model shares: compiled search, translate, BLEU, training.

A subclass is a functional `keras.Model` that defines the step protocol
(`encode`, `initial_state`, `step`) and holds `source_tokenizer`,
`target_tokenizer`, `max_source_length` and `max_target_length`. With the
training hooks `decoder_states` and `project_states` its train step projects
only the real target rows (`real_rows_train_step`).
"""

import logging
import math

import keras
import numpy as np
import tensorflow as tf

from kseq.arguments import check_choice, check_float, check_int, check_texts
from kseq.decoding import beam_search, greedy_search, sample
from kseq.decoding.length_penalty import LENGTH_PENALTIES
from kseq.errors import KseqError
from kseq.models.real_rows_train_step import real_rows_train_step
from kseq.text import tokenizer_from_config
from kseq.text.tokenizer import END_ID, START_ID

logger = logging.getLogger("kseq")

# Source lengths are padded to a multiple of this, so few search graphs are traced.
SOURCE_LENGTH_STEP = 8


class Seq2SeqTask(keras.Model):
    """Mixin-style base: search over the step protocol, and text in / text out."""

    def task_config(self):
        """Config entries every task model has; subclasses add their hyper-parameters."""
        return {
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(self.dtype_policy),
            "source_tokenizer": self.source_tokenizer.get_config(),
            "target_tokenizer": self.target_tokenizer.get_config(),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for side in ("source_tokenizer", "target_tokenizer"):
            config[side] = tokenizer_from_config(config[side])
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        return cls(**config)

    def train_step(self, data):
        """Keras's step, with the output projection on real target rows only where it
        cannot change a result (see `real_rows_train_step`)."""
        logs = real_rows_train_step(self, data)
        return super().train_step(data) if logs is None else logs

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
        if not isinstance(sampling, bool):
            raise KseqError(f"`sampling` must be True or False. Received: sampling={sampling!r}")
        temperature = check_float("temperature", temperature, minimum=0.0,
                                  exclusive_minimum=True)
        top_k = check_int("top_k", top_k, minimum=0)
        top_p = check_float("top_p", top_p, minimum=0.0, maximum=1.0, exclusive_minimum=True)
        seed = check_int("seed", seed, minimum=0, allow_none=True)
        if n_best > 1 and (sampling or beam_size < n_best):
            raise KseqError(f"`n_best` needs beam search with beam_size >= n_best. "
                            f"Received: n_best={n_best}, beam_size={beam_size}")
        return tuple(sorted(dict(
            beam_size=beam_size, length_penalty=length_penalty, alpha=alpha, n_best=n_best,
            max_length=max_length, min_length=min_length, coverage_penalty=coverage_penalty,
            no_repeat_ngram_size=no_repeat_ngram_size, sampling=sampling,
            temperature=temperature, top_k=top_k, top_p=top_p, seed=seed,
        ).items()))

    def search(self, source_ids, settings):
        """ids `[B, S]` -> `(ids [B, M, T], scores [B, M], lengths [B, M])`, traceable."""
        s = dict(settings)
        memory = self.encode(source_ids)
        state = self.initial_state(memory)
        start = tf.fill([tf.shape(source_ids)[0]], START_ID)
        common = dict(max_length=s["max_length"], end_id=END_ID, min_length=s["min_length"],
                      no_repeat_ngram_size=s["no_repeat_ngram_size"])
        if s["sampling"]:
            ids, scores, lengths = sample(
                self.step, state, memory, start, temperature=s["temperature"],
                top_k=s["top_k"], top_p=s["top_p"], seed=s["seed"], **common)
        elif s["beam_size"] == 1:
            ids, scores, lengths = greedy_search(self.step, state, memory, start, **common)
        else:
            return beam_search(
                self.step, state, memory, start, beam_size=s["beam_size"],
                length_penalty=s["length_penalty"], alpha=s["alpha"],
                coverage_penalty=s["coverage_penalty"], n_best=s["n_best"], **common)
        return ids[:, None], scores[:, None], lengths[:, None]

    def compiled_search(self, settings, xla=False):
        """A `tf.function` over `[B, S]` ids for these settings, cached per settings."""
        cache = self.__dict__.setdefault("_compiled_searches", {})
        key = (settings, xla)
        if key not in cache:
            cache[key] = tf.function(
                lambda ids: self.search(ids, settings),
                input_signature=[tf.TensorSpec([None, None], tf.int32)],
                jit_compile=xla or None,
            )
        return cache[key]

    def source_ids_for(self, texts):
        """Tokenises, truncates (with a warning) and pads to a multiple of 8."""
        ragged = self.source_tokenizer.tokenize(tf.constant(texts, tf.string))
        lengths = ragged.row_lengths().numpy()
        too_long = int(np.sum(lengths > self.max_source_length))
        if too_long:
            logger.warning("%d input(s) longer than max_source_length=%d tokens were truncated.",
                           too_long, self.max_source_length)
        ragged = ragged[:, : self.max_source_length]
        width = max(1, int(ragged.bounding_shape()[1]) if len(texts) else 1)
        width = min(self.max_source_length,
                    SOURCE_LENGTH_STEP * math.ceil(width / SOURCE_LENGTH_STEP))
        return ragged.to_tensor(shape=[len(texts), width])

    def translate(self, texts, beam_size=4, length_penalty="gnmt", alpha=0.6, n_best=1,
                  batch_size=64, xla=False, return_scores=False, **search_options):
        """Translates a list of strings; returns `list[str]`, or `list[list[str]]` for n_best > 1.

        Inputs are sorted by length and cut into batches of `batch_size`, and the
        output comes back in input order. `beam_size=1` is greedy search;
        `sampling=True` (with `temperature`, `top_k`, `top_p`, `seed`) samples.
        Inputs longer than `max_source_length` tokens are truncated with a warning.
        `str` or UTF-8 `bytes` items are accepted; invalid UTF-8 (or a lone
        surrogate in a `str`) becomes U+FFFD, as in the exported model.
        """
        texts = check_texts("texts", texts)
        batch_size = check_int("batch_size", batch_size)
        if not texts:
            return []
        settings = self.search_settings(beam_size, length_penalty, alpha, n_best, **search_options)
        search = self.compiled_search(settings, xla)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        results = [None] * len(texts)
        for start in range(0, len(texts), batch_size):
            chunk = order[start : start + batch_size]
            ids, scores, _ = search(self.source_ids_for([texts[i] for i in chunk]))
            m = ids.shape[1]
            flat = tf.reshape(ids, [-1, ids.shape[2]])  # [B·M, T]
            strings = self.target_tokenizer.detokenize(flat).numpy().reshape(len(chunk), m)
            scores = scores.numpy()
            for row, index in enumerate(chunk):
                hyps = [s.decode("utf-8") for s in strings[row]]
                out = hyps if n_best > 1 else hyps[0]
                results[index] = (out, scores[row].tolist()) if return_scores else out
        return results

    def evaluate_bleu(self, pairs, beam_size=4, print_signature=True, **translate_options):
        """sacrebleu BLEU and chrF of detokenised output against the raw references.

        Args:
            pairs: `(source, reference)` string pairs, or a `tf.data.Dataset` of them.

        Returns:
            dict with `bleu`, `chrf`, `exact_match` (share of identical strings),
            `bleu_signature`, `chrf_signature`, `hypotheses`.
        """
        import sacrebleu

        if isinstance(pairs, tf.data.Dataset):
            pairs = [(s.decode("utf-8"), t.decode("utf-8")) for s, t in pairs.as_numpy_iterator()]
        pairs = list(pairs)
        if not pairs:
            raise KseqError("evaluate_bleu needs at least one (source, reference) pair. "
                            "Received: 0 pairs")
        for index, pair in enumerate(pairs):
            if (not isinstance(pair, (tuple, list)) or len(pair) != 2
                    or not all(isinstance(x, str) for x in pair)):
                raise KseqError(f"`pairs` must hold (source, reference) string pairs; item "
                                f"{index} is not one. Received: pairs[{index}]={pair!r}")
        sources = [s for s, _ in pairs]
        references = [t for _, t in pairs]
        hypotheses = self.translate(sources, beam_size=beam_size, **translate_options)
        bleu, chrf = sacrebleu.metrics.BLEU(), sacrebleu.metrics.CHRF()
        bleu_score = bleu.corpus_score(hypotheses, [references])
        chrf_score = chrf.corpus_score(hypotheses, [references])
        result = {
            "bleu": round(bleu_score.score, 2),
            "chrf": round(chrf_score.score, 2),
            "exact_match": float(np.mean([h == r for h, r in zip(hypotheses, references)]))
            if pairs else 0.0,
            "bleu_signature": str(bleu.get_signature()),
            "chrf_signature": str(chrf.get_signature()),
            "hypotheses": hypotheses,
        }
        if print_signature:
            print(f"BLEU {result['bleu']} ({result['bleu_signature']}) | "
                  f"chrF {result['chrf']} ({result['chrf_signature']})")
        return result

    def export(self, filepath, format="tf_saved_model", *, beam_size=4, n_best=1,
               length_penalty="gnmt", alpha=0.6, max_length=None, xla=False, **kwargs):
        """Writes a TF Serving SavedModel (strings in, translations out) into `filepath`.

        `filepath` is the version directory (`<base>/<name>/<version>`). The
        search runs without XLA unless `xla=True`. Other formats go to Keras's
        own `export`. See `kseq.export.export_saved_model`.
        """
        if format != "tf_saved_model":
            return super().export(filepath, format=format, **kwargs)
        from kseq.export import export_saved_model

        return export_saved_model(self, filepath, beam_size=beam_size, n_best=n_best,
                                  length_penalty=length_penalty, alpha=alpha,
                                  max_length=max_length, xla=xla)

    def plot_attention(self, text, path):
        """Writes the source-target alignment of `text` as a PNG heatmap (matplotlib).

        Returns the `[T, S]` weights. See `kseq.models.attention_plot`.
        """
        from kseq.models.attention_plot import plot_attention

        return plot_attention(self, text, path)
