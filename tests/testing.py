"""Shared test helpers: most layer tests are then short tables."""

import contextlib
import hashlib
import json
import logging
import os
import re
import tempfile
import warnings

import keras
import numpy as np

from kseq.metrics import MaskedAccuracy

# Third-party deprecation warnings a documented flow may still raise (not kseq's to fix), as
# (category, message regex, regex of the module that raises it); every other warning fails.
ALLOWED_WARNINGS = (
    # Keras 3.15's `np.array(tensor)` on a TF tensor under NumPy 2 (keras/src/backend/
    # tensorflow/core.py): TensorFlow's `__array__` has no `copy` keyword yet.
    (DeprecationWarning, r"__array__ implementation doesn't accept a copy keyword", r"keras\."),
)
# Loggers whose WARNING lines (TensorFlow's tf.function retracing warning, absl's) fail too,
# but these (regexes):
WARNING_LOGGERS = ("tensorflow", "absl", "keras")
ALLOWED_LOG_LINES = (
    # Keras's train / test step function: TensorFlow counts its traces per code object, so
    # over every model of the process; the reduced samples train several models for one to
    # three steps each, and their first traces (one per model and bucket shape) fall within
    # ten calls of each other (TensorFlow warns at 5 traces among the last 10 calls); a
    # full-size run has hundreds of untraced steps between its few traces.
    r"calls to <function TensorFlowTrainer\._make_function\.<locals>\.multi_step_on_iterator",
)


class _Recorder(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines = []

    def emit(self, record):
        message = record.getMessage()
        if not any(re.search(allowed, message) for allowed in ALLOWED_LOG_LINES):
            self.lines.append(f"{record.name}: {message}")


@contextlib.contextmanager
def warnings_as_errors(allowed=ALLOWED_WARNINGS):
    """Inside: every Python warning is raised as an error (but the `allowed` ones), and a
    WARNING record of TensorFlow's, absl's or Keras's logger fails on leaving.

    Keras warns through `warnings` ("`shuffle=True` was passed", "ran out of
    data", "will destroy the mask"); TensorFlow's retracing warning is a
    `tensorflow` logger record.
    """
    recorder = _Recorder()
    loggers = [logging.getLogger(name) for name in WARNING_LOGGERS]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for category, message, module in allowed:
            warnings.filterwarnings("ignore", message=message, category=category, module=module)
        for logger in loggers:
            logger.addHandler(recorder)
        try:
            yield
        finally:
            for logger in loggers:
                logger.removeHandler(recorder)
    assert not recorder.lines, recorder.lines


def _dense(x):
    """A ragged batch padded to a dense one; dense tensors (images) pass through."""
    return x.to_tensor() if hasattr(x, "to_tensor") else x


def _as_list(inputs):
    return list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]


class LayerModel(keras.Model):
    """Wraps one layer so `fit` can train it on positional tensor inputs."""

    def __init__(self, layer, call_kwargs):
        super().__init__(name="layer_model")
        self.layer = layer
        self.call_kwargs = call_kwargs

    def call(self, inputs, training=None):
        return self.layer(*_as_list(inputs), training=training, **self.call_kwargs)


def config_round_trip(layer):
    """get_config -> JSON -> from_config gives the same config."""
    config = layer.get_config()
    rebuilt = layer.__class__.from_config(json.loads(json.dumps(config)))
    assert rebuilt.get_config() == config
    return rebuilt


def run_layer_test(
    layer_cls,
    init_kwargs,
    inputs,
    expected_output_shape,
    call_kwargs=None,
    run_training=True,
    run_mixed_precision=True,
    xla=True,
):
    """Config round trip, symbolic and eager calls, a train step (XLA off/on), bfloat16.

    `inputs` is one array or a list of arrays passed positionally;
    `call_kwargs` holds extra keyword inputs (masks, flags). `xla=False` leaves out
    the XLA fit (an XLA compile costs 5-15 s): for a configuration whose ops another
    configuration of the same layer already compiled.
    """
    call_kwargs = call_kwargs or {}
    arrays = _as_list(inputs)
    layer = layer_cls(**init_kwargs)
    config_round_trip(layer)

    eager = layer(*arrays, **call_kwargs)
    assert tuple(eager.shape) == tuple(expected_output_shape)
    assert np.all(np.isfinite(keras.ops.convert_to_numpy(eager)))

    symbolic_inputs = [keras.Input(shape=a.shape[1:], dtype=a.dtype) for a in arrays]
    symbolic = layer_cls(**init_kwargs)(*symbolic_inputs, **call_kwargs) if not call_kwargs else None
    if symbolic is not None:
        assert tuple(symbolic.shape[1:]) == tuple(expected_output_shape[1:])

    if run_training:
        target = np.random.default_rng(0).normal(size=expected_output_shape).astype("float32")
        batch = tuple(arrays) if len(arrays) > 1 else arrays[0]
        for jit in (False, True) if xla else (False,):
            model = LayerModel(layer_cls(**init_kwargs), call_kwargs)
            model.compile(optimizer="adam", loss="mse", jit_compile=jit)
            model(batch)  # builds the layer eagerly: with the optimizer built, one trace
            build_optimizer(model)
            loss = model.train_on_batch(batch, target)  # the step `fit` runs, without its loop
            assert np.isfinite(loss)

    if run_mixed_precision:
        layer16 = layer_cls(**init_kwargs, dtype="mixed_bfloat16")
        out16 = layer16(*arrays, **call_kwargs)
        assert keras.backend.standardize_dtype(out16.dtype) == "bfloat16"
        assert np.all(np.isfinite(keras.ops.convert_to_numpy(keras.ops.cast(out16, "float32"))))
    return layer


def run_model_saving_test(model, inputs, atol=1e-6):
    """`.keras` save -> load -> the same outputs. Returns the reloaded model."""
    expected = keras.ops.convert_to_numpy(model(inputs))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.keras")
        model.save(path)
        restored = keras.saving.load_model(path)
    actual = keras.ops.convert_to_numpy(restored(inputs))
    np.testing.assert_allclose(actual, expected, atol=atol)
    return restored


# === Tasks ===

def build_optimizer(model):
    """Creates `model`'s optimizer variables before its first `fit`; returns `model`.

    Keras creates them inside the first trace of the train step, and TensorFlow
    then traces the step a second time (a function may create variables in its
    first trace only): built first, the step is traced once, which halves the
    first `fit` of a fresh model. The values are the same (zeros, step 0).
    """
    if model.optimizer is not None and not model.optimizer.built:
        model.optimizer.build(model.trainable_variables)
    return model


def _finite_loss_after_one_epoch(model, dataset):
    loss = model.fit(dataset, epochs=1, verbose=0).history["loss"][0]
    assert np.isfinite(loss), loss


def check_input_routes(model, examples, boundaries):
    """`fit` takes raw examples (a list), a `tf.data` of them, and pre-tokenised dense ids."""
    import tensorflow as tf

    pre = build_optimizer(model).preprocessor
    _finite_loss_after_one_epoch(model, pre.training_dataset(examples, boundaries, batch_size=8))
    raw = pre.to_dataset(examples)  # a tf.data.Dataset of raw (input, target) examples
    _finite_loss_after_one_epoch(model, pre.training_dataset(raw, boundaries, batch_size=8))
    width = max(boundaries)
    features, labels = pre(*[tf.constant([e[i] for e in examples]) for i in (0, 1)])
    dense = lambda x: x.to_tensor(shape=[len(examples), width]) if hasattr(x, "to_tensor") else x
    ids = tf.data.Dataset.from_tensor_slices((tf.nest.map_structure(dense, features),
                                              dense(labels))).batch(8)
    _finite_loss_after_one_epoch(model, ids)


def check_steps_reproduce_forward(model, examples):
    """The step protocol's logits equal the teacher-forced ones at every real position."""
    import tensorflow as tf

    features, _ = model.preprocessor(*[tf.constant([e[i] for e in examples]) for i in (0, 1)])
    features = {k: _dense(v) for k, v in features.items()}
    forward = model(features).numpy()
    (search_input,) = model.preprocessor.input_signature
    memory = model.encode(features[search_input.name])
    state = model.initial_state(memory)
    decoder_ids = features["decoder_ids"]
    for t in range(decoder_ids.shape[1]):
        logits, state = model.step(decoder_ids[:, t], state, memory, t)
        real = decoder_ids[:, t].numpy() != 0
        np.testing.assert_allclose(logits.numpy()[real], forward[real, t], atol=1e-4)


_FIRST_BATCHES = {}


def first_batch(preprocessor, examples, boundary, batch_size):
    """The first unshuffled training batch (tensors) `preprocessor` makes of `examples` in
    one bucket of `boundary`, built once per worker for each preprocessor configuration
    (vocabularies included) and examples: building a training dataset costs 1-4 s, and
    the same configuration turns the same examples into the same tensors (integer ids,
    uint8 pixels: no precision in them)."""
    key = hashlib.sha256(json.dumps(
        [preprocessor.get_config(), repr(examples), boundary, batch_size],
        sort_keys=True, default=repr).encode()).hexdigest()
    if key not in _FIRST_BATCHES:
        _FIRST_BATCHES[key] = next(iter(preprocessor.training_dataset(
            examples, [boundary], batch_size=batch_size, shuffle=False)))
    return _FIRST_BATCHES[key]


_TRAINING_BATCHES = {}


def training_batches(preprocessor, examples, boundaries, batch_size):
    """`preprocessor.training_dataset(examples, boundaries, batch_size=batch_size,
    shuffle=False)` as a dataset of its batches held in memory: the same tensors in the same
    order with the same `element_spec`. The batches (tensors) are built once per worker for
    each preprocessor configuration (vocabularies included) and examples, as `first_batch`'s;
    each call makes a new dataset of them.

    For the tests that train several models (or one model several times) on the same
    unshuffled batches: building the training dataset costs 2-3 s CPU and each pass over
    it more. The element spec is the original's (unknown batch size and lengths) because a
    train step traced for known shapes runs other kernels: its float noise differs, and
    after tens of Adam steps so do the weights; with it, training is bit for bit the same.
    """
    import functools

    import tensorflow as tf

    key = hashlib.sha256(json.dumps(
        [preprocessor.get_config(), repr(examples), list(boundaries), batch_size],
        sort_keys=True, default=repr).encode()).hexdigest()
    if key not in _TRAINING_BATCHES:
        dataset = preprocessor.training_dataset(examples, list(boundaries),
                                                batch_size=batch_size, shuffle=False)
        _TRAINING_BATCHES[key] = (tuple(dataset), dataset.element_spec)
    batches, spec = _TRAINING_BATCHES[key]
    data = functools.reduce(tf.data.Dataset.concatenate,
                            [tf.data.Dataset.from_tensors(batch) for batch in batches])
    # Each tensor's static shape relaxed to the original spec's (`placeholder_with_default`
    # passes its input on with the shape it is given).
    relax = lambda *batch: tf.nest.map_structure(
        lambda tensor, want: tf.compat.v1.placeholder_with_default(tensor, want.shape),
        batch if len(batch) > 1 else batch[0], spec)
    return data.map(relax)


def check_real_rows_step_equals_keras_step(build, examples, boundary, steps=2):
    """kseq's real-rows step and Keras's own, on identical copies: same logs and weights.

    Compiled with plain SGD: Adam would turn the float noise of zero gradients
    into full-size steps that differ between summation orders.
    """
    keras.utils.set_random_seed(3)
    fast, plain = build(), build()
    plain.set_weights(fast.get_weights())
    plain.train_step = lambda data: keras.Model.train_step(plain, data)
    for model in (fast, plain):
        model.compile(optimizer=keras.optimizers.SGD(0.5), loss=model.loss,
                      metrics=[MaskedAccuracy(pad_id=model.label_pad_id)])
        build_optimizer(model)
    # Five examples in a batch of ten: padding rows (and padded positions) to skip.
    batch = first_batch(fast.preprocessor, examples[:5], boundary, 10)
    assert float(np.mean(batch[1].numpy() == fast.label_pad_id)) > 0.2
    ranks, project = [], fast.project
    fast.project = lambda states: ranks.append(len(states.shape)) or project(states)
    for _ in range(steps):
        got = fast.train_on_batch(*batch, return_dict=True)
        want = plain.train_on_batch(*batch, return_dict=True)
        assert set(got) == set(want) and np.isfinite(got["loss"])
        for name in got:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6)
    assert ranks and set(ranks) == {2}  # the fast step projected `[R, D]` real rows
    for a, b in zip(fast.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def run_task_test(trained, build, examples, predict, boundaries=(16, 32), input_routes=True,
                  real_rows_step=True):
    """What every task model passes (see tests/models/ and the translator tests).

    Args:
        trained: a model overfit on `examples` (raw `(input, target)` pairs).
        build: `() -> ` a fresh compiled model of the same task and size.
        predict: `(model, inputs) -> list` of outputs comparable with the targets.
        boundaries: the bucket lengths of the training batches.
        input_routes: also check the three input routes (off where another
            model with the same preprocessor class already did).
        real_rows_step: also check the real-rows train step against Keras's
            (off where another model took the same decoder path through it).

    Checks: `trained` reproduces the targets; the `.keras` round trip predicts
    the same; step-by-step logits equal teacher-forced ones (tasks with a step
    protocol); `fit` takes the three input routes (on the first 16 examples:
    two batches of 8 each); the real-rows train step equals Keras's step (on two
    fresh copies: a model the routes trained is no fresh copy, its BatchNorm
    statistics and float noise differ).

    Returns the `.keras` copy of `trained` it checked (for a caller's further checks, such
    as an export written from a reloaded model).
    """
    import tensorflow as tf

    inputs, targets = [e[0] for e in examples], [e[1] for e in examples]
    assert predict(trained, inputs) == targets
    features, _ = trained.preprocessor(tf.constant(inputs), tf.constant(targets))
    dense = {k: _dense(v) for k, v in features.items()}
    restored = run_model_saving_test(trained, dense, atol=1e-5)
    assert predict(restored, inputs) == targets
    if hasattr(trained, "step"):
        check_steps_reproduce_forward(trained, examples[:4])
    if input_routes:
        check_input_routes(build(), examples[:16], list(boundaries))
    if real_rows_step:
        check_real_rows_step_equals_keras_step(build, examples, max(boundaries))
    return restored



# === Exports ===

# The export child in two parts: `EXPORT_REQUESTS` answers the requests and prints them (one
# JSON line); `CHILD_EXIT` ends the process. tests/hostile_images.py runs more after the
# first part in the same child (one TensorFlow start for both).
EXPORT_REQUESTS = r"""
import base64, json, sys
import tensorflow as tf
import tensorflow_text  # registers the tokenizer ops, as TF Serving links them
assert "kseq" not in sys.modules
exports = json.load(sys.stdin)  # [[export_dir, {name: [signature, inputs]}], ...]

def tensor(values):
    if isinstance(values, dict):  # {"b64": [...]}: strings sent as base64
        return tf.constant([base64.b64decode(v) for v in values["b64"]], tf.string)
    if values and isinstance(values[0], str):
        return tf.constant(values, tf.string)
    return tf.constant(values)

def plain(value):
    value = value.numpy()
    if value.dtype == object:
        return tf.nest.map_structure(lambda b: b.decode("utf-8", "replace"), value.tolist())
    return value.tolist()

every = []
for export_dir, requests in exports:
    served = tf.saved_model.load(export_dir)
    answers, failed = {}, {}
    for name, (signature, inputs) in requests.items():
        try:
            out = served.signatures[signature](**{k: tensor(v) for k, v in inputs.items()})
        except Exception as error:  # run_export_test fails on it unless the request expects it
            failed[name] = f"{type(error).__name__}: {error}"
            continue
        answers[name] = {key: plain(value) for key, value in out.items()}
    answers["kseq_failed"] = failed
    every.append(answers)
for answers in every:
    answers["kseq_loaded"] = "kseq" in sys.modules
print(json.dumps(every), flush=True)
"""
CHILD_EXIT = r"""import os
os._exit(0)  # all is printed: TensorFlow's interpreter teardown (0.5-4 s) checks nothing
"""
EXPORT_CHILD = EXPORT_REQUESTS + CHILD_EXIT


def _json_inputs(inputs):
    import base64

    def encode(values):  # an empty list travels as an empty string batch
        if not values or isinstance(values[0], bytes):
            return {"b64": [base64.b64encode(v).decode("ascii") for v in values]}
        return values
    return {name: encode(list(values)) for name, values in inputs.items()}


def served_ops(export_dir):
    """Every op in the SavedModel: the top graph and every function of its library."""
    from tensorflow.core.protobuf import saved_model_pb2

    proto = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as handle:
        proto.ParseFromString(handle.read())
    graph = proto.meta_graphs[0].graph_def
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    return graph, nodes


def check_served_ops(export_dir, extra_registered=(), loop=False):
    """No XLA, no Python ops, only ops TF (or tensorflow_text) registers; with `loop`, a
    `While` (the search)."""
    import tensorflow as tf

    graph, nodes = served_ops(export_dir)
    op_types = {n.op for n in nodes}
    assert not [op for op in op_types if op.startswith("Xla")]
    assert not [n.name for n in nodes if n.attr["_XlaMustCompile"].b]
    assert not op_types & {"PyFunc", "EagerPyFunc", "PyFuncStateless"}
    assert not loop or "While" in op_types or "StatelessWhile" in op_types
    library = {f.signature.name for f in graph.library.function}
    registered = set(tf.raw_ops.__dict__) | set(extra_registered)
    unknown = {op for op in op_types if op not in library and op not in registered}
    assert not unknown, unknown
    return op_types


def run_export_test(export_dir, requests, loop=False, timeout=300, failing=()):
    """Loads an export in one fresh process without kseq and runs every request there.

    Args:
        export_dir: the SavedModel (version) folder.
        requests: `{name: (signature name, {input name: list of values})}`;
            lists of bytes travel as base64 (as TF Serving's REST `{"b64": ...}`).
        failing: names of requests that must raise; each answers
            `{"error": "ExceptionType: message"}`. Any other request raising fails
            the test with its message.

    Returns `{name: {output name: nested lists}}` (strings decoded as UTF-8).
    Also checks the op walk (`check_served_ops`; `loop`: the graph holds the
    search's `While`) and that kseq never loaded.
    One child serves every request, so a test module pays one TensorFlow start.
    """
    return run_export_tests({"export": (export_dir, requests)}, loop=loop, timeout=timeout,
                            failing=failing)["export"]


def run_export_tests(exports, loop=False, timeout=300, failing=()):
    """`run_export_test` for several exports in one child: one TensorFlow start for all.

    Args:
        exports: `{key: (export_dir, requests)}`, each as `run_export_test` takes them.
        loop, timeout, failing: as `run_export_test` (`failing` names requests of any export).

    Returns `{key: answers}`, each as `run_export_test` returns it.
    """
    import subprocess
    import sys

    payload = export_payload(exports, loop)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    done = subprocess.run([sys.executable, "-c", EXPORT_CHILD], input=payload,
                          env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return export_answers(exports, done.stdout.strip().splitlines()[-1], failing)


def export_payload(exports, loop=False):
    """`run_export_tests`'s first half: the op walk of every export (`check_served_ops`), then
    the requests as the JSON `EXPORT_REQUESTS` reads from its stdin."""
    for export_dir, _ in exports.values():
        check_served_ops(export_dir, {"NormalizeUTF8", "RegexSplitWithOffsets"}, loop=loop)
    return json.dumps([[export_dir, {name: [signature, _json_inputs(inputs)]
                                     for name, (signature, inputs) in requests.items()}]
                       for export_dir, requests in exports.values()])


def export_answers(exports, line, failing=()):
    """`run_export_tests`'s second half: the JSON `line` `EXPORT_REQUESTS` printed for
    `exports` -> `{key: answers}`, checking kseq never loaded and which requests failed."""
    keys = list(exports)
    results = {}
    for key, answers in zip(keys, json.loads(line)):
        assert answers.pop("kseq_loaded") is False
        failed = answers.pop("kseq_failed")
        unexpected = {name: error for name, error in failed.items() if name not in failing}
        assert not unexpected, unexpected
        requested = set(failing) if len(keys) == 1 else set(failing) & set(exports[key][1])
        assert requested <= set(failed), f"requests that should have failed: {failing}"
        answers.update({name: {"error": failed[name]} for name in requested})
        results[key] = answers
    return results


def saved_variables(export_dir):
    """`{name: value}` of an export's checkpoint, without its object graph entry."""
    import tensorflow as tf

    prefix = os.path.join(export_dir, "variables", "variables")
    return {name: tf.train.load_variable(prefix, name)
            for name, _ in tf.train.list_variables(prefix)
            if name != "_CHECKPOINTABLE_OBJECT_GRAPH"}


def check_export_holds_weights_only(model, export_dir):
    """The export of `model` (compiled, its optimizer state made: Adam's slots and iteration
    count) holds exactly the model's weights, with the model's values, and nothing under
    `optimizer`; the model keeps its own optimizer. (tests/export/test_export_variables.py.)"""
    assert len(model.optimizer.variables) > 2 * len(model.trainable_variables)
    saved = saved_variables(export_dir)
    assert [name for name in saved if "optimizer" in name] == []
    weights = [w.numpy() for w in model.weights]
    assert len(saved) == len(weights) > 0
    for name, value in saved.items():  # each one of the model's weights, trained values
        assert any(w.shape == value.shape and np.array_equal(w, value) for w in weights), name
    assert sorted(v.shape for v in saved.values()) == sorted(w.shape for w in weights)
    assert model.optimizer.variables  # the model keeps its own optimizer


# === Group A (translators): checks that run untraced ===

@contextlib.contextmanager
def functions_run_eagerly():
    """Inside: every `tf.function` (a search, Keras's train step) runs eagerly, untraced.

    A tiny model's few calls run faster eagerly than one trace costs (2-10 s each
    on a CPU; a search runs about three times faster eagerly, trace included), so
    a check whose assertion is about values (translations equal, logs and weights
    equal) runs inside, where the caller traces the same code elsewhere (the
    overfit `fit` runs kseq's train step as a graph; an export, the search).
    """
    import tensorflow as tf

    before = tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(True)
    try:
        with warnings.catch_warnings():
            # tf.data's functions (a dataset built inside) stay graphs, as TensorFlow warns:
            # the data is the same either way.
            warnings.filterwarnings("ignore", message=r"Even though the `tf\.config\."
                                    r"experimental_run_functions_eagerly` option is set")
            yield
    finally:
        tf.config.run_functions_eagerly(before)


# === Group G (classifiers, taggers, command line): one load per preset or run folder ===

def load_presets_once(monkeypatch, cache, folders=()):
    """Makes `kseq.training.load_trained` (what every `kseq` command loads with) hand out
    one model per shipped preset name (and per path in `folders`), kept in `cache` (a dict
    the caller keeps, for instance per module), for the tests whose point is a command's
    options or output, not loading: the first command still loads it for real.

    Loading builds the model (a few seconds); the same object also keeps its traced
    functions (searches cached per settings, Keras's predict and test functions), so a
    second command with the same options traces nothing. Other folders and `.keras` files
    load as before, every time. Callers never change a folder in `folders` meanwhile.
    """
    import kseq.training
    from kseq.presets.catalog import is_preset

    real = kseq.training.load_trained
    folders = {os.fspath(folder) for folder in folders}

    def load_trained(model_dir):
        key = os.fspath(model_dir)
        if key in folders or (not os.path.exists(key) and is_preset(key)):
            if key not in cache:
                cache[key] = real(model_dir)
            return cache[key]
        return real(model_dir)

    monkeypatch.setattr(kseq.training, "load_trained", load_trained)


def free_ports(count):
    """`count` localhost ports free a moment ago (for TF_CONFIG clusters in tests)."""
    import socket

    sockets = [socket.socket() for _ in range(count)]
    for one in sockets:
        one.bind(("127.0.0.1", 0))
    ports = [one.getsockname()[1] for one in sockets]
    for one in sockets:
        one.close()
    return ports
