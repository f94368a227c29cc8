"""A classifier's serving endpoint, for the one export path (`kseq.export`).

`serving_default` takes `text`, a 1-D `tf.string` batch, and returns
`{"label": [B] string, "label_id": [B] int32, "probabilities": [B, C] float32,
"truncated": [B] bool}`; tokenisation (the preprocessor's, as in training and
`predict_labels`) and the model run in the graph. A text without any token
(empty, or only spaces) gets `label ""`, `label_id -1` and probabilities of 0;
invalid UTF-8 becomes U+FFFD; an input longer than `max_length` tokens is cut
and flagged in `truncated`.
"""

import tensorflow as tf  # the endpoint is a tf.function over a tf.Module

from kseq.export import ServingSpec


class ClassifierEndpoints(tf.Module):
    def __init__(self, model):
        super().__init__(name="kseq_classifier_endpoints")
        self.model = model
        self.preprocessor = model.preprocessor
        self.tokenizer = model.preprocessor.tokenizer
        self.label_names = tf.constant(model.label_names)
        self.serve_text = tf.function(self._serve_text, input_signature=[
            tf.TensorSpec([None], tf.string, name="text")])

    def _serve_text(self, text):
        inputs = self.preprocessor.inference_inputs(text)
        logits = self.model({"token_ids": inputs["token_ids"]}, training=False)
        probabilities = tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1)  # [B, C]
        empty = inputs["empty"]
        ids = tf.where(empty, -1, tf.argmax(probabilities, axis=-1, output_type=tf.int32))
        return {"label": tf.where(empty, "", tf.gather(self.label_names, tf.maximum(ids, 0))),
                "label_id": ids,
                "probabilities": tf.where(empty[:, None], 0.0, probabilities),
                "truncated": inputs["truncated"]}


def classifier_serving_spec(model):
    """The `ServingSpec` of a classifier: the endpoint, vocabulary and labels, warm-up."""
    endpoints = ClassifierEndpoints(model)
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
