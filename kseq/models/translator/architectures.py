"""Translators from flat hyper-parameters: an encoder x a decoder from the part catalog.

`build_translator(arch, source_tokenizer, target_tokenizer, **options)` maps a
recipe's `model` section onto an encoder and a decoder (each built by its
`kseq.models.part_catalog` factory from the options it takes) and a
`TranslatorPreprocessor`. A recipe names its parts with `encoder` and
`decoder`, as in every task, or with `arch`, one of four pairs:

| `arch` | `encoder` + `decoder` |
|---|---|
| `"transformer"` | `"transformer"` + `"transformer"` |
| `"attention"` | `"rnn"` + `"attention"` (one attention cell; `num_layers` is the encoder's) |
| `"rnn"` | `"rnn"` + `"rnn"` (one fixed context; `num_layers` stacks both) |
| `"conv"` | `"conv"` + `"conv"` (`num_encoder_layers`, `num_decoder_layers`) |

Models saved by kseq 0.1 stored exactly these options; they are read by
`kseq.models.translator.legacy` (with `legacy_layout=True`).
"""

from kseq.arguments import check_choice
from kseq.errors import KseqError
from kseq.models.part_catalog import decoder_entry, encoder_entry, encoder_names, split_options
from kseq.models.translator.translator import Translator
from kseq.models.translator.translator_preprocessor import TranslatorPreprocessor

ARCHITECTURE_PARTS = {"transformer": ("transformer", "transformer"),
                      "attention": ("rnn", "attention"), "rnn": ("rnn", "rnn"),
                      "conv": ("conv", "conv")}
ARCHITECTURES = tuple(ARCHITECTURE_PARTS)
SHARE_EMBEDDINGS = ("decoder", "all", "none")
# Where a translator's defaults differ from the catalog's (a fixed feed-forward width).
DEFAULTS = {"intermediate_dim": 512}


def check_shared_embeddings(share_embeddings, source_tokenizer, target_tokenizer, choices):
    """`KseqError` for a `share_embeddings` outside `choices`, or "all" over two
    vocabularies."""
    check_choice("share_embeddings", share_embeddings, choices)
    if share_embeddings == "all" and source_tokenizer.vocabulary != target_tokenizer.vocabulary:
        raise KseqError("share_embeddings='all' needs one vocabulary for both sides. "
                        "Received: two different vocabularies")


def translator_parts(arch=None, encoder=None, decoder=None):
    """`(encoder, decoder)` names: the pair `arch` names, or `encoder` / `decoder`
    (each "transformer" when missing).

    Example:
    >>> translator_parts("attention"), translator_parts(encoder="rnn", decoder="rnn")
    (('rnn', 'attention'), ('rnn', 'rnn'))
    """
    if arch is None:
        return encoder or "transformer", decoder or "transformer"
    check_choice("arch", arch, ARCHITECTURES)
    pair = ARCHITECTURE_PARTS[arch]
    if (encoder or pair[0], decoder or pair[1]) != pair:
        raise KseqError(f"arch={arch!r} is the encoder {pair[0]!r} with the decoder {pair[1]!r}: "
                        f"name the parts with `arch` or with `encoder`/`decoder`. Received: "
                        f"encoder={encoder!r}, decoder={decoder!r}")
    return pair


def build_translator(arch=None, source_tokenizer=None, target_tokenizer=None, encoder=None,
                     decoder=None, max_source_length=64, max_target_length=64,
                     share_embeddings=None, dtype=None, name=None, legacy_layout=False,
                     **options):
    """A `Translator` from a recipe's flat hyper-parameters.

    Args:
        arch: `"transformer"`, `"attention"`, `"rnn"` or `"conv"` (see the
            module docstring), or None to name the parts with `encoder` and
            `decoder`.
        source_tokenizer, target_tokenizer: `kseq.text` tokenizers.
        encoder, decoder: text encoder and decoder names of the part catalog.
        max_source_length, max_target_length: the preprocessor's lengths
            (and the encoder's and decoder's `max_length`).
        share_embeddings: `"all"` (one embedding table for both sides, one
            vocabulary), `"decoder"` (a Transformer decoder projects with its
            own input embedding; its default) or `"none"` (the default of
            the other decoders).
        dtype: a dtype policy for every layer.
        name: the model's name.
        legacy_layout: as `Translator`'s (for models saved by kseq 0.1).
        **options: the parts' hyper-parameters (`kseq presets --parts` lists
            them); one that no part takes raises `TypeError`.

    Example:
    >>> import kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["one two three"])
    >>> model = kseq.models.build_translator("attention", tok, tok, units=8, embedding_dim=8)
    >>> type(model.encoder).__name__, type(model.decoder).__name__
    ('RnnEncoder', 'RnnDecoder')
    >>> same = kseq.models.build_translator(source_tokenizer=tok, target_tokenizer=tok,
    ...                                     encoder="rnn", decoder="attention", units=8,
    ...                                     embedding_dim=8)
    >>> same.count_params() == model.count_params()
    True
    """
    encoder, decoder = translator_parts(arch, encoder, decoder)
    parts = (encoder_entry(encoder, encoder_names("text")), decoder_entry(decoder))
    ties = parts[1].takes("tie_embeddings")
    share_embeddings = share_embeddings or ("decoder" if ties else "none")
    check_shared_embeddings(share_embeddings, source_tokenizer, target_tokenizer,
                            SHARE_EMBEDDINGS if ties else ("none", "all"))
    # kseq 0.1 Transformers read both sides' positions from the encoder's table
    # (`TransformerDecoder.reuse_encoder_layers`), so it held the longer side.
    shared_positions = legacy_layout and decoder == "transformer"
    source_room = max(max_source_length, max_target_length) if shared_positions \
        else max_source_length
    encoder_options, decoder_options = split_options(
        options, parts, defaults=DEFAULTS,
        fixed=[{"max_length": source_room},
               {"max_length": max_target_length, "tie_embeddings": share_embeddings != "none"}])
    preprocessor = TranslatorPreprocessor(source_tokenizer, target_tokenizer, max_source_length,
                                          max_target_length)
    return Translator(parts[0].build(source_tokenizer.vocabulary_size, dtype=dtype,
                                     **encoder_options),
                      parts[1].build(target_tokenizer.vocabulary_size, dtype=dtype,
                                     **decoder_options),
                      preprocessor, share_source_embedding=share_embeddings == "all",
                      legacy_layout=legacy_layout, dtype=dtype,
                      **({"name": name} if name else {}))
