"""`SequenceClassifier`: an encoder, a pooling and a softmax head: N -> 1.

Shape letters: `B` batch, `S` input length (or image grid cells), `E`
encoder width, `C` classes, `H`, `W` image size.
"""

import os

import keras
import numpy as np
import tensorflow as tf  # string constants for the preprocessor
from keras import ops

from kseq.arguments import check_float, check_int, check_texts
from kseq.errors import KseqError
from kseq.layers.sequence_pooling import SequencePooling
from kseq.models.classifier.training_labels import check_label_rows, recipe_labels
from kseq.models.evaluation_result import EvaluationResult
from kseq.models.part import check_room
from kseq.models.part_catalog import encoder_names
from kseq.models.recipes import balanced_class_weights, build_data, make_tokenizer
from kseq.models.task import Task


def _model_input(preprocessor):
    """The functional input: token ids for text, uint8 pixels for images."""
    if preprocessor.input_kind == "images":
        return keras.Input(shape=(*preprocessor.image_size, 3), dtype="uint8", name="images")
    return keras.Input(shape=(None,), dtype="int32", name="token_ids")


def _check_input_kinds(encoder, preprocessor):
    """An image encoder needs the image preprocessor (same size), a text encoder the text one."""
    image_encoder = hasattr(encoder, "image_size")
    if image_encoder != (preprocessor.input_kind == "images"):
        raise KseqError(f"The encoder and the preprocessor must read the same input: "
                        f"{type(encoder).__name__} with {type(preprocessor).__name__}. Received: "
                        f"{type(encoder).__name__}, {type(preprocessor).__name__}")
    if image_encoder and list(encoder.image_size) != list(preprocessor.image_size):
        raise KseqError(f"The encoder and the preprocessor must agree on the image size. "
                        f"Received: {list(encoder.image_size)} and "
                        f"{list(preprocessor.image_size)}")


@keras.saving.register_keras_serializable(package="kseq")
class SequenceClassifier(Task):
    """Text or image to class: `{"token_ids" [B, S]}` (or `{"images" [B, H, W, 3]}`)
    -> logits `[B, C]`.

    Any encoder of `kseq.models.encoders` (its memory pooled by
    `kseq.layers.SequencePooling`: `"mean"`, `"max"` or `"attention"` for every
    encoder, `"last"` for an RNN's final states), dropout and a `Dense` head.
    With an `ImageEncoder` and an `ImageClassifierPreprocessor` the same class
    is an image classifier (pooling over the backbone's grid cells). The label
    names live in the preprocessor, so a saved model answers with names.
    Labels have no padding id: batches' padding rows hold -1, which the loss
    and metrics skip. `kseq.zoo.classifier` builds one from a recipe.

    Args:
        encoder: a text encoder (`TransformerEncoder`, `RnnEncoder`,
            `ConvEncoder`) or an `ImageEncoder`.
        preprocessor: a `ClassifierPreprocessor` (tokenizer, label names) for
            text, an `ImageClassifierPreprocessor` for images.
        pooling: `"mean"`, `"max"`, `"attention"` or `"last"`.
        dropout: on the pooled vector, in training.

    Example:
    >>> import kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["great film", "dull film"])
    >>> encoder = kseq.models.encoders.RnnEncoder(tok.vocabulary_size, embedding_dim=8, units=8)
    >>> model = kseq.models.SequenceClassifier(
    ...     encoder, kseq.models.ClassifierPreprocessor(tok, ["negative", "positive"], 16))
    >>> label, probability = model.predict_labels(["great film"])[0]
    >>> label in ("negative", "positive"), 0.0 < probability < 1.0
    (True, True)
    """

    preset_task = "classifier"
    targets_are_labels = True

    label_pad_id = -1  # class labels have no padding id

    def __init__(self, encoder, preprocessor, pooling="mean", dropout=0.1, **kwargs):
        check_float("dropout", dropout, minimum=0.0, maximum=1.0)
        _check_input_kinds(encoder, preprocessor)
        check_room(encoder, "encoder", preprocessor, "max_length")
        pool = SequencePooling(pooling, dtype=kwargs.get("dtype"), name="pooling")
        dropout_layer = keras.layers.Dropout(dropout, name="head_dropout")
        head = keras.layers.Dense(preprocessor.num_classes, dtype=kwargs.get("dtype"), name="head")
        # === Functional graph (through the parts' sublayers: see kseq.models.task) ===
        inputs = _model_input(preprocessor)
        logits = ops.cast(head(dropout_layer(pool(encoder.call(inputs)))), "float32")
        super().__init__(inputs={inputs.name: inputs}, outputs=logits, **kwargs)
        # === Config ===
        self.encoder = encoder
        self.preprocessor = preprocessor
        self.pooling = pooling
        self.dropout = dropout
        self.pool, self.dropout_layer, self.head = pool, dropout_layer, head

    @property
    def label_names(self):
        return self.preprocessor.label_names

    @property
    def input_name(self):
        """`"token_ids"` (text) or `"images"`: the model's one input."""
        return "images" if self.preprocessor.input_kind == "images" else "token_ids"

    def class_weights(self, training):
        """`training["class_weight"]`: `{label name: weight}` (missing names weigh 1) or a
        list in class order; None for none. `from_recipe` turns "balanced" into
        `N / (C · count)` per class from the training pairs."""
        weights = training.get("class_weight")
        if weights is None:
            return None
        if isinstance(weights, dict):
            unknown = sorted(set(weights) - set(self.label_names))
            if unknown:
                raise KseqError(f"`class_weight` names labels the model does not have "
                                f"({self.label_names}). Received: {unknown}")
            return [float(weights.get(name, 1.0)) for name in self.label_names]
        if not isinstance(weights, (list, tuple)) or len(weights) != len(self.label_names):
            raise KseqError(f"`class_weight` must be a dict of label weights or a list of "
                            f"{len(self.label_names)} numbers. Received: {weights!r}")
        return [float(w) for w in weights]

    # === Training hooks (see kseq.models.task) ===

    def hidden_states(self, inputs, training=None):
        """The pooled vector `[B, E]` (after dropout), before the head."""
        memory = self.encoder.call(inputs[self.input_name], training=training)
        return self.dropout_layer(self.pool(memory), training=training)

    def project(self, states):
        return ops.cast(self.head(states), "float32")

    # === Text in, labels out ===

    def checked_inputs(self, inputs):
        """Texts (a list of strings), or images (files, bytes, uint8 arrays) -> what the
        preprocessor reads; `KseqError` naming a bad one."""
        if self.preprocessor.input_kind == "images":
            return self.preprocessor.encode_inputs(inputs)
        return check_texts("texts", inputs)

    def probabilities(self, inputs, batch_size=256):
        """`[N, C]` class probabilities (numpy) and `empty [N]` (texts without a token)."""
        inputs = self.checked_inputs(inputs)
        batch_size = check_int("batch_size", batch_size)
        rows, empty = [], []
        for begin in range(0, len(inputs), batch_size):
            chunk = tf.constant(inputs[begin:begin + batch_size], tf.string)
            model_inputs = self.preprocessor.inference_inputs(chunk)
            logits = self.inference_logits({self.input_name: model_inputs[self.input_name]})
            rows.append(ops.convert_to_numpy(ops.softmax(logits, axis=-1)))
            empty.append(model_inputs["empty"].numpy())
        if not rows:
            return np.zeros((0, self.preprocessor.num_classes), "float32"), np.zeros(0, bool)
        return np.concatenate(rows), np.concatenate(empty)

    def predict_raw(self, inputs, batch_size=256):
        """`predict` on raw inputs: `[N, C]` float32 class probabilities, those
        `predict_labels` reports (and the exported model's `probabilities`); a
        text without any token gets a row of 0. See `kseq.models.Task.predict`.

        Example:
        >>> import kseq
        >>> tok = kseq.text.WordTokenizer.build_vocabulary(["great film", "dull film"])
        >>> encoder = kseq.models.encoders.RnnEncoder(tok.vocabulary_size, embedding_dim=8,
        ...                                           units=8)
        >>> model = kseq.models.SequenceClassifier(
        ...     encoder, kseq.models.ClassifierPreprocessor(tok, ["negative", "positive"], 16))
        >>> probabilities = model.predict(["great film", ""])
        >>> probabilities.shape, round(float(probabilities[0].sum()), 4), probabilities[1].tolist()
        ((2, 2), 1.0, [0.0, 0.0])
        """
        probabilities, empty = self.probabilities(inputs, batch_size)
        probabilities[empty] = 0.0
        return probabilities

    def predict_labels(self, inputs, top_k=1, batch_size=256):
        """`(label, probability)` per input, or the `top_k` best pairs as a list.

        `inputs`: texts, or for an image classifier file paths, encoded bytes
        or uint8 arrays (an image that does not decode is refused, named).
        A text without any token (empty, or only spaces) has no label:
        `("", 0.0)` (and `top_k` of them), as the exported model answers.
        One input (a `str`, `bytes` or file path) is answered as a list of one,
        and its one item returned.
        """
        if isinstance(inputs, (str, bytes, os.PathLike)):
            return self.predict_labels([inputs], top_k, batch_size)[0]
        top_k = check_int("top_k", top_k, maximum=self.preprocessor.num_classes)
        probabilities, empty = self.probabilities(inputs, batch_size)
        results = []
        for row, is_empty in zip(probabilities, empty):
            best = np.argsort(-row, kind="stable")[:top_k]
            pairs = [("", 0.0) if is_empty else (self.label_names[i], float(row[i]))
                     for i in best]
            results.append(pairs if top_k > 1 else pairs[0])
        return results

    def evaluate_labels(self, pairs, plot=None, batch_size=256):
        """Accuracy, macro-F1, per-class F1 and the confusion matrix on `(input, label)` pairs.

        See `kseq.metrics.classification_scores`; `plot` names a PNG for the
        confusion matrix (matplotlib).
        """
        from kseq.metrics.classification_scores import classification_scores, plot_confusion

        pairs = list(pairs)
        truth = self.preprocessor.check_labels([label for _, label in pairs])
        probabilities, _ = self.probabilities([value for value, _ in pairs], batch_size)
        scores = classification_scores(truth, probabilities.argmax(axis=1).tolist(),
                                       self.label_names)
        if plot:
            plot_confusion(scores["confusion_matrix"], self.label_names, plot)
        return scores

    def serving_spec(self):
        """What `export` writes: strings (or image bytes) in, `label`/`label_id`/
        `probabilities` out; see `kseq.models.classifier.serving`."""
        from kseq.models.classifier.serving import classifier_serving_spec

        return classifier_serving_spec(self)

    # === Recipes, evaluation and the command line (see kseq.models.task) ===

    cli_verbs = ("classify", "evaluate", "export")
    evaluate_options = ("plot",)
    validation_score = "accuracy"  # logged each epoch of `kseq train` as val_accuracy

    def evaluate_pairs(self, pairs, plot=None, batch_size=256):
        """`evaluate(pairs)`: `evaluate_labels` as an `EvaluationResult`, summarised as
        `accuracy 0.912 macro-F1 0.897 (500 examples)`."""
        scores = self.evaluate_labels(pairs, plot=plot, batch_size=batch_size)
        return EvaluationResult(scores, [("accuracy", "accuracy"), ("macro-F1", "macro_f1")],
                                count="examples")

    @classmethod
    def describe(cls, recipe):
        """`"<encoder>+<pooling>"`, e.g. `"rnn+attention"`."""
        model = recipe.get("model") or {}
        return f"{model.get('encoder', 'transformer')}+{model.get('pooling', 'mean')}"

    @classmethod
    def reads_images(cls, recipe):
        """True for an image encoder (the part catalog's `encoder_names("image")`)."""
        return (recipe.get("model") or {}).get("encoder") in encoder_names("image")

    @classmethod
    def check_training_rows(cls, recipe, rows, path):
        """Each label must be in the recipe's `model.label_names` when it lists them; a
        label seen once warns (`kseq.models.classifier.training_labels`)."""
        check_label_rows(recipe_labels(recipe), rows, path)

    @classmethod
    def from_recipe(cls, recipe, train_data=None, vocab=None, labels=None):
        """The compiled classifier `recipe` describes (`build_classifier` of its `model`).

        Args:
            recipe: a recipe dict (`model`, `tokenizer`, `training`, optional `data`).
            train_data: `(text, label)` or `(encoded image, label)` pairs;
                default: the train split of the recipe's data builder, when the
                labels or (for text) the vocabulary are missing.
            vocab: a tokenizer, token list or vocabulary file (text only).
            labels: the classes in id order; default: the recipe's
                `model.label_names`, else the sorted labels of `train_data`.
                `training.class_weight: "balanced"` weighs each class by
                `N / (C · count)` in `train_data`.

        Example:
        >>> import kseq
        >>> recipe = {"task": "classifier", "model": {"encoder": "rnn", "hidden_dim": 8}}
        >>> pairs = [("great film", "positive"), ("dull film", "negative")]
        >>> kseq.models.SequenceClassifier.from_recipe(recipe, pairs).label_names
        ['negative', 'positive']
        """
        images = cls.reads_images(recipe)
        labels = recipe_labels(recipe) if labels is None else labels
        if train_data is None and (labels is None or (vocab is None and not images)) \
                and "data" in recipe:
            train_data = build_data(recipe)["train"]
        if labels is None:
            if not train_data:
                raise KseqError("Pass `labels` or training pairs to read them from. "
                                "Received: neither")
            labels = sorted({str(label) for _, label in train_data})
        texts = [text for text, _ in train_data] if train_data and not images else None
        tokenizer = None if images else make_tokenizer(vocab, recipe.get("tokenizer"), texts)
        options = {k: v for k, v in (recipe.get("model") or {}).items() if k != "label_names"}
        model = cls.builder(tokenizer, labels, **options)
        model.recipe = recipe
        training = dict(recipe.get("training", {}))
        if training.get("class_weight") == "balanced":
            training["class_weight"] = balanced_class_weights(train_data, labels)
        return model.compile_from_recipe(training)
