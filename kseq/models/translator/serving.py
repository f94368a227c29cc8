"""A translator's serving endpoints, for the one export path (`kseq.export`).

`serving_default` takes a 1-D `tf.string` batch and returns
`{"text": [B, M] string, "score": [B, M] float32, "length": [B, M] int32,
"truncated": [B] bool}`; tokenisation (the preprocessor's, as in training and
`translate()`), search and detokenisation run in the graph. `serve_ids` takes
`source_ids [B, S] int32` and `lengths [B] int32` and returns
`{"ids": [B, M, T], "score": [B, M], "length": [B, M]}`. The search runs
without XLA unless `xla=True` (stock TF Serving disables XLA unless started
with `--xla_cpu_compilation_enabled`).

Defined results for bad input: an empty (or all-space) string gives `""` with
score 0; an input longer than `max_source_length` tokens is truncated and
flagged in `truncated`; invalid UTF-8 is replaced by U+FFFD before
tokenisation; an empty batch gives empty outputs. In `serve_ids`, an id outside
`[0, V)` (V the source vocabulary size; negative ones too) inside a row's
length is read as `<unk>` (id 1); positions at or past `lengths[b]` are padding
(id 0), a negative length counts as 0, ids past `max_source_length` are cut; a
row with no id left gives ids 0, score 0 and length 0 (like an empty string);
a `lengths` whose size is not B fails the call with `InvalidArgumentError`
naming `lengths` and `source_ids`.
"""

import tensorflow as tf  # the endpoints are tf.functions over a tf.Module

from kseq.export import ServingSpec
from kseq.text.tokenizer import PAD_ID, UNK_ID


class TranslatorEndpoints(tf.Module):
    """Holds the model's variables, the tokenizers' tables and the two endpoints."""

    def __init__(self, model, settings, xla):
        super().__init__(name="kseq_translator_endpoints")
        self.model = model
        self.source_tokenizer = model.source_tokenizer
        self.target_tokenizer = model.target_tokenizer
        self.preprocessor = model.preprocessor  # holds the two tokenizers tracked above
        self.settings = settings
        self.max_source_length = model.max_source_length
        search = lambda ids: model.search(ids, settings, xla=xla)
        # One function that both endpoints call: the search is traced once, not once
        # per endpoint (a beam search's trace is most of an export's time).
        # No autograph: the search is written with explicit `tf.while_loop`s (and
        # marked do_not_convert), so converting the layers only costs time: the
        # export traces in about half the time without it, with the same graph.
        self.search = tf.function(search, jit_compile=xla or None, autograph=False,
                                  input_signature=[tf.TensorSpec([None, None], tf.int32)])
        self.serve_text = tf.function(self._serve_text, autograph=False, input_signature=[
            tf.TensorSpec([None], tf.string, name="text")])
        self.serve_ids = tf.function(self._serve_ids, autograph=False, input_signature=[
            tf.TensorSpec([None, None], tf.int32, name="source_ids"),
            tf.TensorSpec([None], tf.int32, name="lengths")])

    def _serve_ids(self, source_ids, lengths):
        batch, width = tf.shape(source_ids)[0], tf.shape(source_ids)[1]
        # Without this check a [1] `lengths` would broadcast over every row.
        check = tf.debugging.assert_equal(
            tf.size(lengths), batch,
            message="serve_ids: `lengths` must hold one length per row of `source_ids` "
                    "([B] for source_ids [B, S]); received sizes (lengths, B)")
        with tf.control_dependencies([check]):
            lengths = tf.maximum(lengths, 0)
        width = tf.minimum(width, self.max_source_length)
        ids = source_ids[:, :width]  # [B, S']
        vocabulary_size = self.source_tokenizer.vocabulary_size
        ids = tf.where((ids >= 0) & (ids < vocabulary_size), ids, UNK_ID)
        ids = tf.where(tf.range(width)[None, :] < lengths[:, None], ids, PAD_ID)
        # At least one column, so a [B, 0] batch still has a [B, 1] shape.
        ids = tf.pad(ids, [[0, 0], [0, tf.maximum(0, 1 - width)]])
        out_ids, scores, out_lengths = self.search(ids)
        empty = tf.reduce_all(tf.equal(ids, PAD_ID), axis=1)  # [B]
        return {"ids": tf.where(empty[:, None, None], PAD_ID, out_ids),
                "score": tf.where(empty[:, None], 0.0, scores),
                "length": tf.where(empty[:, None], 0, out_lengths)}

    def _serve_text(self, text):
        # The preprocessor's text -> ids, as in training and translate().
        inputs = self.preprocessor.inference_inputs(text)
        out_ids, scores, lengths = self.search(inputs["source_ids"])
        strings = self.model.output_strings(out_ids)  # [B, M]
        empty = inputs["empty"][:, None]  # [B, 1]
        return {
            "text": tf.where(empty, tf.constant(""), strings),
            "score": tf.where(empty, 0.0, scores),
            "length": tf.where(empty, 0, lengths),
            "truncated": inputs["truncated"],
        }


def translator_serving_spec(model, beam_size=4, n_best=1, length_penalty="gnmt", alpha=0.6,
                            max_length=None, xla=False):
    """The `ServingSpec` of a translator: both endpoints, vocabularies, warm-up, metadata."""
    settings = model.search_settings(beam_size=beam_size, length_penalty=length_penalty,
                                     alpha=alpha, n_best=n_best, max_length=max_length)
    endpoints = TranslatorEndpoints(model, settings, xla)
    vocabularies = {f"{side}_vocabulary.txt":
                    "\n".join(getattr(model, f"{side}_tokenizer").vocabulary) + "\n"
                    for side in ("source", "target")}
    return ServingSpec(
        signatures={"serving_default": endpoints.serve_text, "serve_ids": endpoints.serve_ids},
        trackables={"endpoints": endpoints}, assets=vocabularies,
        warmup=[{"text": [sentence]} for sentence in warmup_sentences(model)],
        metadata={
            "search": dict(settings), "xla": xla, "max_source_length": model.max_source_length,
            "signatures": {"serving_default": "text [B] string -> text/score/length "
                                              "[B, n_best], truncated [B]",
                           "serve_ids": "source_ids [B, S] int32, lengths [B] int32 -> "
                                        "ids [B, n_best, T], score/length [B, n_best]"}})


def warmup_sentences(model):
    """Short, medium and full-length inputs built from the source vocabulary."""
    words = [t for t in model.source_tokenizer.vocabulary[4:] if t[:1].isalnum()] or ["a"]
    lengths = (1, 8, model.max_source_length)
    return [" ".join((words * model.max_source_length)[:n]) for n in lengths]
