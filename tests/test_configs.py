"""Every registered kseq class stores each constructor argument in its config.

`set(get_config()) ⊇ set(signature(__init__)) - {"self", "kwargs"}`, so a saved
model rebuilds with the arguments it was made with. A newly registered class
must be added to `EXAMPLES`.
"""

import inspect

import keras
import pytest

import kseq

TOKENIZER = kseq.text.WordTokenizer.build_vocabulary(["one two three"])
CHARS = kseq.text.CharTokenizer.build_vocabulary(["one two"])

EXAMPLES = {
    "ApplicationBackbone": lambda: kseq.layers.ApplicationBackbone("MobileNetV3Small", (32, 32)),
    "AttentionDecoder": lambda: kseq.layers.AttentionDecoder(4),
    "AttentionDecoderCell": lambda: kseq.layers.AttentionDecoderCell(4),
    "BahdanauAttention": lambda: kseq.layers.BahdanauAttention(4),
    "BeamSearchDecoder": lambda: kseq.decoding.BeamSearchDecoder(),
    "Captioner": lambda: kseq.models.build_captioner(TOKENIZER, image_size=16, hidden_dim=8,
                                                     num_heads=2, filters=[4]),
    "CaptionerPreprocessor": lambda: kseq.models.CaptionerPreprocessor(TOKENIZER, (8, 8), 8),
    "ClassifierPreprocessor": lambda: kseq.models.ClassifierPreprocessor(TOKENIZER, ["a", "b"]),
    "ConvDecoder": lambda: kseq.models.decoders.ConvDecoder(7),
    "ConvDecoderBlock": lambda: kseq.layers.ConvDecoderBlock(4, 4),
    "ConvEncoder": lambda: kseq.models.encoders.ConvEncoder(7),
    "ConvEncoderBlock": lambda: kseq.layers.ConvEncoderBlock(4),
    "EfficientNetLite0": lambda: kseq.layers.EfficientNetLite0(),
    "FeedForward": lambda: kseq.layers.FeedForward(8),
    "GatedConvolution": lambda: kseq.layers.GatedConvolution(4),
    "GridPositionEmbedding": lambda: kseq.layers.GridPositionEmbedding(),
    "ImageClassifierPreprocessor": lambda: kseq.models.ImageClassifierPreprocessor(["a", "b"],
                                                                                   (8, 8)),
    "ImageEncoder": lambda: kseq.models.encoders.ImageEncoder(kseq.layers.SmallCnn([4]), (8, 8)),
    "LanguageModel": lambda: kseq.models.build_language_model(
        "gru", TOKENIZER, categories=["a"], max_length=8, hidden_dim=4),
    "LanguageModelPreprocessor": lambda: kseq.models.LanguageModelPreprocessor(TOKENIZER, 8,
                                                                               ["a"]),
    "LearnedPositionEmbedding": lambda: kseq.layers.LearnedPositionEmbedding(8),
    "LuongAttention": lambda: kseq.layers.LuongAttention(),
    "MaskedAccuracy": lambda: kseq.metrics.MaskedAccuracy(),
    "MaskedSparseCrossEntropy": lambda: kseq.metrics.MaskedSparseCrossEntropy(),
    "MultiHeadSelfAttention": lambda: kseq.layers.MultiHeadSelfAttention(2, 4),
    "NgramEncoder": lambda: kseq.models.encoders.NgramEncoder(7, embedding_dim=4,
                                                              ngram_buckets=8),
    "RnnDecoder": lambda: kseq.models.decoders.RnnDecoder(7),
    "RnnEncoder": lambda: kseq.models.encoders.RnnEncoder(7),
    "SequenceClassifier": lambda: kseq.models.build_classifier(TOKENIZER, ["a", "b"], "rnn",
                                                               hidden_dim=4),
    "SequenceTagger": lambda: kseq.models.build_tagger(CHARS, ["A", "B"], hidden_dim=4),
    "SequencePooling": lambda: kseq.layers.SequencePooling("attention"),
    "SmallCnn": lambda: kseq.layers.SmallCnn([4]),
    "SinusoidalPositionEmbedding": lambda: kseq.layers.SinusoidalPositionEmbedding(8),
    "TaggerPreprocessor": lambda: kseq.models.TaggerPreprocessor(CHARS, ["A", "B"], 16),
    "TextCnnEncoder": lambda: kseq.models.encoders.TextCnnEncoder(7, embedding_dim=4,
                                                                  kernel_sizes=(2, 3), filters=3),
    "TokenEmbedding": lambda: kseq.layers.TokenEmbedding(7, 4),
    "TransformerDecoder": lambda: kseq.models.decoders.TransformerDecoder(7, num_heads=2,
                                                                          hidden_dim=8),
    "TransformerDecoderBlock": lambda: kseq.layers.TransformerDecoderBlock(2, 8),
    "TransformerEncoder": lambda: kseq.models.encoders.TransformerEncoder(7, num_heads=2,
                                                                          hidden_dim=8),
    "TransformerEncoderBlock": lambda: kseq.layers.TransformerEncoderBlock(2, 8),
    "Translator": lambda: kseq.models.build_translator("rnn", TOKENIZER, TOKENIZER, units=4,
                                                       embedding_dim=4),
    "TranslatorPreprocessor": lambda: kseq.models.TranslatorPreprocessor(TOKENIZER, TOKENIZER,
                                                                         8, 8),
    "WarmupInverseSqrt": lambda: kseq.models.schedules.WarmupInverseSqrt(1e-3, 10),
    "FusedAdam": lambda: kseq.models.FusedAdam(1e-3, beta_2=0.98, clipnorm=1.0),
}
# Names that files saved by kseq 0.1 use; they resolve to Translator.
ALIASES = {"RnnTranslator", "ConvTranslator"}


def registered():
    return {name.split(">", 1)[1]: cls for name, cls in keras.saving.get_custom_objects().items()
            if name.startswith("kseq>")}


def test_every_registered_class_has_an_example():
    assert set(registered()) - ALIASES == set(EXAMPLES)


# `cross_attention` names the block's sublayer (and old weight files' path): the flag
# is `has_cross_attention`.
# `weights` is Keras's list of a layer's variables: the file argument is `weights_file`.
ATTRIBUTE_NAMES = {("TransformerDecoderBlock", "cross_attention"): "has_cross_attention",
                   ("ApplicationBackbone", "weights"): "weights_file",
                   ("EfficientNetLite0", "weights"): "weights_file"}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_config_and_attributes_hold_every_constructor_argument(name):
    instance = EXAMPLES[name]()
    cls = type(instance)
    arguments = set(inspect.signature(cls.__init__).parameters) - {"self", "kwargs"}
    config = instance.get_config()
    missing = arguments - set(config)
    assert not missing, f"{cls.__name__}.get_config() lacks {sorted(missing)}"
    for argument in arguments:  # attributes are named like the arguments they store
        attribute = ATTRIBUTE_NAMES.get((name, argument), argument)
        assert hasattr(instance, attribute), f"{cls.__name__} has no attribute {attribute}"
