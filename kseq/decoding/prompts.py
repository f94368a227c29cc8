"""Prompts: output tokens a search must start with, then continue.

A prompt is right-padded ids `prompt_ids [B, P]` and `prompt_lengths [B]`
(0 <= length <= P). Row `b`'s output holds `prompt_ids[b, t]` at every
position `t < prompt_lengths[b]`; the search picks the positions after it.
Prompt tokens are not scored: a hypothesis's score sums the log-probabilities
of its generated tokens only, and the length penalty and `min_length` count
generated tokens only. A prompt should not hold the end token (a forced token
never ends a row).

Without a `prefill` the loop starts at `t = 0` and forces the prompt token
wherever `t < prompt_lengths[row]`. With `prefill(input_ids [B, P0], state,
memory) -> state`, one parallel pass over the inputs of positions `< P0 =
min(prompt_lengths)` (the start token, then the prompt's first `P0 - 1`
tokens) replaces those steps, and the loop starts at `t = P0` (keras-hub's
`CausalLM.generate` works the same way); rows with longer prompts are still
forced in the loop. A prefill must give the state those `P0` steps would
have given, and take `P0 = 0`.

Shape letters: `B` batch, `P` prompt width, `T` `max_length`, `V` vocabulary.
"""

import tensorflow as tf


class Prompt:
    """The prompt of one search, padded or cut to `max_length` columns."""

    def __init__(self, prompt_ids, prompt_lengths, batch, max_length):
        ids = tf.cast(prompt_ids, tf.int32)[:, :max_length]  # [B, P']
        ids = tf.pad(ids, [[0, 0], [0, max_length - tf.shape(ids)[1]]])  # [B, T]
        self.ids = tf.reshape(ids, [batch, max_length])
        lengths = tf.cast(tf.reshape(prompt_lengths, [batch]), tf.int32)
        self.lengths = tf.clip_by_value(lengths, 0, max_length)  # [B]
        self.max_length = max_length

    def tensors(self):
        """`{"ids" [B, T], "lengths" [B]}`: what a search carries (and compacts) per row."""
        return {"ids": self.ids, "lengths": self.lengths}

    @classmethod
    def from_tensors(cls, tensors, max_length):
        """The prompt of the rows whose `tensors()` these are (a search's running rows)."""
        prompt = cls.__new__(cls)
        prompt.ids, prompt.lengths, prompt.max_length = (tensors["ids"], tensors["lengths"],
                                                         max_length)
        return prompt

    def forced(self, t):
        """`(is_forced [B] bool, token [B])` at position `t`."""
        return t < self.lengths, tf.gather(self.ids, tf.minimum(t, self.max_length - 1), axis=1)

    def generated(self, lengths):
        """Generated tokens among `lengths` output tokens (`[B]` or `[B, K]`)."""
        prompt = self.lengths if lengths.shape.rank == 1 else self.lengths[:, None]
        return tf.maximum(lengths - prompt, 0)

    def shared_length(self):
        """`P0 = min(prompt_lengths)`, 0 for an empty batch."""
        return tf.reduce_min(tf.concat([self.lengths, [self.max_length]], 0))

    def prefill(self, prefill, start_ids, state, memory):
        """Runs `prefill` over positions `< P0`; returns `(t0, tokens [B], state, columns [B, T])`.

        `tokens` is the input of position `t0` (the last shared prompt token, or
        the start token when `P0 = 0`); `columns` holds the prompt at `t < P0`.
        """
        t0 = self.shared_length()
        inputs = tf.concat([start_ids[:, None], self.ids[:, :-1]], axis=1)[:, :t0]  # [B, P0]
        state = prefill(inputs, state, memory)
        tokens = tf.where(t0 > 0, tf.gather(self.ids, tf.maximum(t0 - 1, 0), axis=1), start_ids)
        columns = tf.where(tf.range(self.max_length)[None, :] < t0, self.ids, 0)
        return t0, tokens, state, columns


def make_prompt(prompt_ids, prompt_lengths, batch, max_length):
    """A `Prompt`, or None when there is none; both arguments or neither."""
    if (prompt_ids is None) != (prompt_lengths is None):
        raise ValueError("Pass `prompt_ids` and `prompt_lengths` together. Received: "
                         f"prompt_ids={'None' if prompt_ids is None else 'a tensor'}, "
                         f"prompt_lengths={'None' if prompt_lengths is None else 'a tensor'}")
    if prompt_ids is None:
        return None
    return Prompt(prompt_ids, prompt_lengths, batch, max_length)
