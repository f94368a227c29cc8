"""Language models from flat hyper-parameters: a decoder without memory.

- `"transformer"`: `TransformerDecoder(cross_attention=False)`, pre-LN blocks of causal
  self-attention (a KV cache) and feed-forward; `num_layers`, `num_heads`, `hidden_dim`,
  `intermediate_dim` (default 4x), `dropout`, `position`;
- `"gru"`, `"lstm"`: `RnnDecoder(reads_memory=False)`, `num_layers` stacked cells of
  `units`, embeddings of `embedding_dim` (both default `hidden_dim`), `dropout`.

Both tie the output projection to the token embedding (an RNN whose `units`
differ from `embedding_dim` projects to it first). `max_length` is the
longest sequence, in tokens (the Transformer's position table and KV cache).
"""

from kseq.arguments import check_choice
from kseq.models.decoders import RnnDecoder, TransformerDecoder
from kseq.models.language_model.language_model import LanguageModel
from kseq.models.language_model.language_model_preprocessor import LanguageModelPreprocessor

ARCHITECTURES = ("transformer", "gru", "lstm")
_TRANSFORMER = ("num_layers", "num_heads", "hidden_dim", "intermediate_dim", "dropout",
                "position", "norm_first", "scale_embeddings", "embedding_dropout",
                "activation_dropout")
_RNN = ("num_layers", "hidden_dim", "units", "embedding_dim", "dropout")


def build_language_model(arch="transformer", tokenizer=None, categories=(), max_length=64,
                         dtype=None, name=None, **options):
    """A `LanguageModel` from a recipe's flat hyper-parameters.

    Args:
        arch: `"transformer"`, `"gru"` or `"lstm"` (see the module docstring).
        tokenizer: a `kseq.text` tokenizer.
        categories: the category names (empty: a plain language model).
        max_length: longest sequence in tokens (end token included).
        dtype: a dtype policy for every layer.
        name: the model's name.
        **options: the architecture's hyper-parameters; one it does not take raises
            `TypeError`.

    Example:
    >>> import kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["one two three"])
    >>> model = kseq.models.build_language_model("lstm", tok, ["a", "b"], hidden_dim=8)
    >>> model.decoder.cell, model.decoder.vocabulary_size == tok.vocabulary_size + 2
    ('lstm', True)
    """
    check_choice("arch", arch, ARCHITECTURES)
    known = _TRANSFORMER if arch == "transformer" else _RNN
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise TypeError(f"{arch!r} language models take {', '.join(known)}, max_length; not "
                        f"{', '.join(unknown)}")
    preprocessor = LanguageModelPreprocessor(tokenizer, max_length, categories)
    vocabulary = tokenizer.vocabulary_size + len(preprocessor.categories)
    if arch == "transformer":
        hidden = options.pop("hidden_dim", 128)
        options.setdefault("intermediate_dim", 4 * hidden)
        decoder = TransformerDecoder(vocabulary, hidden_dim=hidden, max_length=max_length,
                                     tie_embeddings=True, cross_attention=False, dtype=dtype,
                                     name="decoder", **options)
    else:
        hidden = options.pop("hidden_dim", 128)
        decoder = RnnDecoder(vocabulary, embedding_dim=options.pop("embedding_dim", hidden),
                             units=options.pop("units", hidden), cell=arch, attention=None,
                             reads_memory=False, tie_embeddings=True, dtype=dtype,
                             name="decoder", **options)
    return LanguageModel(decoder, preprocessor, dtype=dtype, **({"name": name} if name else {}))
