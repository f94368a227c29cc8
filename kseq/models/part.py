"""`Part`: the base of encoders and decoders, and the sublayers several parts build alike."""

import keras

from kseq.layers.position_embedding import LearnedPositionEmbedding, SinusoidalPositionEmbedding
from kseq.layers.token_embedding import TokenEmbedding

POSITIONS = {"sinusoidal": SinusoidalPositionEmbedding, "learned": LearnedPositionEmbedding}


class Part(keras.layers.Layer):
    """A layer whose sublayers build themselves on their first call.

    Keras warns about a layer without `build` that holds unbuilt sublayers;
    here that is the design: a part is called through `call` by a task's
    functional graph (see `kseq.models.task`), or through `__call__` alone.
    `get_config` returns the attributes named in `CONFIG` (the constructor's
    arguments, stored under their own names).
    """

    CONFIG = ()

    def build(self, *shapes, **kwargs):
        self.built = True

    def get_config(self):
        return {**super().get_config(), **{name: getattr(self, name) for name in self.CONFIG}}


def store_arguments(part, arguments):
    """Stores the constructor's arguments named in `part.CONFIG`; `arguments` is its `locals()`."""
    for name in part.CONFIG:
        setattr(part, name, arguments[name])


def embedding_layers(part, vocabulary_size, width, max_length, position, scale, dropout):
    """`(token embedding, position embedding, dropout)` of `part`, named after it."""
    dtype, name = part.dtype_policy, part.name
    return (TokenEmbedding(vocabulary_size, width, scale=scale, dtype=dtype,
                           name=f"{name}_token_embedding"),
            POSITIONS[position](max_length, dtype=dtype, name=f"{name}_position_embedding"),
            keras.layers.Dropout(dropout, dtype=dtype, name=f"{name}_embedding_dropout"))


def transformer_blocks(part, block_class, **options):
    """`part.num_layers` blocks with the part's Transformer hyper-parameters."""
    activation_dropout = part.activation_dropout
    return [block_class(num_heads=part.num_heads, intermediate_dim=part.intermediate_dim,
                        dropout=part.dropout, norm_first=part.norm_first,
                        dtype=part.dtype_policy, name=f"{part.name}_block_{i}",
                        activation_dropout=part.dropout if activation_dropout is None
                        else activation_dropout, **options)
            for i in range(part.num_layers)]


def final_norm(part):
    """The closing layer norm of a pre-LN stack (None for post-LN)."""
    if not part.norm_first:
        return None
    return keras.layers.LayerNormalization(epsilon=1e-5, dtype=part.dtype_policy,
                                           name=f"{part.name}_norm")


def check_room(part, role, preprocessor, length_name):
    """`ValueError` unless `part`'s `max_length` (a position table, a cache) holds the
    preprocessor's `length_name`; a part without one has room for anything."""
    room = getattr(part, "max_length", None)
    length = None if room is None else getattr(preprocessor, length_name)
    if room is not None and length > room:
        raise ValueError(f"The {role}'s max_length must hold the preprocessor's {length_name}. "
                         f"Received: {role} max_length={room}, {length_name}={length}")
