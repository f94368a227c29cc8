"""`TextTargets`: the output side every generative preprocessor shares (one target tokenizer).

A translator's and a captioner's preprocessors differ in their inputs (source
text, images) and share this: captions or translations become teacher-forced
decoder inputs and labels, prompts become ids, ids become strings.
"""

import tensorflow as tf

from kseq.text.tokenizer import END_ID, START_ID


class TextTargets:
    """Mixin over `self.target_tokenizer` and `self.max_target_length`."""

    def target_ids(self, targets):
        """`[B]` strings -> `(decoder_ids "<s> y", labels "y </s>")`, ragged, cut to fit
        `max_target_length` with the start or end token."""
        target_ids = self.target_tokenizer.tokenize(targets)[:, : self.max_target_length - 1]
        rows = target_ids.nrows()
        decoder_ids = tf.concat([tf.fill([rows, 1], START_ID), target_ids], axis=1)
        labels = tf.concat([target_ids, tf.fill([rows, 1], END_ID)], axis=1)
        return decoder_ids, labels

    def prompt_inputs(self, texts):
        """Output-side prefixes `[B]` -> `(prompt_ids [B, P], prompt_lengths [B])` int32.

        The ids follow `<s>` (which the search feeds first), cut to
        `max_target_length - 1` tokens so the end token still fits.
        """
        ragged = self.target_tokenizer.tokenize(texts)[:, : self.max_target_length - 1]
        return (tf.cast(ragged.to_tensor(), tf.int32),
                tf.cast(ragged.row_lengths(), tf.int32))

    def detokenize(self, ids):
        """Target ids `[N, T]` -> `[N]` strings (stops at `</s>`)."""
        return self.target_tokenizer.detokenize(ids)
