"""A language model's serving endpoint, for the one export path (`kseq.export`).

`serving_default` takes `prompt [B] string` (plus `category [B] string` when
the model has categories, and `seed [B] int32` when the export samples) and
returns `{"text": [B, M] string, "score": [B, M] float32, "length": [B, M]
int32, "truncated": [B] bool, "valid": [B] bool}`: each prompt's continuation
(without the prompt), its score (summed log-probabilities of the generated
tokens, length penalised for beam search), how many tokens were generated (the
end token included), whether the prompt was cut to `max_length - 1` tokens, and
whether the row's category is one the model knows.
Tokenisation, the search (greedy, beam or sampling, as exported) and
detokenisation run in the graph; the search runs without XLA unless `xla=True`.

Defined results: an empty prompt starts a text from nothing; invalid UTF-8 is
replaced by U+FFFD; an empty batch gives empty outputs; a row whose category the
model does not know (any but "", which means none, for a model without
categories) gets `""`, score 0, length 0 and `valid False`, without failing the
batch. A
sampling export draws the whole request with `seed[0]` (one seed per request,
repeated on every row for TF Serving's row format): the same request with the
same seed gives the same texts.
"""

import tensorflow as tf  # the endpoint is a tf.function over a tf.Module

from kseq.export import ServingSpec
from kseq.models.language_model.generation_graph import Generate, search_function


class LanguageModelEndpoints(tf.Module):
    """Holds the model's variables, the tokenizer's tables and the endpoint."""

    def __init__(self, model, settings, xla):
        super().__init__(name="kseq_language_model_endpoints")
        self.model = model
        self.tokenizer = model.tokenizer
        self.preprocessor = model.preprocessor  # holds the tokenizer tracked above
        self.categories = list(model.categories)
        self.sampling = dict(settings)["sampling"]
        self.generate = Generate(model, search_function(model, settings, xla))
        signature = [tf.TensorSpec([None], tf.string, name="prompt")]
        if self.categories:
            signature.append(tf.TensorSpec([None], tf.string, name="category"))
        if self.sampling:
            signature.append(tf.TensorSpec([None], tf.int32, name="seed"))
        self.serve = tf.function(self._serve, autograph=False, input_signature=signature)

    def _serve(self, prompt, *extra):
        extra = list(extra)
        category = extra.pop(0) if self.categories else tf.fill(tf.shape(prompt), "")
        seed = extra.pop(0) if self.sampling else None
        # One seed per request: the first row's (0 for an empty batch, which draws nothing).
        seed = tf.constant(0) if seed is None else tf.concat([seed, [0]], 0)[0]
        known = self.model.preprocessor.category_ids(category) >= 0  # [B]
        # An unknown category's row is searched as uncategorised, then emptied.
        category = tf.where(known, category, "")
        strings, scores, lengths, truncated, _ = self.generate(prompt, category, seed)
        valid = known[:, None]  # [B, 1]
        return {"text": tf.where(valid, strings, ""), "score": tf.where(valid, scores, 0.0),
                "length": tf.where(valid, lengths, 0), "truncated": truncated, "valid": known}


def language_model_serving_spec(model, beam_size=1, n_best=1, length_penalty="gnmt",
                                alpha=0.6, max_length=None, sample=False, temperature=1.0,
                                top_k=None, top_p=None, no_repeat_ngram_size=0, xla=False):
    """The `ServingSpec` of a language model: the endpoint, the vocabulary, warm-up, metadata."""
    settings = model.search_settings(
        beam_size=beam_size, length_penalty=length_penalty, alpha=alpha, n_best=n_best,
        max_length=max_length, no_repeat_ngram_size=no_repeat_ngram_size, sampling=sample,
        temperature=temperature, top_k=0 if top_k is None else top_k,
        top_p=1.0 if top_p is None else top_p)
    endpoints = LanguageModelEndpoints(model, settings, xla)
    words = [t for t in model.tokenizer.vocabulary[4:] if t[:1].isalnum()] or ["a"]
    warmup = []
    for prompt in ("", words[0], " ".join((words * 8)[:8])):
        request = {"prompt": [prompt]}
        if model.categories:
            request["category"] = [model.categories[0]]
        if sample:
            request["seed"] = [0]
        warmup.append(request)
    inputs = "prompt [B] string" + (", category [B] string" if model.categories else "") + (
        ", seed [B] int32 (seed[0] draws the request)" if sample else "")
    return ServingSpec(
        signatures={"serving_default": endpoints.serve}, trackables={"endpoints": endpoints},
        assets={"vocabulary.txt": "\n".join(model.tokenizer.vocabulary) + "\n",
                "categories.txt": "".join(f"{name}\n" for name in model.categories)},
        warmup=warmup,
        metadata={"search": {k: v for k, v in dict(settings).items() if k != "seed"},
                  "xla": xla, "max_length": model.max_length, "categories": model.categories,
                  "signatures": {"serving_default": f"{inputs} -> text/score/length "
                                                    "[B, n_best], truncated/valid [B]"}})
