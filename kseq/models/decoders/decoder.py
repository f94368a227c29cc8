"""`Decoder`: what every decoder shares (see `kseq.models.decoders` for the protocol)."""

import keras

from kseq.models.part import Part


class Decoder(Part):
    """Base class: `call` is `project(hidden_states(...))`; subclasses define the rest."""

    def call(self, decoder_ids, memory=None, training=None):
        return self.project(self.hidden_states(decoder_ids, memory, training=training))

    def reuse_encoder_layers(self, encoder):
        """Reads through the encoder's weightless embedding layers (dropout, positions).

        kseq 0.1 translators had one such layer for both sides; a model saved
        then is rebuilt with this sharing so its layers keep their order, and
        so their saved weights load (`Translator(legacy_layout=True)`). Call
        before the decoder is first used.
        """
        raise NotImplementedError(f"{type(self).__name__} has no kseq 0.1 layout")

    def check_shared_embedding(self, embedding, width):
        """Refuses an embedding table to share unless it is `vocabulary_size x width`."""
        if (embedding.vocabulary_size, embedding.embedding_dim) != (self.vocabulary_size, width):
            raise ValueError("A shared embedding needs the decoder's vocabulary size, and an "
                             f"encoder and decoder of one width. Received: "
                             f"{embedding.vocabulary_size} x {embedding.embedding_dim} vs "
                             f"{self.vocabulary_size} x {width}")

    def prepare(self, memory):
        """The memory a search reads: by default, as the encoder returned it."""
        return dict(memory)

    def compute_output_spec(self, decoder_ids, memory=None, training=None):
        return keras.KerasTensor((*decoder_ids.shape, self.vocabulary_size), dtype="float32")
