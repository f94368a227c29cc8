"""A test-only classifier, proof that `kseq.models.Task` is general: it defines its layers,
its preprocessor and its serving endpoint, and none of `train_step`, `get_config`,
`from_config`, `export` or `save`."""

import keras
import tensorflow as tf
from keras import ops

import kseq
from kseq.data.pipeline.parallel_text import pairs_to_dataset
from kseq.export import ServingSpec


@keras.saving.register_keras_serializable(package="kseq_tests")
class ToyPreprocessor(kseq.models.Preprocessor):
    def __init__(self, tokenizer, labels, max_length=16):
        self.tokenizer, self.labels, self.max_length = tokenizer, list(labels), max_length
        self.input_signature = [tf.TensorSpec([None, None], tf.int32, name="token_ids")]

    def __call__(self, texts, labels):
        found = tf.equal(labels[:, None], tf.constant(self.labels)[None])  # [B, C]
        return ({"token_ids": self.tokenizer.tokenize(texts)[:, : self.max_length]},
                tf.argmax(tf.cast(found, tf.int32), axis=1, output_type=tf.int32))

    def inference_inputs(self, texts):
        return {"token_ids": self.tokenizer.tokenize(texts)[:, : self.max_length].to_tensor()}

    def to_dataset(self, data):
        return pairs_to_dataset(data)

    def get_config(self):
        return {"tokenizer": self.tokenizer.get_config(), "labels": self.labels,
                "max_length": self.max_length}

    @classmethod
    def from_config(cls, config):
        return cls(**{**config, "tokenizer": kseq.text.tokenizer_from_config(config["tokenizer"])})


def mean_of_real_states(memory):  # [B, S, E] -> [B, E]
    weights = ops.cast(memory["mask"], memory["states"].dtype)[..., None]
    return ops.sum(memory["states"] * weights, 1) / ops.maximum(ops.sum(weights, 1), 1.0)


@keras.saving.register_keras_serializable(package="kseq_tests")
class ToyClassifier(kseq.models.Task):
    label_pad_id = -1  # class labels have no padding id: bucketing's padding rows hold -1

    def __init__(self, encoder, preprocessor, **kwargs):
        head = keras.layers.Dense(len(preprocessor.labels), name="head")
        token_ids = keras.Input(shape=(None,), dtype="int32", name="token_ids")
        outputs = head(mean_of_real_states(encoder.call(token_ids)))
        super().__init__(inputs={"token_ids": token_ids}, outputs=outputs, **kwargs)
        self.encoder, self.preprocessor, self.head = encoder, preprocessor, head

    def hidden_states(self, inputs, training=None):
        return mean_of_real_states(self.encoder.call(inputs["token_ids"], training=training))

    def project(self, states):
        return ops.cast(self.head(states), "float32")

    def serve(self, texts):  # strings in, label strings out
        logits = self(self.preprocessor.inference_inputs(texts))
        labels = tf.gather(tf.constant(self.preprocessor.labels), tf.argmax(logits, axis=-1))
        return {"label": labels}

    def serving_spec(self):  # its endpoint, for the one export path (`model.export`)
        text = [tf.TensorSpec([None], tf.string, name="text")]
        return ServingSpec({"serving_default": tf.function(self.serve, input_signature=text)},
                           {"model": self, "tokenizer": self.preprocessor.tokenizer},
                           warmup=[{"text": ["one"]}])
