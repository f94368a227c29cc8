"""`Task`: the base of every kseq task model (translator, classifier, tagger, ...).

A task is a subclassed functional `keras.Model` made of parts (an encoder, a
decoder or a head: registered layers) and a preprocessor. The base gives it:

- **Config from the constructor.** `get_config` returns every constructor
  argument, read from the attribute of the same name; layers and other
  registered objects (the preprocessor) are serialized nested, and
  `from_config` rebuilds them. A subclass overrides neither.
- **Training defaults.** `compile_from_recipe(training)` (Adam with warm-up
  and inverse-sqrt decay, the masked loss with label smoothing, masked
  accuracy, padding labels `label_pad_id`) and `validation_callback(...)`
  (the task's `validation_score` on validation examples each epoch, as
  `val_<score>`; generative tasks report BLEU) are what `kseq train` uses.
- **One export path.** `export(filepath, **options)` writes the task's
  `serving_spec(**options)` (a `kseq.export.ServingSpec`: its signatures,
  assets, warm-up inputs) as a TF Serving SavedModel; other formats, or a
  task without a spec, go to Keras's own `export`.
- **Recipes, evaluation, the CLI.** `from_recipe(recipe, train_data)` (a
  task class builds itself from a recipe with its folder's `build_<task>`,
  registered by `register_builder`), `evaluate(pairs)` (the task's scores as
  one `EvaluationResult`, with a one-line `summary()`), `describe(recipe)`
  (the architecture column of `kseq presets`), and what the `kseq` command
  may ask of it: `cli_verbs`, `evaluate_options`, `export_options`. So
  `kseq.zoo` and `kseq.cli` hold no per-task code.
- **Raw examples in `fit`.** `fit(pairs)`, `fit(x=inputs, y=targets)` and
  `validation_data=pairs` train through the preprocessor's `training_dataset`
  with the recipe's batching (`kseq.models.raw_examples`); a loss other than
  kseq's gets padding labels as sample weight 0 (`padding_as_weights`).
- **Raw examples in `predict`.** A task that defines `predict_raw(examples,
  batch_size)` (a classifier, a tagger) answers `predict` / `predict_on_batch`
  on raw examples (a list or 1-D array of strings, bytes, file paths or word
  lists; a 1-D `tf.string` tensor) through its preprocessor, keras-hub's
  convention for text classifiers; model inputs (token ids, dicts, image
  tensors, datasets) go to Keras's own `predict`, unchanged.
- **The real-rows train step.** A task that defines the hooks
  `hidden_states(inputs, training)` (`[B, T, E]`, or `[B, E]` for one label
  per example) and `project(states)` (float32 logits) trains through
  `real_rows_train_step`, which projects only rows whose label is not padding.
  Where that step could change a result, Keras's own step runs instead, and
  the log says so once per reason.

The functional graph is built through the parts' `call` methods rather than
their `__call__`, so its nodes are the parts' sublayers: saved weights sit
under those sublayers, as in models saved before the parts existed.
"""

import inspect
import logging

import keras
import tensorflow as tf  # eager or graph: see `inference_logits`

from kseq.errors import KseqError
from kseq.metrics import MaskedAccuracy, MaskedSparseCrossEntropy, ValidationScoreCallback
from kseq.models.fused_adam import FusedAdam
from kseq.models.raw_examples import fit_arguments, is_pairs, raw_examples
from kseq.models.real_rows_train_step import padding_as_weights, real_rows_train_step
from kseq.models.recipes import merge
from kseq.presets.catalog import canonical_name, has_weights, load_preset_model, preset_recipe
from kseq.models.schedules import WarmupInverseSqrt

logger = logging.getLogger("kseq")


def _constructor_arguments(cls):
    """Names of `cls.__init__`'s arguments, without `self`, `*args`, `**kwargs` and `dtype`."""
    skip = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [name for name, p in inspect.signature(cls.__init__).parameters.items()
            if p.kind not in skip and name not in ("self", "dtype")]


def _is_serialized_object(value):
    return isinstance(value, dict) and "class_name" in value and "config" in value


class _InferenceCall:
    """`model(x, training=False)` as a callable object of its own.

    TensorFlow counts a `tf.function`'s traces per Python code object: with a
    lambda, the inference functions of every model in the process would share
    one count, and a few models used in turn would log a "triggered
    tf.function retracing" warning although each traces once or twice.
    """

    def __init__(self, model):
        self.model = model

    def __call__(self, inputs):
        return self.model(inputs, training=False)


class Task(keras.Model):
    """Base class of task models; see the module docstring."""

    # Labels equal to this are padding, ignored by loss and metrics. A task whose
    # labels are classes (no padding id) sets -1, which bucketing writes in padding rows.
    label_pad_id = 0
    # The recipe `"task"` of this class's presets (a subclass sets it).
    preset_task = None
    # The `kseq` commands (besides `train`) that take a model of this task.
    cli_verbs = ()
    # The `kseq evaluate` / `kseq export` options `evaluate(pairs, ...)` and
    # `serving_spec(...)` take, by their keyword names (e.g. "beam_size").
    evaluate_options = ()
    export_options = ()
    # The score of `evaluate(pairs)` that `validation_callback` logs each epoch as
    # `val_<score>` (None: no report; a generative task reports BLEU instead).
    validation_score = None
    # Whether a lower `validation_score` is better (a language model's perplexity).
    lower_score_is_better = False
    # Whether targets are class labels: a training corpus's vocabulary sample then holds
    # every label (`kseq.data.corpus.corpus_preparation`).
    targets_are_labels = False
    # The recipe's `model` key naming the architecture, and the tokenizer kind of a
    # recipe built from an architecture name (`default_recipe`).
    architecture_key = "encoder"
    tokenizer_kind = "word"
    # Set by `register_builder` (the task folder's `__init__`, since its architectures
    # module imports the class): `build_<task>(...)` and the architecture names.
    builder = None
    architectures = ()

    @classmethod
    def register_builder(cls, builder, architectures):
        """Registers the task folder's `build_<task>` function, which `from_recipe` builds
        with, and the architecture names `kseq.zoo.<task>(name)` accepts."""
        cls.builder = staticmethod(builder)
        cls.architectures = tuple(architectures)

    @classmethod
    def merged_recipe(cls, base, *overrides):
        """`base` with `overrides` merged right-most wins (a task may say how its keys
        replace each other).

        Example:
        >>> import kseq
        >>> base = kseq.models.SequenceTagger.default_recipe("rnn")
        >>> kseq.models.SequenceTagger.merged_recipe(base, {"model": {"hidden_dim": 8}})["model"]
        {'encoder': 'rnn', 'hidden_dim': 8}
        """
        return merge(base, *overrides)

    @classmethod
    def default_recipe(cls, architecture):
        """The recipe of a bare architecture name: no data, default training.

        Example:
        >>> import kseq
        >>> kseq.models.SequenceTagger.default_recipe("rnn")["tokenizer"]
        {'kind': 'char'}
        """
        return {"task": cls.preset_task, "model": {cls.architecture_key: architecture},
                "tokenizer": {"kind": cls.tokenizer_kind}, "training": {}}

    @classmethod
    def describe(cls, recipe):
        """The architecture column of `kseq presets` for a recipe of this task."""
        model = recipe.get("model") or {}
        return str(model.get(cls.architecture_key, "-"))

    @classmethod
    def reads_images(cls, recipe):
        """Whether a recipe's model reads images (its data: `image path<TAB>target` lines)."""
        return False

    @classmethod
    def table_rows(cls, path, columns=None, skipped=None):
        """A training file's `(line, input, target)` rows, one at a time (here: two
        columns, `kseq.data.pipeline.parallel_text.iter_table_rows`)."""
        from kseq.data.pipeline.parallel_text import iter_table_rows

        return iter_table_rows(path, columns, skipped=skipped)

    @classmethod
    def held_out_key(cls, source, target):
        """What a file row's split is hashed from (here: its input, so one input never
        lands in two splits)."""
        return source

    @classmethod
    def check_training_rows(cls, recipe, rows, path):
        """Checks a training file's `(line, input, target)` rows (1-based lines) before they
        are split, raising `KseqError` that names `path` and the line (here: nothing)."""

    @classmethod
    def from_preset(cls, name, load_weights=True):
        """A shipped preset's model, by keras-hub's convention.

        `load_weights=True` gives the trained model (weights checked against
        the catalog's SHA-256); False the same architecture and vocabulary,
        freshly initialised. A preset without weights says so:
        `kseq.zoo.<task>(name, load_weights=False)` builds it from its data,
        `kseq train NAME` trains it.

        Example:
        >>> import kseq
        >>> kseq.models.Translator.from_preset("numbers_fr_transformer").translate(["nine"])
        ['neuf']
        """
        task = preset_recipe(name).get("task", "translator")
        if cls.preset_task and task != cls.preset_task:
            raise KseqError(f"{canonical_name(name)!r} is a {task} preset, not a "
                            f"{cls.preset_task} one. Received: {cls.__name__}.from_preset"
                            f"({name!r})")
        if not load_weights and not has_weights(name):
            raise KseqError(f"The preset {canonical_name(name)!r} ships no trained model to "
                            f"take the vocabulary from: `kseq.zoo.{task}({canonical_name(name)!r}"
                            f", load_weights=False)` builds it from its data. Received: "
                            f"load_weights=False")
        model = load_preset_model(name)
        if load_weights:
            return model
        fresh = type(model).from_config(model.get_config())  # new initial weights
        fresh.recipe = model.recipe
        return fresh.compile_from_recipe(model.recipe.get("training", {}))

    def compile_from_recipe(self, training):
        """Compiles with the recipe's `training` section; returns the model.

        Keys (all optional): `peak_learning_rate` (1e-3), `warmup_steps`
        (1000), `clipnorm` (1.0; null turns clipping off), `label_smoothing`
        (0.1), `jit_compile` (False).
        """
        schedule = WarmupInverseSqrt(training.get("peak_learning_rate", 1e-3),
                                     training.get("warmup_steps", 1000))
        self.compile(
            optimizer=FusedAdam(schedule, beta_1=0.9, beta_2=0.98, epsilon=1e-9,
                                clipnorm=training.get("clipnorm", 1.0)),
            loss=MaskedSparseCrossEntropy(training.get("label_smoothing", 0.1),
                                          pad_id=self.label_pad_id,
                                          class_weights=self.class_weights(training)),
            metrics=[MaskedAccuracy(pad_id=self.label_pad_id)],
            jit_compile=bool(training.get("jit_compile", False)),
        )
        # `preprocessor.training_dataset(pairs)` batches as the recipe does.
        self.preprocessor.training_defaults = {
            key: training[key] for key in ("boundaries", "batch_size", "token_budget")
            if key in training}
        return self

    def class_weights(self, training):
        """Per-class loss weights from the recipe's `training` section, or None (here)."""
        return None

    def validation_callback(self, examples, training, verbose=True):
        """A callback that scores `examples` each epoch (with a `history` list), or None.

        Here: `validation_score` of `evaluate(pairs)` on at most
        `training["validation_subset"]` (500; 0 turns it off) examples, logged
        as `val_<score>`; None when the task names no score.
        """
        subset = training.get("validation_subset", 500)
        if self.validation_score is None or not subset:
            return None
        return ValidationScoreCallback(examples, self.validation_score, subset=subset,
                                       verbose=verbose)

    def training_examples(self, examples):
        """Tokenised training examples -> what the model trains on (here: unchanged).

        A task may replace inputs by something cheaper that gives the same
        result (a captioner with a frozen backbone: its features).
        """
        return examples

    def inference_logits(self, inputs):
        """The model's output on `inputs` in inference mode.

        Called eagerly (`predict_labels`, `tag`), it runs one cached
        `tf.function` of the model (several times faster than an eager call,
        which runs op by op; never XLA, whatever the compile state, since each
        new input width would compile anew); inside a graph (an export's
        endpoint) it is the plain call.
        """
        if not tf.executing_eagerly():
            return self(inputs, training=False)
        forward = self.__dict__.get("_inference_forward")  # untracked: not saved
        if forward is None:  # an object, not a lambda: see `_InferenceCall`
            forward = tf.function(_InferenceCall(self), reduce_retracing=True,
                                  jit_compile=False, autograph=False)
            self.__dict__["_inference_forward"] = forward
        return forward(inputs)

    def fit(self, x=None, y=None, *args, **kwargs):
        """Keras's `fit`, which also trains on raw examples through the preprocessor.

        `fit(pairs)`, `fit(x=inputs, y=targets)` and `validation_data=pairs` train
        on the preprocessor's `training_dataset` with the recipe's batching
        (`kseq.models.raw_examples.fit_arguments`). Model inputs (a dataset,
        arrays) are Keras's own; on a dataset `shuffle` defaults to False (Keras
        never shuffles one; kseq's `training_dataset` shuffles itself).

        Example:
        >>> import kseq
        >>> pairs = [("great film", "positive"), ("dull film", "negative")]
        >>> model = kseq.zoo.classifier("rnn", train_data=pairs, hidden_dim=8)
        >>> sorted(model.fit(pairs, verbose=0).history)  # or x=texts, y=labels
        ['loss', 'masked_accuracy']
        """
        x, y, options = fit_arguments(self, x, y, args, kwargs)
        self._build_optimizer()
        return super().fit(x, y, **options)

    def _build_optimizer(self):
        """Creates the optimizer's variables before the first train step is traced.

        Keras creates them inside that trace, and TensorFlow then traces the step
        a second time (a `tf.function` may create variables in its first trace
        only): built here, the first `fit` of a fresh model traces once. Same
        values (zero moments, step 0); a model not built yet is left to Keras.
        """
        optimizer = getattr(self, "optimizer", None)
        if optimizer is None or optimizer.built or not self.built or not self.trainable_variables:
            return
        with self.distribute_strategy.scope():
            optimizer.build(self.trainable_variables)

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """Keras's `predict`; raw examples go through the preprocessor (`predict_raw`).

        A task with `predict_raw` (classifier: probabilities `[N, C]`; tagger:
        `[N, W, C]`) reads a list or 1-D array of texts (or, for an image
        classifier, encoded images or file paths) in batches of `batch_size`
        (default 256, as `predict_labels`), without a progress bar. Model
        inputs (token ids, dicts, image tensors, datasets) are Keras's own
        `predict`, unchanged: the model's outputs (logits).
        """
        examples = raw_examples(x) if hasattr(self, "predict_raw") else None
        if examples is None:
            return super().predict(x, batch_size, verbose, steps, callbacks)
        if steps is not None or callbacks:
            raise KseqError(f"`steps` and `callbacks` belong to Keras's loop over model inputs; "
                            f"{type(self).__name__}.predict reads raw examples in batches of "
                            f"`batch_size`. Received: steps={steps!r}, callbacks={callbacks!r}")
        return self.predict_raw(examples, 256 if batch_size is None else batch_size)

    def predict_on_batch(self, x):
        """Keras's `predict_on_batch`; raw examples as in `predict`, as one batch."""
        examples = raw_examples(x) if hasattr(self, "predict_raw") else None
        if examples is None:
            return super().predict_on_batch(x)
        return self.predict_raw(examples, max(len(examples), 1))

    def evaluate(self, x=None, y=None, *args, **kwargs):
        """The task's scores on `(input, reference)` pairs; otherwise Keras's `evaluate`.

        `model.evaluate(pairs, **options)`, with `pairs` a list of `(input,
        reference)` tuples (a translator's `(source, target)` strings, a
        classifier's `(text, label)`, a tagger's `(words, tags)`), returns an
        `EvaluationResult`: the scores as a mapping, `summary()` one line,
        `to_dict()` for JSON. The options are the task's (`evaluate_pairs`).
        Any other call (a `tf.data.Dataset`, arrays, `x` and `y`, Keras's
        keyword arguments) is Keras's `Model.evaluate`, unchanged: the loss and
        compiled metrics on model inputs, as `fit(validation_data=...)` uses.
        """
        if y is None and not args and is_pairs(x):
            return self.evaluate_pairs(x, **kwargs)
        return super().evaluate(x, y, *args, **kwargs)

    def evaluate_pairs(self, pairs, **options):
        """`evaluate(pairs)` of this task: an `EvaluationResult` (a task that scores pairs
        defines it; the base has no score to give)."""
        raise KseqError(f"{type(self).__name__} has no score for (input, reference) pairs; "
                        f"evaluate it on model inputs (a tf.data.Dataset). Received: "
                        f"{len(pairs)} pairs")

    def export(self, filepath, format="tf_saved_model", **options):
        """Writes the task's `serving_spec(**options)` into `filepath` (a version directory)."""
        if format != "tf_saved_model" or not hasattr(self, "serving_spec"):
            return super().export(filepath, format=format, **options)
        from kseq.export import export_saved_model

        return export_saved_model(self, filepath, **options)

    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": keras.dtype_policies.serialize(self.dtype_policy)}
        for name in _constructor_arguments(type(self)):
            value = getattr(self, name)
            if hasattr(value, "get_config"):
                value = keras.saving.serialize_keras_object(value)
            config[name] = value
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        for name, value in config.items():
            if name != "dtype" and _is_serialized_object(value):
                config[name] = keras.saving.deserialize_keras_object(value)
        return cls(**config)

    def train_step(self, data):
        """Keras's step, with the projection on real label rows where it cannot change a result."""
        logs, reason = real_rows_train_step(self, data)
        if logs is not None:
            return logs
        said = self.__dict__.setdefault("_fallback_reasons_logged", set())
        if reason not in said:
            said.add(reason)
            logger.info("%s trains with Keras's own step: %s.", type(self).__name__, reason)
        return super().train_step(padding_as_weights(self, data))

    def test_step(self, data):
        """Keras's step (for another loss than kseq's, `padding_as_weights` first)."""
        return super().test_step(padding_as_weights(self, data))
