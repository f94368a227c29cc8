"""Encoders: token ids (or images) -> the memory dict every decoder reads.

The protocol, for every encoder: `encoder(inputs, training=None) -> memory`, a
dict of batch-first tensors:

- `"states"` `[B, S, E]`: one vector per source position;
- `"mask"` `[B, S]` bool: True at real positions;
- `"final"` `[B, E']`: a summary of the whole input, where the encoder has one
  (an RNN's last states); decoders that need it (an RNN bridge) say so.

An encoder may add keys its own decoders use (the conv encoder's `"values"`).
A task builds its functional graph through `encoder.call(...)`, so the graph's
nodes are the encoder's sublayers (see `kseq.models.task`).

Each family registers a factory in the part catalog (`kseq.models.part_catalog`):
text encoders `"transformer"`, `"rnn"`, `"conv"`, `"ngrams"`, `"textcnn"`
(beside their classes), image encoders in `image_encoder_architectures`.
"""

# In registration order: the order `kseq presets --parts` and error messages list them.
from kseq.models.encoders.transformer_encoder import TransformerEncoder
from kseq.models.encoders.rnn_encoder import RnnEncoder
from kseq.models.encoders.conv_encoder import ConvEncoder
from kseq.models.encoders.ngram_encoder import NgramEncoder
from kseq.models.encoders.text_cnn_encoder import TextCnnEncoder
from kseq.models.encoders.image_encoder import ImageEncoder
from kseq.models.encoders import image_encoder_architectures  # noqa: F401  (registers)
