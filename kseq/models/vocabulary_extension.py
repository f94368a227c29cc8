"""Vocabulary coverage of a user's data, and new tokens added to a trained model.

`unknown_token_share(preprocessor, texts)` says how much of a user's text a
model's vocabulary maps to `<unk>` (and which tokens); `extend_vocabulary(model,
new_tokens)` appends tokens to a word or character vocabulary, as OpenNMT-tf's
`onmt-update-vocab` does: old ids keep their rows, so the extended model answers
exactly as before on old inputs until it trains.

New rows start where they change nothing:
- an input embedding row (a table only read as input) copies the `<unk>` row,
  which the new token's occurrences were read as until now: every input,
  new tokens included, gives the same outputs as before;
- an output row (an untied output projection's column and bias, or the
  embedding row of a table tied to the output) is the mean of the old rows,
  so its logit is the mean of the old logits, below their maximum: greedy
  search answers as before on every input whose tokens were known. (Beam
  scores move by the little probability mass the new tokens take.)

The extended model is rebuilt from its config with the longer vocabularies,
so its preprocessor, `.keras` file, SavedModel export and CTranslate2 export
all read the one extended vocabulary. WordPiece vocabularies are refused:
a new unit changes how known words are cut (longest match first).
"""

import collections

import numpy as np
import tensorflow as tf  # the tokenizers' in-graph split, run eagerly here

from kseq.errors import KseqError
from kseq.text.token_marks import UNK_ID

# A preprocessor's tokenizer attribute per side name, and the part that reads each side.
_SIDES = {"source": ("source_tokenizer", "encoder"), "target": ("target_tokenizer", "decoder"),
          "text": ("tokenizer", "encoder")}
_BATCH = 4096  # texts split at a time


def text_sides(preprocessor):
    """The side names of `preprocessor` (or a model's) that hold a tokenizer, in order:
    `["source", "target"]` (translator), `["target"]` (captioner), `["text"]` (text
    classifier, tagger), `[]` (image classifier)."""
    preprocessor = getattr(preprocessor, "preprocessor", preprocessor)
    return [side for side, (attribute, _) in _SIDES.items()
            if getattr(preprocessor, attribute, None) is not None]


def _tokenizer(preprocessor, side):
    sides = text_sides(preprocessor)
    if not sides:
        raise KseqError(f"{type(preprocessor).__name__} reads no text: it has no vocabulary. "
                        f"Received: {type(preprocessor).__name__}")
    side = sides[0] if side is None else side
    if side not in sides:
        raise KseqError(f"`side` must be one of {sides} for {type(preprocessor).__name__}. "
                        f"Received: side={side!r}")
    return getattr(preprocessor, _SIDES[side][0])


def _as_texts(texts):
    """Strings, bytes or word lists (a tagger's sentences) -> a list of str."""
    if isinstance(texts, (str, bytes)):
        texts = [texts]
    rows = []
    for row, text in enumerate(texts, start=1):
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        elif isinstance(text, (list, tuple)) and all(isinstance(w, str) for w in text):
            text = " ".join(text)
        if not isinstance(text, str):
            raise KseqError(f"`texts` must hold strings (or word lists); text {row} is a "
                            f"{type(text).__name__}. Received: {text!r:.80}")
        rows.append(text)
    return rows


def _pieces_and_unknown(tokenizer, batch):
    """`[b]` strings -> (flat pieces as the vocabulary spells them, flat is-unknown), for
    the share; for WordPiece the pieces are words and a word is unknown if any unit is."""
    texts = tokenizer.normalize(tf.constant(batch, tf.string))
    if tokenizer.kind == "wordpiece":
        words = tokenizer.split_words(texts)  # [b, (W)]
        units = tokenizer.wordpiece.tokenize(words)  # [b, (W), (P)]
        unknown_units = tf.reduce_any(tf.equal(units, UNK_ID), axis=-1)  # [b, (W)]
        return (words.flat_values.numpy(), unknown_units.flat_values.numpy(),
                units.flat_values.shape[0], int(tf.reduce_sum(tf.cast(
                    tf.equal(units.flat_values, UNK_ID), tf.int32))))
    pieces = tokenizer.split(texts).flat_values
    unknown = tf.equal(tokenizer.table.lookup(pieces), UNK_ID).numpy()
    return pieces.numpy(), unknown, len(unknown), int(unknown.sum())


def unknown_token_share(preprocessor, texts, side=None, top=20):
    """The share of `texts`' tokens that `preprocessor`'s vocabulary maps to `<unk>`.

    Tokens are the tokenizer's own pieces (words with their joiner marks,
    characters, WordPiece units) after its normalisation (lower-casing, NFC),
    as the model reads them.

    Args:
        preprocessor: a task's preprocessor, or the task model itself.
        texts: strings (a tagger also takes word lists).
        side: the vocabulary to check where there are several: `"source"`
            (default) or `"target"` for a translator; `"target"` for a
            captioner, `"text"` for a classifier or tagger (`text_sides`).
        top: how many unknown tokens to list.

    Returns:
        `(share, most_common_unknown)`: the share in `[0, 1]` (0.0 for no
        tokens), and up to `top` `(token, count)` pairs of unknown tokens,
        most frequent first (ties in token order), spelled as the vocabulary
        would hold them (for WordPiece, whole words that have an unknown unit).

    Example:
    >>> import kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["the film was great"])
    >>> pre = kseq.models.ClassifierPreprocessor(tok, ["negative", "positive"], 16)
    >>> unknown_token_share(pre, ["the plot was dull", "the plot"])
    (0.5, [('plot', 2), ('dull', 1)])
    """
    tokenizer = _tokenizer(getattr(preprocessor, "preprocessor", preprocessor), side)
    texts = _as_texts(texts)
    counts, total, unknown_total = collections.Counter(), 0, 0
    for begin in range(0, len(texts), _BATCH):
        pieces, unknown, count, unknown_count = _pieces_and_unknown(
            tokenizer, texts[begin:begin + _BATCH])
        counts.update(piece.decode("utf-8") for piece in pieces[unknown])
        total, unknown_total = total + count, unknown_total + unknown_count
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]
    return (unknown_total / total if total else 0.0), ranked


# === extend_vocabulary ===


def _tokens_by_side(model, new_tokens):
    """`new_tokens` (a list for every side, or `{side: list}`) -> `{side: [new tokens]}`,
    each list without the tokens its vocabulary already holds (first spelling kept)."""
    sides = text_sides(model)
    if not sides:
        raise KseqError(f"{type(model).__name__} reads no text: it has no vocabulary to "
                        f"extend. Received: {type(model).__name__}")
    if isinstance(new_tokens, dict):
        unknown = sorted(set(new_tokens) - set(sides))
        if unknown:
            raise KseqError(f"`new_tokens` names sides of {type(model).__name__}: {sides}. "
                            f"Received: {unknown}")
        given = {side: new_tokens.get(side, []) for side in sides}
    elif isinstance(new_tokens, (str, bytes)) or not hasattr(new_tokens, "__iter__"):
        raise KseqError(f"`new_tokens` must be a list of tokens or a dict of lists by side "
                        f"{sides}. Received: {new_tokens!r:.80}")
    else:
        given = {side: new_tokens for side in sides}
    result = {}
    for side, tokens in given.items():
        tokenizer = getattr(model.preprocessor, _SIDES[side][0])
        known, added = set(tokenizer.vocabulary), []
        for token in tokens:
            token = token[0] if isinstance(token, tuple) else token  # (token, count) pairs
            if not isinstance(token, str) or not token or token != token.strip():
                raise KseqError(f"A new token must be a non-empty string without surrounding "
                                f"spaces. Received: {token!r}")
            if tokenizer.kind == "char" and len(token) != 1:
                raise KseqError(f"A character vocabulary takes single characters. "
                                f"Received: {token!r}")
            if token not in known:
                known.add(token)
                added.append(token)
        if added and tokenizer.kind not in ("word", "char"):
            raise KseqError(f"extend_vocabulary adds whole tokens to word and char "
                            f"vocabularies; a new {tokenizer.kind} unit would change how known "
                            f"words are cut. Received: a {tokenizer.kind} vocabulary")
        result[side] = added
    return result


def _extended_config(model, added):
    """The model's config with each side's vocabulary and its part's `vocabulary_size`
    extended (a shared vocabulary gets the union, in the same order on both sides)."""
    config = model.get_config()
    pre = config["preprocessor"]["config"]
    tokenizers = {side: getattr(model.preprocessor, _SIDES[side][0]) for side in added}
    if set(tokenizers) == {"source", "target"} and tokenizers["source"].vocabulary == \
            tokenizers["target"].vocabulary:  # one vocabulary for both sides: ids must agree
        union = list(dict.fromkeys(added["source"] + added["target"]))
        added = {"source": union, "target": union}
    for side, tokens in added.items():
        attribute, part = _SIDES[side]
        part_config = (config.get(part) or {}).get("config", {})
        if attribute not in pre or \
                part_config.get("vocabulary_size") != len(tokenizers[side].vocabulary):
            raise KseqError(f"extend_vocabulary extends a vocabulary that one part of the "
                            f"model reads by its size (its {part}); {type(model).__name__}'s "
                            f"{side} vocabulary is not one. Received: {type(model).__name__}")
        vocabulary = list(tokenizers[side].vocabulary) + tokens
        pre[attribute] = {**pre[attribute], "vocabulary": vocabulary}
        part_config["vocabulary_size"] = len(vocabulary)
    return config


def _output_tables(model):
    """Paths of the embedding tables that also project a decoder's output (tied)."""
    decoder = getattr(model, "decoder", None)
    if decoder is None or getattr(decoder, "output_projection", False) is not None:
        return set()
    return {decoder.token_embedding.embeddings.path}


def _grown(old, shape, output_row):
    """`old` (numpy) grown along its one longer axis of `shape`: new entries copy the
    `<unk>` entry (an input table), or are the mean of the old entries (an output row)."""
    axis = [a for a, (o, n) in enumerate(zip(old.shape, shape)) if o != n]
    if len(axis) != 1 or shape[axis[0]] < old.shape[axis[0]]:
        raise KseqError(f"extend_vocabulary can only lengthen a vocabulary axis. Received: "
                        f"{old.shape} -> {tuple(shape)}")
    axis = axis[0]
    count = shape[axis] - old.shape[axis]
    if output_row:
        row = old.mean(axis=axis, keepdims=True)
    else:
        row = np.take(old, [UNK_ID], axis=axis)
    return np.concatenate([old, np.repeat(row, count, axis=axis)], axis=axis).astype(old.dtype)


def extend_vocabulary(model, new_tokens):
    """A copy of `model` whose word or character vocabularies hold `new_tokens` too.

    Old tokens keep their ids and rows; the new ones get the next ids, with
    rows that change nothing before training (see the module docstring): the
    copy answers old inputs exactly as `model` does. It is compiled with its
    recipe's training section (a fresh optimizer) and keeps `model.recipe`.

    Args:
        model: a translator, captioner, text classifier or tagger.
        new_tokens: tokens to add, spelled as the vocabulary holds them (a
            word tokenizer's pieces: `"￭,"` for a comma written after a word;
            a character tokenizer's single characters); `(token, count)`
            pairs as `unknown_token_share` lists them are taken too. A list
            extends every side (a translator's source and target); a dict
            `{side: list}` extends the sides it names (`text_sides(model)`).
            Tokens a vocabulary already holds are skipped.

    Returns:
        A new model (`model` itself when nothing is new).

    Raises:
        KseqError: a WordPiece vocabulary, an n-gram encoder (it hashes token
            pairs by the vocabulary size), or a malformed token.

    Example:
    >>> import kseq
    >>> pairs = [("great film", "positive"), ("dull film", "negative")]
    >>> model = kseq.zoo.classifier("rnn", train_data=pairs, hidden_dim=8)
    >>> bigger = extend_vocabulary(model, ["plot", "great"])
    >>> bigger.preprocessor.tokenizer.vocabulary[-3:], bigger.encoder.vocabulary_size
    (['dull', 'great', 'plot'], 8)
    >>> bool((bigger.predict(["great film"]) == model.predict(["great film"])).all())
    True
    """
    added = {side: tokens for side, tokens in _tokens_by_side(model, new_tokens).items()
             if tokens}
    if not added:
        return model
    if getattr(getattr(model, "encoder", None), "bigram_embedding", None) is not None and \
            set(added) & {"source", "text"}:
        raise KseqError("An n-gram encoder hashes token pairs by the vocabulary size: a longer "
                        "vocabulary would move every pair. Received: NgramEncoder with "
                        f"ngram_buckets={model.encoder.ngram_buckets}")
    extended = type(model).from_config(_extended_config(model, added))
    outputs = _output_tables(model)
    old = {variable.path: variable for variable in model.weights}
    for variable in extended.weights:
        if variable.path not in old:
            raise KseqError(f"The extended model has a weight the model lacks. Received: "
                            f"{variable.path}")
        value = old[variable.path].numpy()
        if tuple(value.shape) != tuple(variable.shape):
            is_table = variable.path.endswith("embeddings") and variable.path not in outputs
            value = _grown(value, variable.shape, output_row=not is_table)
        variable.assign(value)
    recipe = getattr(model, "recipe", None)
    if recipe is not None:
        extended.recipe = recipe
    return extended.compile_from_recipe((recipe or {}).get("training", {}))
