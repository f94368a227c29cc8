"""Decoders: target ids + an encoder's memory -> logits, teacher-forced or a step at a time.

The protocol, for every decoder (`B` batch, `T` target length, `N` rows in a
search step, `V` vocabulary):

- `prepare(memory) -> memory`: adds what the search reads at every step and
  computes once a sentence (cross-attention keys and values, an RNN's bridge).
- `hidden_states(decoder_ids [B, T], memory, training) -> [B, T, E]`: the
  teacher-forced states before the output projection.
- `project(states [..., E]) -> logits [..., V]`, float32.
- `initial_state(prepared_memory) -> state`: fixed-shape, batch-first tensors
  (a KV cache of `max_length`, an RNN's hidden state, a conv window), plus
  `"attention"` `[B, S]`.
- `step(token_ids [N], state, prepared_memory, t) -> (logits [N, V], state)`.
- `decoder(decoder_ids, memory, training)` = `project(hidden_states(...))`.

`hidden_states` and `step` run the same sublayers, so a search step
reproduces the teacher-forced logits (tested for every decoder). Each family
registers a factory in the part catalog (`kseq.models.part_catalog`):
`"transformer"`, `"rnn"` (a fixed context), `"attention"` (an RNN with
attention), `"conv"`.
"""

# In registration order (part catalog: "transformer", "rnn", "attention", "conv").
from kseq.models.decoders.transformer_decoder import TransformerDecoder
from kseq.models.decoders.rnn_decoder import RnnDecoder
from kseq.models.decoders.conv_decoder import ConvDecoder
