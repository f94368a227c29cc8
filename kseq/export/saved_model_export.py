"""Export a task model as a SavedModel that stock TF Serving runs as is.

`serving_default` takes a 1-D `tf.string` batch and returns
`{"text": [B, M] string, "score": [B, M] float32, "length": [B, M] int32,
"truncated": [B] bool}`; tokenisation, search and detokenisation run in the
graph. `serve_ids` takes `source_ids [B, S] int32` and `lengths [B] int32` and
returns ids. The search is exported without XLA unless `xla=True` (stock TF
Serving disables XLA unless started with `--xla_cpu_compilation_enabled`).

Defined results for bad input: an empty (or all-space) string gives `""` with
score 0; an input longer than `max_source_length` tokens is truncated and
flagged in `truncated`; invalid UTF-8 is replaced by U+FFFD before
tokenisation; an empty batch gives empty outputs.
"""

import json
import logging
import os
import tempfile

import tensorflow as tf

import kseq

logger = logging.getLogger("kseq")
WARMUP_FILE = "tf_serving_warmup_requests"


class ServingModule(tf.Module):
    """Holds the model's variables, the tokenizers' tables and the two endpoints."""

    def __init__(self, model, settings, xla):
        super().__init__(name="kseq_serving")
        self.model = model
        self.source_tokenizer = model.source_tokenizer
        self.target_tokenizer = model.target_tokenizer
        self.settings = settings
        self.max_source_length = model.max_source_length
        search = lambda ids: model.search(ids, settings)
        self.search = tf.function(search, jit_compile=True) if xla else search
        self.serve_text = tf.function(
            self._serve_text, input_signature=[tf.TensorSpec([None], tf.string, name="text")])
        self.serve_ids = tf.function(self._serve_ids, input_signature=[
            tf.TensorSpec([None, None], tf.int32, name="source_ids"),
            tf.TensorSpec([None], tf.int32, name="lengths")])

    def _serve_ids(self, source_ids, lengths):
        width = tf.minimum(tf.shape(source_ids)[1], self.max_source_length)
        positions = tf.range(width)[None, :]
        ids = tf.where(positions < lengths[:, None], source_ids[:, :width], 0)
        out_ids, scores, out_lengths = self.search(ids)
        return {"ids": out_ids, "score": scores, "length": out_lengths}

    def _serve_text(self, text):
        ragged = self.source_tokenizer.tokenize(text)
        truncated = ragged.row_lengths() > self.max_source_length
        ragged = ragged[:, : self.max_source_length]
        ids = ragged.to_tensor()
        # At least one column, so an all-empty batch still has a [B, 1] shape.
        ids = tf.pad(ids, [[0, 0], [0, tf.maximum(0, 1 - tf.shape(ids)[1])]])
        out_ids, scores, lengths = self.search(ids)
        batch, m = tf.shape(out_ids)[0], tf.shape(out_ids)[1]
        flat = tf.reshape(out_ids, [batch * m, -1])  # [B·M, T]
        strings = tf.reshape(self.target_tokenizer.detokenize(flat), [batch, m])
        empty = tf.equal(ragged.row_lengths(), 0)[:, None]  # [B, 1]
        return {
            "text": tf.where(empty, tf.constant(""), strings),
            "score": tf.where(empty, 0.0, scores),
            "length": tf.where(empty, 0, lengths),
            "truncated": truncated,
        }


def _metadata(model, settings, xla):
    import tensorflow_text

    return {
        "kseq_version": kseq.__version__,
        "tensorflow_version": tf.__version__,
        "tensorflow_text_version": tensorflow_text.__version__,
        "model_class": type(model).__name__,
        "search": dict(settings),
        "xla": xla,
        "max_source_length": model.max_source_length,
        "signatures": {"serving_default": "text [B] string -> text/score/length [B, n_best], "
                                          "truncated [B]",
                       "serve_ids": "source_ids [B, S] int32, lengths [B] int32 -> ids"},
    }


def export_saved_model(model, filepath, *, beam_size=4, n_best=1, length_penalty="gnmt",
                       alpha=0.6, max_length=None, xla=False):
    """Writes the SavedModel into `filepath` (the version directory) and returns it.

    Example (see README "Serving with TF Serving"):
        model.export("export/translator/1", beam_size=4)
    """
    settings = model.search_settings(beam_size=beam_size, length_penalty=length_penalty,
                                     alpha=alpha, n_best=n_best, max_length=max_length)
    module = ServingModule(model, settings, xla)
    with tempfile.TemporaryDirectory() as scratch:
        module.vocabulary_files = []
        for side in ("source", "target"):
            path = os.path.join(scratch, f"{side}_vocabulary.txt")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("\n".join(getattr(model, f"{side}_tokenizer").vocabulary) + "\n")
            module.vocabulary_files.append(tf.saved_model.Asset(path))
        signatures = {
            "serving_default": module.serve_text.get_concrete_function(),
            "serve_ids": module.serve_ids.get_concrete_function(),
        }
        tf.saved_model.save(module, filepath, signatures=signatures)
    extra = os.path.join(filepath, "assets.extra")
    os.makedirs(extra, exist_ok=True)
    with open(os.path.join(extra, "kseq_export.json"), "w", encoding="utf-8") as handle:
        json.dump(_metadata(model, settings, xla), handle, indent=2)
    write_warmup_requests(os.path.join(extra, WARMUP_FILE), warmup_sentences(model))
    return filepath


def warmup_sentences(model):
    """Short, medium and full-length inputs built from the source vocabulary."""
    words = [t for t in model.source_tokenizer.vocabulary[4:] if t[:1].isalnum()] or ["a"]
    lengths = (1, 8, model.max_source_length)
    return [" ".join((words * model.max_source_length)[:n]) for n in lengths]


def write_warmup_requests(path, sentences):
    """TF Serving's warm-up file: a TFRecord of `PredictionLog`s for `serving_default`.

    Needs `tensorflow-serving-api` (`pip install 'kseq[serving]'`); without it the
    export is complete but has no warm-up file, and a warning says so.
    """
    try:
        from tensorflow_serving.apis import model_pb2, predict_pb2, prediction_log_pb2
    except ImportError:
        logger.warning("No TF Serving warm-up file written: pip install 'kseq[serving]'.")
        return None
    with tf.io.TFRecordWriter(path) as writer:
        for sentence in sentences:
            request = predict_pb2.PredictRequest(
                model_spec=model_pb2.ModelSpec(signature_name="serving_default"))
            request.inputs["text"].CopyFrom(tf.make_tensor_proto([sentence], dtype=tf.string))
            log = prediction_log_pb2.PredictionLog(
                predict_log=prediction_log_pb2.PredictLog(request=request))
            writer.write(log.SerializeToString())
    return path


def serving_layout(base_dir, name, version=None):
    """TF Serving's `<base>/<name>/<version>/` path, the next free version by default,
    and a `models.config` in `<base>` naming the model. Returns the version path.
    """
    model_dir = os.path.join(base_dir, name)
    os.makedirs(model_dir, exist_ok=True)
    if version is None:
        taken = [int(v) for v in os.listdir(model_dir) if v.isdigit()]
        version = max(taken, default=0) + 1
    version_dir = os.path.join(model_dir, str(version))
    if os.path.exists(version_dir):
        raise ValueError(f"Version {version} already exists; pick another --version. "
                         f"Received: {version_dir}")
    config = ("model_config_list {\n  config {\n"
              f"    name: \"{name}\"\n    base_path: \"/models/{name}\"\n"
              "    model_platform: \"tensorflow\"\n  }\n}\n")
    with open(os.path.join(base_dir, "models.config"), "w", encoding="utf-8") as handle:
        handle.write(config)
    return version_dir
