"""A language model's generation graph: ragged prompts (and categories) in, continuations out.

`Generate` is what `LanguageModel.generate` calls per batch and what its export
serves (`kseq.models.language_model.serving`); `search_function` is the model's
search for one set of settings, the sampling seed an input.

Example:
>>> import tensorflow as tf
>>> ids = tf.constant([[[5, 6, 7, 8]], [[5, 9, 0, 0]]])  # [B=2, M=1, T=4]
>>> drop_prompts(ids, tf.constant([2, 1])).numpy().tolist()
[[[7, 8, 0, 0]], [[9, 0, 0, 0]]]
"""

import tensorflow as tf  # the generate graph: ragged prompts, per-row shifts


def drop_prompts(ids, prompt_lengths):
    """`ids [B, M, T]` whose rows start with their prompt -> the continuations, shifted
    left by each row's prompt length and padded with 0."""
    width = tf.shape(ids)[2]
    padded = tf.pad(ids, [[0, 0], [0, 0], [0, width]])  # [B, M, 2T]
    columns = tf.range(width)[None, None, :] + prompt_lengths[:, None, None]  # [B, 1, T]
    columns = tf.broadcast_to(columns, tf.shape(ids))  # [B, M, T]
    return tf.gather(padded, columns, batch_dims=2)


class Search:
    """`model.search` for one `settings`, the sampling seed an input (a callable object of
    its own, see `kseq.models.generative_task._SettingsSearch`)."""

    def __init__(self, model, settings, xla):
        self.model, self.settings, self.xla = model, settings, xla

    def __call__(self, start_ids, prompt_ids, prompt_lengths, seed):
        return self.model.search(start_ids, self.settings, prompt_ids, prompt_lengths,
                                 xla=self.xla, seed=seed)


class Generate:
    """`generate`'s graph for one search (its own callable, as `Search`): prompts and
    categories `[B]` and a seed `[]` -> `(continuations [B, M], scores [B, M], generated
    lengths [B, M], truncated [B], start ids [B])`; what the export serves too."""

    def __init__(self, model, search):
        self.model = model
        self.search = search

    def __call__(self, prompts, categories, seed):
        inputs = self.model.preprocessor.traced("inference_inputs")(prompts, categories)
        ids, scores, lengths = self.search(inputs["start_ids"], inputs["prompt_ids"],
                                           inputs["prompt_lengths"], seed)
        continuations = drop_prompts(ids, inputs["prompt_lengths"])
        generated = tf.maximum(lengths - inputs["prompt_lengths"][:, None], 0)
        return (self.model.output_strings(continuations), scores, generated,
                inputs["truncated"], inputs["start_ids"])


def search_function(model, settings, xla=False):
    """`Search` as a `tf.function` (XLA when asked): `(start_ids [B], prompt_ids [B, P],
    prompt_lengths [B], seed []) -> (ids, scores, lengths)`."""
    return tf.function(Search(model, settings, xla), jit_compile=xla or None,
                       autograph=False, input_signature=[
                           tf.TensorSpec([None], tf.int32), tf.TensorSpec([None, None], tf.int32),
                           tf.TensorSpec([None], tf.int32), tf.TensorSpec([], tf.int32)])
