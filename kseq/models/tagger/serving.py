"""A tagger's serving endpoints, for the one export path (`kseq.export`).

`serving_default` takes `text`, a 1-D `tf.string` batch of sentences (split on
whitespace), and returns `{"tokens": [B, W] string, "tags": [B, W] string,
"length": [B] int32, "truncated": [B] bool}`: row `b` holds `length[b]`
tokens and as many tags, padded with "". `serve_tokens` takes `tokens`
`[B, W]` string (pre-tokenised, "" = padding) and returns the same. An empty
sentence gives length 0. Invalid UTF-8 becomes U+FFFD; words past
`max_length` characters get no tag (`length` counts the tagged ones).
"""

import tensorflow as tf  # the endpoints are tf.functions over a tf.Module

from kseq.export import ServingSpec
from kseq.models.tagger.tagger_preprocessor import join_words


class TaggerEndpoints(tf.Module):
    def __init__(self, model):
        super().__init__(name="kseq_tagger_endpoints")
        self.model = model
        self.preprocessor = model.preprocessor
        self.tokenizer = model.preprocessor.tokenizer
        self.tag_names = tf.constant(model.tag_names)
        self.serve_text = tf.function(self._serve_text, input_signature=[
            tf.TensorSpec([None], tf.string, name="text")])
        self.serve_tokens = tf.function(self._serve_tokens, input_signature=[
            tf.TensorSpec([None, None], tf.string, name="tokens")])

    def _tag(self, words):
        """Ragged words `[B, (W)]` -> the outputs (see the module docstring)."""
        ids, truncated = self.model.tag_ids(join_words(words))
        tags = tf.gather(self.tag_names, ids)  # ragged [B, (W')]
        # The words that got a tag: each row's first `length` words.
        kept = tf.RaggedTensor.from_tensor(words.to_tensor(""), lengths=ids.row_lengths())
        return {"tokens": kept.to_tensor(""), "tags": tags.to_tensor(""),
                "length": tf.cast(ids.row_lengths(), tf.int32), "truncated": truncated}

    def _serve_text(self, text):
        text = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace")
        return self._tag(tf.strings.split(text))

    def _serve_tokens(self, tokens):
        tokens = tf.strings.unicode_transcode(tokens, "UTF-8", "UTF-8", errors="replace")
        return self._tag(tf.ragged.boolean_mask(tokens, tf.strings.length(tokens) > 0))


def tagger_serving_spec(model):
    endpoints = TaggerEndpoints(model)
    return ServingSpec(
        signatures={"serving_default": endpoints.serve_text,
                    "serve_tokens": endpoints.serve_tokens},
        trackables={"endpoints": endpoints},
        assets={"characters.txt": "\n".join(model.preprocessor.tokenizer.vocabulary) + "\n",
                "tags.txt": "\n".join(model.tag_names) + "\n"},
        warmup=[{"text": ["a"]}, {"text": [" ".join(["word"] * 20)]}],
        metadata={"tag_names": list(model.tag_names),
                  "max_length": model.preprocessor.max_length,
                  "signatures": {"serving_default": "text [B] string -> tokens/tags [B, W], "
                                                    "length [B], truncated [B]",
                                 "serve_tokens": "tokens [B, W] string -> the same"}})
