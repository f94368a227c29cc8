"""The parts `kseq presets --parts` lists, kept here as data so that it answers without
TensorFlow: the part catalog (`kseq.models.part_catalog`) fills itself when `kseq.models` is
imported, which imports TensorFlow. `tests/test_cli_presets.py` checks that `PARTS` equals
`part_rows(part_catalog.parts())`; after a part is added or changed, write it anew with
`python -m kseq.cli.part_listing` (which imports TensorFlow).
"""

# (name, kind, class, options with their defaults), encoders first.
PARTS = [
    ('transformer', 'text', 'TransformerEncoder', (
        'num_layers=2', 'num_heads=4', 'hidden_dim=128', 'intermediate_dim=None',
        'dropout=0.1', 'max_length=64', "position='sinusoidal'", 'norm_first=True',
        'scale_embeddings=True', 'embedding_dropout=None', 'activation_dropout=None',
    )),
    ('rnn', 'text', 'RnnEncoder', (
        "cell='gru'", 'units=None', 'embedding_dim=None', 'hidden_dim=128',
        'num_layers=1', 'bidirectional=True', 'dropout=0.1',
    )),
    ('conv', 'text', 'ConvEncoder', (
        'num_layers=4', 'num_encoder_layers=None', 'embedding_dim=None', 'hidden_dim=256',
        'kernel_size=3', 'dropout=0.1', 'max_length=64',
    )),
    ('ngrams', 'text', 'NgramEncoder', (
        'embedding_dim=None', 'hidden_dim=128', 'ngram_buckets=50000', 'dropout=0.1',
    )),
    ('textcnn', 'text', 'TextCnnEncoder', (
        'embedding_dim=None', 'hidden_dim=128', 'kernel_sizes=(3, 4, 5)', 'filters=100',
        'dropout=0.1',
    )),
    ('small_cnn', 'image', 'ImageEncoder', (
        'image_size=64', 'hidden_dim=128', 'dropout=0.1', 'filters=(32, 64, 128)',
        'trainable_backbone=True', 'augmentation=0.0',
    )),
    ('efficientnet_lite0', 'image', 'ImageEncoder', (
        'image_size=64', 'hidden_dim=128', 'dropout=0.1', 'trainable_backbone=True',
        "backbone_weights='imagenet'", 'augmentation=0.0',
    )),
    ('EfficientNetB0', 'image', 'ImageEncoder', (
        'image_size=64', 'hidden_dim=128', 'dropout=0.1', 'trainable_backbone=True',
        'backbone_weights=None', 'augmentation=0.0',
    )),
    ('EfficientNetV2B0', 'image', 'ImageEncoder', (
        'image_size=64', 'hidden_dim=128', 'dropout=0.1', 'trainable_backbone=True',
        'backbone_weights=None', 'augmentation=0.0',
    )),
    ('MobileNetV2', 'image', 'ImageEncoder', (
        'image_size=64', 'hidden_dim=128', 'dropout=0.1', 'trainable_backbone=True',
        'backbone_weights=None', 'augmentation=0.0',
    )),
    ('MobileNetV3Large', 'image', 'ImageEncoder', (
        'image_size=64', 'hidden_dim=128', 'dropout=0.1', 'trainable_backbone=True',
        'backbone_weights=None', 'augmentation=0.0',
    )),
    ('MobileNetV3Small', 'image', 'ImageEncoder', (
        'image_size=64', 'hidden_dim=128', 'dropout=0.1', 'trainable_backbone=True',
        'backbone_weights=None', 'augmentation=0.0',
    )),
    ('ResNet50V2', 'image', 'ImageEncoder', (
        'image_size=64', 'hidden_dim=128', 'dropout=0.1', 'trainable_backbone=True',
        'backbone_weights=None', 'augmentation=0.0',
    )),
    ('transformer', 'decoder', 'TransformerDecoder', (
        'num_layers=2', 'num_heads=4', 'hidden_dim=128', 'intermediate_dim=None',
        'dropout=0.1', 'max_length=64', "position='sinusoidal'", 'norm_first=True',
        'scale_embeddings=True', 'embedding_dropout=None', 'activation_dropout=None',
        'tie_embeddings=True',
    )),
    ('rnn', 'decoder', 'RnnDecoder', (
        "cell='gru'", 'units=None', 'embedding_dim=None', 'hidden_dim=128',
        'num_layers=1', 'dropout=0.1',
    )),
    ('attention', 'decoder', 'RnnDecoder', (
        "cell='gru'", 'units=None', 'embedding_dim=None', 'hidden_dim=128',
        "attention='bahdanau'", 'dropout=0.1',
    )),
    ('conv', 'decoder', 'ConvDecoder', (
        'num_layers=3', 'num_decoder_layers=None', 'embedding_dim=None', 'hidden_dim=256',
        'kernel_size=3', 'dropout=0.1', 'max_length=64',
    )),
]


def part_rows(parts):
    """`part_catalog.parts()` -> `PARTS`' rows: `(name, kind, class, ("option=default", ...))`."""
    return [(part["name"], part["kind"], part["class"],
             tuple(f"{key}={value!r}" for key, value in part["options"].items()))
            for part in parts]


def _write():
    """Rewrites `PARTS` in this file from the part catalog."""
    import re
    import textwrap

    from kseq.models.part_catalog import parts

    rows = []
    for name, kind, cls, options in part_rows(parts()):
        rows.append(f"    ({name!r}, {kind!r}, {cls!r}, (")
        rows += textwrap.wrap(" ".join(f"{option!r}," for option in options), 90,
                              initial_indent=" " * 8, subsequent_indent=" " * 8)
        rows.append("    )),")
    with open(__file__, encoding="utf-8") as handle:
        text = handle.read()
    listing = "PARTS = [\n" + "\n".join(rows) + "\n]\n"
    text = re.sub(r"^PARTS = \[\n(?:.*\n)*?\]\n", lambda _: listing, text, count=1,
                  flags=re.MULTILINE)
    with open(__file__, "w", encoding="utf-8") as handle:
        handle.write(text)


if __name__ == "__main__":
    _write()
