"""The one export path: a task's serving endpoints as a SavedModel that stock TF Serving runs.

A task supplies a `ServingSpec` (`model.serving_spec(**options)`): its
signatures (`serving_default` and any others, `tf.function`s with input
signatures), the objects whose variables and lookup tables they use, text
assets (vocabularies), warm-up inputs and metadata. This module knows nothing
about text, models or layers: it saves the spec, writes
`assets.extra/kseq_export.json` (kseq / TensorFlow / tensorflow-text versions,
the model class, the task's metadata) and TF Serving's warm-up file.

The export holds only what serving reads: the spec comes from
`kseq.export.inference_copy.inference_model(model)`, an uncompiled copy of a
compiled model, so no optimizer state (Adam's slots, the iteration count,
a loss scale) is saved with the weights.

Writes are atomic: everything goes into a hidden staging folder beside the
destination (`kseq.export.staging`) that is renamed into place only when
complete, so a kill leaves no destination or a complete one (`saved_model.pb`,
`variables/`, `assets/`, `assets.extra/`).
"""

import json
import logging
import os

import tensorflow as tf

from kseq.errors import KseqError, one_line
from kseq.export.inference_copy import inference_model
from kseq.export.staging import publish, staging_directory
from kseq.version import __version__

logger = logging.getLogger("kseq")
WARMUP_FILE = "tf_serving_warmup_requests"


class ServingSpec:
    """What a task exports.

    Args:
        signatures: `{name: tf.function}` with input signatures; `serving_default` first.
        trackables: `{name: object}` the signatures read (their variables and
            lookup tables are saved with them).
        assets: `{file name: text}` written to `assets/` and tracked.
        warmup: `[{input name: values}]` requests for `serving_default`.
        metadata: merged into `assets.extra/kseq_export.json`.
    """

    def __init__(self, signatures, trackables, assets=None, warmup=(), metadata=None):
        if "serving_default" not in signatures:
            raise ValueError("A ServingSpec needs a `serving_default` signature. "
                             f"Received: {sorted(signatures)}")
        self.signatures = dict(signatures)
        self.trackables = dict(trackables)
        self.assets = dict(assets or {})
        self.warmup = list(warmup)
        self.metadata = dict(metadata or {})


def export_saved_model(model, filepath, **options):
    """Writes `model.serving_spec(**options)` into `filepath` (the version directory).

    The export is built in a hidden staging folder beside `filepath` and
    renamed to `filepath` when complete; an existing `filepath` is replaced
    whole. For TF Serving's `<base>/<name>/<version>` layout and its
    `models.config`, use `kseq.export.export_to_serving_layout`.

    Example (see docs/serving.md):
        model.export("export/translator/1", beam_size=4)
    """
    parent = os.path.dirname(os.path.abspath(filepath))
    try:
        with staging_directory(parent) as staging:
            built = build_saved_model(model, staging, **options)
            publish(built, filepath, replace=True)
    except (OSError, tf.errors.OpError) as error:
        raise write_error(error, filepath) from None
    return filepath


def export_bytes(folder):
    """The total size in bytes of the files under `folder` (an export: `saved_model.pb`,
    `variables/`, `assets/`, `assets.extra/`); what `kseq export` reports."""
    return sum(os.path.getsize(os.path.join(root, name))
               for root, _, names in os.walk(folder) for name in names)


def write_error(error, folder):
    """A `KseqError` naming `folder` for an `OSError` or a TensorFlow `OpError` (a full disk
    is a `ResourceExhaustedError` inside `tf.saved_model.save`) raised while exporting."""
    if isinstance(error, tf.errors.OpError):
        reason = f"{type(error).__name__}: {one_line(error.message, 200)}"
        received = folder
    else:
        reason = one_line(error.strerror or error, 200)
        received = error.filename or folder
    return KseqError(f"Cannot export into {folder}: {reason}; nothing was published there. "
                     f"Received: {received}")


def build_saved_model(model, staging, **options):
    """Writes the complete export into `<staging>/model` and returns that path.

    Not atomic by itself: `staging` is a folder from
    `kseq.export.staging.staging_directory`, published by the caller.
    """
    if not callable(getattr(model, "serving_spec", None)):
        raise KseqError(f"{type(model).__name__} defines no `serving_spec`, so it has no "
                        f"serving endpoints to export. Received: {type(model).__name__}")
    _check_options(model, options)
    # A compiled model tracks its optimizer: serving from the model itself would save
    # Adam's slots (twice the weights) beside the weights.
    spec = inference_model(model).serving_spec(**options)
    module = tf.Module(name="kseq_serving")
    for name, trackable in spec.trackables.items():
        setattr(module, name, trackable)
    texts = os.path.join(staging, "assets_source")
    os.makedirs(texts)
    module.asset_files = []
    for file_name, text in spec.assets.items():
        path = os.path.join(texts, file_name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        module.asset_files.append(tf.saved_model.Asset(path))
    # The `tf.function`s themselves, not concrete functions: `save` traces them
    # anyway (in its save context), so tracing them here first doubles the time.
    built = os.path.join(staging, "model")
    tf.saved_model.save(module, built, signatures=spec.signatures)
    extra = os.path.join(built, "assets.extra")
    os.makedirs(extra, exist_ok=True)
    with open(os.path.join(extra, "kseq_export.json"), "w", encoding="utf-8") as handle:
        json.dump(_metadata(model, spec), handle, indent=2)
    write_warmup_requests(os.path.join(extra, WARMUP_FILE), spec.warmup)
    return built


def _check_options(model, options):
    """Options the task's `serving_spec` does not take: one line naming them and the valid ones."""
    import inspect

    parameters = inspect.signature(model.serving_spec).parameters
    if any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
        return
    unknown = sorted(set(options) - set(parameters))
    if unknown:
        raise KseqError(f"{type(model).__name__} exports with the options "
                        f"{sorted(parameters) or 'none'}. Received: {', '.join(unknown)}")


def _metadata(model, spec):
    import tensorflow_text

    return {"kseq_version": __version__, "tensorflow_version": tf.__version__,
            "tensorflow_text_version": tensorflow_text.__version__,
            "model_class": type(model).__name__, **spec.metadata}


def write_warmup_requests(path, requests):
    """TF Serving's warm-up file: a TFRecord of `PredictionLog`s for `serving_default`.

    `requests` are `{input name: values}` dicts. Needs `tensorflow-serving-api`
    (`pip install 'kseq[serving]'`); without it the export is complete but has
    no warm-up file, and a warning says so.
    """
    try:
        from tensorflow_serving.apis import model_pb2, predict_pb2, prediction_log_pb2
    except ImportError:
        logger.warning("No TF Serving warm-up file written: pip install 'kseq[serving]'.")
        return None
    with tf.io.TFRecordWriter(path) as writer:
        for inputs in requests:
            request = predict_pb2.PredictRequest(
                model_spec=model_pb2.ModelSpec(signature_name="serving_default"))
            for name, values in inputs.items():
                request.inputs[name].CopyFrom(tf.make_tensor_proto(values))
            log = prediction_log_pb2.PredictionLog(
                predict_log=prediction_log_pb2.PredictLog(request=request))
            writer.write(log.SerializeToString())
    return path
