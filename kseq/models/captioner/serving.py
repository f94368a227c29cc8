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
(`kseq.data.pipeline.image_decoding.decode_rows`). An empty batch gives empty outputs.

A multilingual captioner (`model.languages`) has a second signature,
`caption_in_language(image_bytes [B] string, language [B] string)`: each
row's language code ("fr") forces its tag as the first token, as
`caption(language=...)` does, and the tag is left out of `text`. A language
the captioner was not trained on gives that row `valid False` and `text ""`;
`image_bytes` and `language` of different lengths fail the request.
"""

import tensorflow as tf  # the endpoint is a tf.function over a tf.Module

from kseq.text.language_tags import TAG_PREFIX, language_tag
from kseq.export import ServingSpec


def _without_tags(strings, tags):
    """`[B, M]` captions without their row's leading tag (`[B]`) and the spaces after it,
    as `Captioner.caption(language=...)` returns them."""
    shape = tf.shape(strings)
    tag_length = tf.broadcast_to(tf.strings.length(tags)[:, None], shape)
    head = tf.strings.substr(strings, tf.zeros_like(tag_length), tag_length)
    rest = tf.strings.substr(strings, tag_length, tf.strings.length(strings))
    return tf.where(tf.equal(head, tags[:, None]),
                    tf.strings.regex_replace(rest, r"^\s+", ""), strings)


class CaptionerEndpoints(tf.Module):
    """Holds the model's variables, the tokenizer's tables and the endpoint."""

    def __init__(self, model, settings, xla):
        super().__init__(name="kseq_captioner_endpoints")
        self.model = model
        self.preprocessor = model.preprocessor
        self.target_tokenizer = model.target_tokenizer
        self.tags = [language_tag(language) for language in model.languages]
        search = lambda images, *prompt: model.search(images, settings, *prompt, xla=xla)
        self.search = tf.function(search, jit_compile=True) if xla else search
        # No autograph: the search is written with explicit `tf.while_loop`s.
        self.serve_images = tf.function(self._serve_images, autograph=False, input_signature=[
            tf.TensorSpec([None], tf.string, name="image_bytes")])
        self.serve_in_language = tf.function(
            self._serve_in_language, autograph=False, input_signature=[
                tf.TensorSpec([None], tf.string, name="image_bytes"),
                tf.TensorSpec([None], tf.string, name="language")])

    def _captions(self, image_bytes, prompt=()):
        """`(inputs, strings [B, M], scores, lengths)` of a batch (prompts optional)."""
        inputs = self.preprocessor.inference_inputs(image_bytes)
        rows = tf.shape(image_bytes)[0]
        # TF's Conv2D fails on an empty batch: search at least one (white) row, keep `rows`.
        missing = tf.maximum(1 - rows, 0)
        images = tf.pad(inputs["images"], [[0, missing], [0, 0], [0, 0], [0, 0]],
                        constant_values=255)
        prompt = tuple(tf.pad(x, [[0, missing]] + [[0, 0]] * (x.shape.rank - 1))
                       for x in prompt)
        out_ids, scores, lengths = (x[:rows] for x in self.search(images, *prompt))
        strings = self.model.output_strings(out_ids)  # [B, M]
        return inputs, strings, scores, lengths

    @staticmethod
    def _outputs(strings, scores, lengths, bad, valid):
        bad = bad[:, None]  # [B, 1]
        return {"text": tf.where(bad, tf.constant(""), strings),
                "score": tf.where(bad, 0.0, scores),
                "length": tf.where(bad, 0, lengths),
                "valid": valid}

    def _serve_images(self, image_bytes):
        inputs, strings, scores, lengths = self._captions(image_bytes)
        return self._outputs(strings, scores, lengths, inputs["empty"], inputs["valid"])

    def _serve_in_language(self, image_bytes, language):
        tf.debugging.assert_equal(tf.shape(language), tf.shape(image_bytes), message=(
            "caption_in_language needs one language per image"))
        tags = tf.constant(TAG_PREFIX) + language
        known = tf.constant(self.tags or [""])
        trained = tf.reduce_any(tf.equal(tags[:, None], known[None, :]), axis=1)  # [B]
        # A row in an unknown language searches with the first tag and is flagged invalid.
        tags = tf.where(trained, tags, known[0])
        inputs, strings, scores, lengths = self._captions(
            image_bytes, self.preprocessor.prompt_inputs(tags))
        return self._outputs(_without_tags(strings, tags), scores, lengths, inputs["empty"] | ~trained,
                             inputs["valid"] & trained)


def captioner_serving_spec(model, beam_size=4, n_best=1, length_penalty="gnmt", alpha=0.6,
                           max_length=None, xla=False):
    """The `ServingSpec` of a captioner: the endpoint, the vocabulary, warm-up, metadata."""
    settings = model.search_settings(beam_size=beam_size, length_penalty=length_penalty,
                                     alpha=alpha, n_best=n_best, max_length=max_length)
    endpoints = CaptionerEndpoints(model, settings, xla)
    signatures = {"serving_default": endpoints.serve_images}
    described = {"serving_default": "image_bytes [B] string -> text/score/length "
                                    "[B, n_best], valid [B]"}
    if model.languages:
        signatures["caption_in_language"] = endpoints.serve_in_language
        described["caption_in_language"] = (
            f"image_bytes [B] string, language [B] string (one of {model.languages}) -> "
            "text/score/length [B, n_best], valid [B]")
    return ServingSpec(
        signatures=signatures,
        trackables={"endpoints": endpoints},
        assets={"target_vocabulary.txt": "\n".join(model.target_tokenizer.vocabulary) + "\n"},
        warmup=[{"image_bytes": [image]} for image in model.preprocessor.warmup_images()],
        metadata={
            "search": dict(settings), "xla": xla, "image_size": list(model.image_size),
            "max_pixels": model.preprocessor.max_pixels, "languages": model.languages,
            "signatures": described})
