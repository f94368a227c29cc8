"""A classifier's serving endpoint, for the one export path (`kseq.export`).

`serving_default` takes `text`, a 1-D `tf.string` batch, and returns
`{"label": [B] string, "label_id": [B] int32, "probabilities": [B, C] float32,
"truncated": [B] bool}`; tokenisation (the preprocessor's, as in training and
`predict_labels`) and the model run in the graph. A text without any token
(empty, or only spaces) gets `label ""`, `label_id -1` and probabilities of 0;
invalid UTF-8 becomes U+FFFD; an input longer than `max_length` tokens is cut
and flagged in `truncated`.

An image classifier's `serving_default` takes `image_bytes`, a 1-D
`tf.string` batch of encoded images (decoded by the preprocessor's image
function, as in training), and returns `label`, `label_id`,
`probabilities` and `valid [B] bool`: a row that does not decode gets
`label ""`, `label_id -1`, probabilities of 0 and `valid False`, without
failing the other rows.
"""

import tensorflow as tf  # the endpoint is a tf.function over a tf.Module

from kseq.export import ServingSpec


class ClassifierEndpoints(tf.Module):
    def __init__(self, model):
        super().__init__(name="kseq_classifier_endpoints")
        self.model = model
        self.preprocessor = model.preprocessor
        self.label_names = tf.constant(model.label_names)
        # One endpoint per model: a saved tf.function with a signature is traced on save.
        if model.preprocessor.input_kind == "images":
            self.serve_images = tf.function(self._serve_images, input_signature=[
                tf.TensorSpec([None], tf.string, name="image_bytes")])
        else:
            self.tokenizer = model.preprocessor.tokenizer  # tracks its lookup tables
            self.serve_text = tf.function(self._serve_text, input_signature=[
                tf.TensorSpec([None], tf.string, name="text")])

    def _labels(self, logits, empty):
        probabilities = tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1)  # [B, C]
        ids = tf.where(empty, -1, tf.argmax(probabilities, axis=-1, output_type=tf.int32))
        return {"label": tf.where(empty, "", tf.gather(self.label_names, tf.maximum(ids, 0))),
                "label_id": ids,
                "probabilities": tf.where(empty[:, None], 0.0, probabilities)}

    def _serve_text(self, text):
        inputs = self.preprocessor.inference_inputs(text)
        logits = self.model({"token_ids": inputs["token_ids"]}, training=False)
        return {**self._labels(logits, inputs["empty"]), "truncated": inputs["truncated"]}

    def _serve_images(self, image_bytes):
        inputs = self.preprocessor.inference_inputs(image_bytes)
        rows = tf.shape(image_bytes)[0]
        # TF's Conv2D fails on an empty batch: run at least one (white) row, keep `rows`.
        images = tf.pad(inputs["images"], [[0, tf.maximum(1 - rows, 0)], [0, 0], [0, 0], [0, 0]],
                        constant_values=255)
        logits = self.model({"images": images}, training=False)[:rows]
        return {**self._labels(logits, inputs["empty"]), "valid": inputs["valid"]}


def _image_spec(model, endpoints):
    return ServingSpec(
        signatures={"serving_default": endpoints.serve_images},
        trackables={"endpoints": endpoints},
        assets={"labels.txt": "\n".join(model.label_names) + "\n"},
        warmup=[{"image_bytes": [image]} for image in model.preprocessor.warmup_images()],
        metadata={"label_names": list(model.label_names),
                  "image_size": list(model.preprocessor.image_size),
                  "max_pixels": model.preprocessor.max_pixels,
                  "signatures": {"serving_default": "image_bytes [B] string -> label [B] "
                                                    "string, label_id [B] int32, "
                                                    "probabilities [B, C], valid [B]"}})


def classifier_serving_spec(model):
    """The `ServingSpec` of a classifier: the endpoint, vocabulary and labels, warm-up."""
    endpoints = ClassifierEndpoints(model)
    if model.preprocessor.input_kind == "images":
        return _image_spec(model, endpoints)
    words = [t for t in model.preprocessor.tokenizer.vocabulary[4:] if t[:1].isalnum()] or ["a"]
    warmup = [" ".join((words * model.preprocessor.max_length)[:n])
              for n in (1, 8, model.preprocessor.max_length)]
    return ServingSpec(
        signatures={"serving_default": endpoints.serve_text},
        trackables={"endpoints": endpoints},
        assets={"vocabulary.txt": "\n".join(model.preprocessor.tokenizer.vocabulary) + "\n",
                "labels.txt": "\n".join(model.label_names) + "\n"},
        warmup=[{"text": [sentence]} for sentence in warmup],
        metadata={"label_names": list(model.label_names),
                  "max_length": model.preprocessor.max_length,
                  "signatures": {"serving_default": "text [B] string -> label [B] string, "
                                                    "label_id [B] int32, probabilities [B, C], "
                                                    "truncated [B]"}})
