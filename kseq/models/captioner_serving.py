"""A captioner's serving endpoint, for the one export path (`kseq.export`).

`serving_default` takes `image_bytes`, a 1-D `tf.string` batch of encoded
images (PNG, JPEG, GIF, BMP, WebP: TF Serving's REST API turns
`{"b64": "..."}` into these bytes itself), and returns
`{"text": [B, M] string, "score": [B, M] float32, "length": [B, M] int32,
"valid": [B] bool}`. Decoding, compositing and resizing (the preprocessor's
image function, as in training and `caption()`), search and detokenisation
run in the graph; the search runs without XLA unless `xla=True`.

A bad row — empty, not an image, truncated, or larger than `max_pixels`
(read from its header before decoding) — gives `text ""`, `score 0`,
`length 0` and `valid False`, and never fails the other rows: each row is
decoded inside a `tf.data` pipeline that drops rows whose decoding fails
(`kseq.data.image_decoding.decode_rows`). An empty batch gives empty outputs.
"""

import tensorflow as tf  # the endpoint is a tf.function over a tf.Module

from kseq.export import ServingSpec


class CaptionerEndpoints(tf.Module):
    """Holds the model's variables, the tokenizer's tables and the endpoint."""

    def __init__(self, model, settings, xla):
        super().__init__(name="kseq_captioner_endpoints")
        self.model = model
        self.preprocessor = model.preprocessor
        self.target_tokenizer = model.target_tokenizer
        search = lambda images: model.search(images, settings)
        self.search = tf.function(search, jit_compile=True) if xla else search
        # No autograph: the search is written with explicit `tf.while_loop`s.
        self.serve_images = tf.function(self._serve_images, autograph=False, input_signature=[
            tf.TensorSpec([None], tf.string, name="image_bytes")])

    def _serve_images(self, image_bytes):
        inputs = self.preprocessor.inference_inputs(image_bytes)
        rows = tf.shape(image_bytes)[0]
        # TF's Conv2D fails on an empty batch: search at least one (white) row, keep `rows`.
        images = tf.pad(inputs["images"], [[0, tf.maximum(1 - rows, 0)], [0, 0], [0, 0], [0, 0]],
                        constant_values=255)
        out_ids, scores, lengths = (x[:rows] for x in self.search(images))
        batch, m = tf.shape(out_ids)[0], tf.shape(out_ids)[1]
        flat = tf.reshape(out_ids, [batch * m, -1])  # [B·M, T]
        strings = tf.reshape(self.target_tokenizer.detokenize(flat), [batch, m])
        bad = inputs["empty"][:, None]  # [B, 1]
        return {"text": tf.where(bad, tf.constant(""), strings),
                "score": tf.where(bad, 0.0, scores),
                "length": tf.where(bad, 0, lengths),
                "valid": inputs["valid"]}


def captioner_serving_spec(model, beam_size=4, n_best=1, length_penalty="gnmt", alpha=0.6,
                           max_length=None, xla=False):
    """The `ServingSpec` of a captioner: the endpoint, the vocabulary, warm-up, metadata."""
    settings = model.search_settings(beam_size=beam_size, length_penalty=length_penalty,
                                     alpha=alpha, n_best=n_best, max_length=max_length)
    endpoints = CaptionerEndpoints(model, settings, xla)
    return ServingSpec(
        signatures={"serving_default": endpoints.serve_images},
        trackables={"endpoints": endpoints},
        assets={"target_vocabulary.txt": "\n".join(model.target_tokenizer.vocabulary) + "\n"},
        warmup=[{"image_bytes": [image]} for image in model.preprocessor.warmup_images()],
        metadata={
            "search": dict(settings), "xla": xla, "image_size": list(model.image_size),
            "max_pixels": model.preprocessor.max_pixels,
            "signatures": {"serving_default": "image_bytes [B] string -> text/score/length "
                                              "[B, n_best], valid [B]"}})
