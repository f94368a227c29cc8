"""`Captioner`: an image encoder, a decoder and a `CaptionerPreprocessor`, composed.

Shape letters: `B` batch, `H`, `W` image size, `S` memory positions (grid
cells), `T` caption length, `V` vocabulary, `N` rows in a search step.
"""

import os

import keras
import numpy as np
import tensorflow as tf  # tf.data for the cached features

from kseq.text.language_tags import language_tag, languages_in
from kseq.errors import KseqError
from kseq.models.encoder_decoder_task import EncoderDecoderTask
from kseq.models.recipes import build_data, make_tokenizer


# A logit no search picks (finite, so log-softmax stays finite).
BANNED_LOGIT = -1e9


def _without_tag(outputs, tag):
    """Removes the forced language tag from every caption of `generate`'s outputs."""
    if isinstance(outputs, str):
        return outputs[len(tag):].lstrip() if outputs.startswith(tag) else outputs
    if isinstance(outputs, tuple):  # (caption(s), scores, ...)
        return (_without_tag(outputs[0], tag), *outputs[1:])
    return [_without_tag(output, tag) for output in outputs]


@keras.saving.register_keras_serializable(package="kseq")
class Captioner(EncoderDecoderTask):
    """Image to text: `{"images" [B, H, W, 3] uint8, "decoder_ids" [B, T]} -> logits [B, T, V]`.

    The image encoder's memory is the same dict a text encoder gives, so every
    decoder and every search of kseq works unchanged: a Transformer decoder
    cross-attends over the grid; an attention RNN decoder ("Show, Attend and
    Tell") starts from the mean feature and attends over the grid. Images are
    decoded by the preprocessor inside the graph (`kseq.data.pipeline.image_decoding`),
    in training, in `caption()` and in the exported model alike.
    `kseq.zoo.captioner` builds one from a few choices.

    Args:
        encoder: a `kseq.models.encoders.ImageEncoder`.
        decoder: a `TransformerDecoder` (cross-attention) or an `RnnDecoder`.
        preprocessor: a `CaptionerPreprocessor`.

    Example:
    >>> import numpy as np, kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["a red circle"])
    >>> encoder = kseq.models.encoders.ImageEncoder(kseq.layers.SmallCnn((8,)), (8, 8),
    ...                                             hidden_dim=8)
    >>> decoder = kseq.models.decoders.TransformerDecoder(
    ...     tok.vocabulary_size, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
    ...     max_length=8)
    >>> model = kseq.models.Captioner(encoder, decoder,
    ...                               kseq.models.CaptionerPreprocessor(tok, (8, 8), 8))
    >>> len(model.caption([np.zeros((5, 5, 3), np.uint8)], beam_size=2))
    1
    """

    preset_task = "captioner"
    source_name = "images"

    @classmethod
    def source_input(cls, preprocessor):
        return keras.Input(shape=(*preprocessor.image_size, 3), dtype="uint8",
                           name=cls.source_name)

    def __init__(self, encoder, decoder, preprocessor, **kwargs):
        if list(encoder.image_size) != list(preprocessor.image_size):
            raise ValueError("The encoder and the preprocessor must agree on the image size. "
                             f"Received: encoder image_size={list(encoder.image_size)}, "
                             f"preprocessor image_size={list(preprocessor.image_size)}")
        super().__init__(encoder, decoder, preprocessor, **kwargs)

    @property
    def image_size(self):
        return self.preprocessor.image_size

    # === Step protocol (encode, initial_state: see EncoderDecoderTask) ===

    def step(self, token_ids, state, memory, t):
        """One decoding step: `[N]` ids at position `t` -> `(logits [N, V] float32, state)`.

        A multilingual captioner's language tags are ruled out after the first
        token (a tag only ever starts a caption), so no search emits one mid-caption.
        """
        logits, state = super().step(token_ids, state, memory, t)
        tags = self._tag_mask()
        if tags is not None:
            banned = keras.ops.logical_and(keras.ops.greater(t, 0), tags)  # [V]
            logits = keras.ops.where(banned[None, :], BANNED_LOGIT, logits)
        return logits, state

    def _tag_mask(self):
        """`[V]` bool constant, True at the language tags' ids; None without tags."""
        if not hasattr(self, "_tags"):
            tags = {language_tag(language) for language in self.languages}
            vocabulary = self.target_tokenizer.vocabulary
            self._tags = None if not tags else np.array([token in tags for token in vocabulary])
        return self._tags

    # === Training hooks (see kseq.models.task) ===

    def encoder_memory(self, inputs, training=None):
        """The memory of `inputs["images"]` (augmented in training), or of
        `inputs["features"]`: a frozen backbone's grid, computed once (`cached_features`)."""
        if "features" in inputs:
            return self.encoder.memory_from_features(inputs["features"], training=training)
        return super().encoder_memory(inputs, training)

    def cached_features(self, examples):
        """Training examples with the frozen backbone's grid in place of the pixels.

        With `trainable_backbone=False` the backbone's output depends on the
        image alone, so it is computed once here instead of at every step:
        `{"images", "decoder_ids"}` examples become `{"features" [h, w, C],
        "decoder_ids"}` ones, which `fit` (and `kseq train`, which calls this)
        trains on at the cost of the projection and the decoder. They train
        through kseq's train step (`hidden_states` reads either input); the
        functional graph itself takes images, so with `jit_compile=True`
        (Keras's step), a trainable backbone, or augmentation (new pixels each
        step), `examples` come back unchanged.
        """
        encoder = self.encoder
        if encoder.trainable_backbone or encoder.augmentation or self.jit_compile:
            return examples

        def replace(features, labels):  # one example: a batch of one through the backbone
            features = dict(features)
            pixels = features.pop("images")[None]  # [1, H, W, 3]
            features["features"] = encoder.backbone_features(pixels, False)[0]
            return features, labels

        return examples.map(replace, num_parallel_calls=tf.data.AUTOTUNE)

    def training_examples(self, examples):
        """What `kseq train` trains on: `cached_features(examples)`."""
        return self.cached_features(examples)

    # === Images in, text out ===

    def check_generate_inputs(self, inputs):
        """Files, bytes or uint8 arrays -> encoded bytes; `KseqError` naming a bad one."""
        return self.preprocessor.encode_inputs(inputs)

    def raw_input(self, value):
        return bytes(value)

    @property
    def languages(self):
        """The caption languages this captioner was trained on (tags in its vocabulary,
        see `kseq.data.datasets.multilingual_captions`); empty for a one-language captioner."""
        return languages_in(self.target_tokenizer.vocabulary)

    def caption(self, images, beam_size=4, length_penalty="gnmt", alpha=0.6, n_best=1,
                batch_size=64, xla=False, return_scores=False, language=None,
                **search_options):
        """Captions a list of images; returns `list[str]` (`list[list[str]]` for n_best > 1).

        Args:
            images: file paths, encoded bytes (PNG, JPEG, GIF, BMP, WebP) or
                uint8 arrays `[H, W]` / `[H, W, 1|3|4]`, in a list; or one
                uint8 array `[B, H, W, C]`. Float arrays are refused (their
                scale is ambiguous).
            beam_size: 1 is greedy search; `sampling=True` samples (see
                `GenerativeTask.generate` for every search option).
            return_scores: each item becomes `(caption, scores)`.
            language: for a multilingual captioner (`languages`), the language
                to caption in: its tag is forced as the first token, and left
                out of the returned captions.

        One image (a file path or encoded `bytes`) is captioned as a list of
        one, and its one item returned (a `str` for n_best 1).

        Raises:
            KseqError: naming the file or row of an image that cannot be read,
                or a language the captioner was not trained on.
        """
        if isinstance(images, (str, bytes, os.PathLike)):
            return self.caption([images], beam_size, length_penalty, alpha, n_best, batch_size,
                                xla, return_scores, language, **search_options)[0]
        if language is None:
            return self.generate(images, beam_size=beam_size, length_penalty=length_penalty,
                                 alpha=alpha, n_best=n_best, batch_size=batch_size, xla=xla,
                                 return_scores=return_scores, **search_options)
        tag = language_tag(language)
        if language not in self.languages:
            raise KseqError(f"This captioner captions in {self.languages or 'one language'} "
                            f"only. Received: language={language!r}")
        outputs = self.generate(images, beam_size=beam_size, length_penalty=length_penalty,
                                alpha=alpha, n_best=n_best, batch_size=batch_size, xla=xla,
                                return_scores=return_scores, prompts=[tag] * len(images),
                                **search_options)
        return _without_tag(outputs, tag)

    def serving_spec(self, beam_size=4, n_best=1, length_penalty="gnmt", alpha=0.6,
                     max_length=None, xla=False):
        """What `export` writes: encoded image bytes in, captions out (`serving_default`);
        see `kseq.models.captioner.serving`."""
        from kseq.models.captioner.serving import captioner_serving_spec

        return captioner_serving_spec(self, beam_size=beam_size, n_best=n_best,
                                      length_penalty=length_penalty, alpha=alpha,
                                      max_length=max_length, xla=xla)

    def plot_attention(self, image, path):
        """Writes the image with the attention of each caption word over it as a PNG.

        Returns `(words, weights [T, h, w])`. See `kseq.models.captioner.image_attention_plot`.
        """
        from kseq.models.captioner.image_attention_plot import plot_image_attention

        return plot_image_attention(self, image, path)

    # === Recipes and the command line (see kseq.models.task) ===

    cli_verbs = ("caption", "evaluate", "export")
    export_options = ("beam_size", "n_best", "xla", "length_penalty", "alpha", "max_length")

    @classmethod
    def describe(cls, recipe):
        """`"<image encoder>+<decoder>"`, e.g. `"small_cnn+transformer"`."""
        model = recipe.get("model") or {}
        return f"{model.get('encoder', 'small_cnn')}+{model.get('decoder', 'transformer')}"

    @classmethod
    def reads_images(cls, recipe):
        return True

    @classmethod
    def from_recipe(cls, recipe, train_data=None, vocab=None):
        """The compiled captioner `recipe` describes (`build_captioner` of its `model`).

        Args:
            recipe: a recipe dict (`model`, `tokenizer`, `training`, optional `data`).
            train_data: `(encoded image, caption)` pairs the vocabulary is built
                from; default: the train split of the recipe's data builder,
                when `vocab` is missing.
            vocab: a tokenizer, token list or vocabulary file.

        Example:
        >>> import kseq
        >>> recipe = {"task": "captioner", "model": {"decoder": "attention", "image_size": 16,
        ...                                          "hidden_dim": 8, "filters": [8]}}
        >>> model = kseq.models.Captioner.from_recipe(recipe, [(b"<png bytes>", "a red dot")])
        >>> type(model.decoder).__name__, model.target_tokenizer.vocabulary_size
        ('RnnDecoder', 7)
        """
        if train_data is None and vocab is None and "data" in recipe:
            train_data = build_data(recipe)["train"]
        options = dict(recipe.get("model") or {})
        options.pop("arch", None)
        captions = [caption for _, caption in train_data] if train_data else None
        tokenizer = make_tokenizer(vocab, recipe.get("tokenizer"), captions)
        model = cls.builder(tokenizer, **options)
        model.recipe = recipe
        return model.compile_from_recipe(recipe.get("training", {}))
