"""`LanguageModelPreprocessor`: texts (and categories) <-> ids for training, search and serving.

A text is one sequence `c y </s>`: the first input token `c` is the text's
category token (an id after the tokenizer's vocabulary, one per category, so a
category is a learned prefix) or `<s>` for a text without one; the model reads
`c y` and learns to predict `y </s>`.

Shape letters: `B` batch, `T` sequence length, `P` prompt width, `V` the
tokenizer's vocabulary, `C` categories.
"""

import keras
import tensorflow as tf

from kseq.errors import KseqError
from kseq.models.preprocessors.preprocessor import LENGTH_STEP, Preprocessor
from kseq.models.preprocessors.text_targets import TextTargets
from kseq.text import tokenizer_from_config
from kseq.text.tokenizer import END_ID, START_ID

# What `category_ids` gives a category the model does not know (never an embedding row).
UNKNOWN_CATEGORY = -1


def category_of(item, index, name="data"):
    """`(category, text)` of one item of `data`: a text (category "") or a pair."""
    if isinstance(item, str):
        return "", item
    if isinstance(item, (tuple, list)) and len(item) == 2 and all(
            isinstance(part, str) for part in item):
        return item[0], item[1]
    raise KseqError(f"`{name}` must hold texts or (category, text) string pairs; item "
                    f"{index} is neither. Received: {name}[{index}]={item!r:.200}")


def category_text_pairs(data, name="data"):
    """`data` (a list of texts or of `(category, text)` pairs) as a list of pairs."""
    if isinstance(data, (str, bytes)) or data is None:
        raise KseqError(f"`{name}` must be a list of texts or of (category, text) pairs. "
                        f"Received: {name}={data!r:.200}")
    return [category_of(item, index, name) for index, item in enumerate(data)]


def iter_text_rows(path, skipped=None):
    """`(line, category, text)` rows of a data file (plain or gzip), one at a time: one text
    a line, or `category<TAB>text`. Empty texts and lines that are not UTF-8 are skipped,
    counted in `skipped` (`{"empty": n, "not_utf8": n}`) when given."""
    from kseq.data.pipeline.parallel_text import _open

    skipped = {} if skipped is None else skipped
    with _open(path) as handle:  # a one-line error naming an unreadable path
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                skipped["not_utf8"] = skipped.get("not_utf8", 0) + 1
                continue
            category, text = line.split("\t", 1) if "\t" in line else ("", line)
            if not text.strip():
                skipped["empty"] = skipped.get("empty", 0) + 1
                continue
            yield number, category, text


def read_text_rows(path, limit=None):
    """The first `limit` (all if None) `(category, text)` pairs of a data file (see
    `iter_text_rows`); `KseqError` naming the file when it holds none."""
    import itertools

    pairs = [(category, text) for _, category, text in
             itertools.islice(iter_text_rows(path), limit)]
    if not pairs:
        raise KseqError(f"No text in the data file (one a line, or category<TAB>text). "
                        f"Received: {path}")
    return pairs


@keras.saving.register_keras_serializable(package="kseq")
class LanguageModelPreprocessor(TextTargets, Preprocessor):
    """Tokenises `(category, text)` strings for a `LanguageModel`.

    The decoder input is `c y` and the label `y </s>` (`c`: the category's
    token, `<s>` for the category ""), with `y` cut to `max_length - 1`
    tokens. Category `i` of `categories` has id `V + i`.

    Args:
        tokenizer: a `kseq.text` tokenizer (word, char or wordpiece).
        max_length: longest decoder input or label, in tokens (the model's
            position table).
        categories: the category names the model conditions on (may be empty:
            a plain language model).

    Example:
    >>> import tensorflow as tf, kseq
    >>> tok = kseq.text.WordTokenizer.build_vocabulary(["one two three"])
    >>> pre = kseq.models.LanguageModelPreprocessor(tok, 8, categories=["numbers"])
    >>> features, labels = pre(tf.constant(["numbers"]), tf.constant(["one two"]))
    >>> features["decoder_ids"].numpy()[0].tolist()[0] == tok.vocabulary_size
    True
    >>> labels.numpy()[0].tolist()[-1] == kseq.text.END_ID
    True
    """

    def __init__(self, tokenizer, max_length, categories=()):
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.categories = [str(name) for name in categories]
        if len(set(self.categories)) != len(self.categories) or "" in self.categories:
            raise KseqError("`categories` must be distinct non-empty names. Received: "
                            f"categories={self.categories!r:.200}")
        # What `kseq.data`'s bucketing and `Task.training_dataset` read, set from a recipe.
        self.default_boundaries = None
        self.default_batch_size = None

    # `TextTargets` reads the output side under these names.
    @property
    def target_tokenizer(self):
        return self.tokenizer

    @property
    def max_target_length(self):
        return self.max_length

    @property
    def text_vocabulary_size(self):
        """`V`: ids below it are tokens; `V + i` is category `i`."""
        return self.tokenizer.vocabulary_size

    @property
    def input_signature(self):
        """The search's input: each row's first token `[B]` int32 (`start_ids`)."""
        return [tf.TensorSpec([None], tf.int32, name="start_ids")]

    def check_categories(self, categories, name="category"):
        """Raises one `KseqError` naming the first category the model does not know."""
        known = set(self.categories)
        for category in categories:
            if category and category not in known:
                have = (f"one of {self.categories[:20]}" + (" ..." if len(known) > 20 else "")
                        if known else "none: this model was trained without categories")
                raise KseqError(f"Unknown category; the model knows {have}. Received: "
                                f"{name}={category!r}")

    def category_ids(self, categories):
        """`[B]` category strings -> `[B]` int32 first tokens: `V + i`, `<s>` for "", and
        `UNKNOWN_CATEGORY` for a name the model does not know."""
        categories = tf.convert_to_tensor(categories, tf.string)
        fallback = tf.where(tf.equal(categories, ""), START_ID, UNKNOWN_CATEGORY)
        if not self.categories:
            return fallback
        match = tf.equal(categories[:, None], tf.constant(self.categories)[None, :])  # [B, C]
        index = tf.argmax(tf.cast(match, tf.int32), axis=1, output_type=tf.int32)
        return tf.where(tf.reduce_any(match, axis=1), self.text_vocabulary_size + index,
                        fallback)

    def __call__(self, categories, texts):
        """Batched: `[B]` categories and texts -> ragged `{"decoder_ids"}` and labels."""
        ids = self.tokenizer.tokenize(texts)[:, : self.max_length - 1]  # [B, (T-1)]
        rows = ids.nrows()
        first = tf.cast(self.category_ids(categories), ids.dtype)[:, None]  # [B, 1]
        decoder_ids = tf.concat([first, ids], axis=1)
        labels = tf.concat([ids, tf.fill([rows, 1], tf.cast(END_ID, ids.dtype))], axis=1)
        return {"decoder_ids": decoder_ids}, labels

    def inference_inputs(self, prompts, categories):
        """`[B]` prompts and categories -> `{"start_ids" [B], "prompt_ids" [B, P],
        "prompt_lengths" [B], "truncated" [B]}` (a prompt is cut to `max_length - 1`
        tokens; `P` a multiple of 8, so a search compiles for few widths)."""
        ragged = self.tokenizer.tokenize(prompts)
        truncated = ragged.row_lengths() > self.max_length - 1
        ragged = ragged[:, : self.max_length - 1]
        longest = tf.reduce_max(tf.concat([ragged.row_lengths(), [1]], 0))
        width = (longest + LENGTH_STEP - 1) // LENGTH_STEP * LENGTH_STEP
        ids = ragged.to_tensor(shape=tf.stack([ragged.nrows(), width]))
        return {"start_ids": self.category_ids(categories),
                "prompt_ids": tf.cast(ids, tf.int32),
                "prompt_lengths": tf.cast(ragged.row_lengths(), tf.int32),
                "truncated": truncated}

    def padded_widths(self):
        """Decoder inputs and labels need at most `max_length` columns."""
        return {"decoder_ids": self.max_length}, self.max_length

    def to_dataset(self, data):
        """Texts or `(category, text)` pairs (a list), or a dataset of string pairs."""
        if isinstance(data, tf.data.Dataset):
            return data
        pairs = category_text_pairs(data)
        self.check_categories([category for category, _ in pairs])
        return tf.data.Dataset.from_tensor_slices(
            (tf.constant([c for c, _ in pairs], tf.string),
             tf.constant([t for _, t in pairs], tf.string)))

    def training_dataset(self, data, boundaries=None, batch_size=None, token_budget=None,
                         **options):
        """As `Preprocessor.training_dataset`; `boundaries` and `batch_size` default to the
        recipe's (`training.boundaries`, `training.batch_size`), else lengths up to
        `max_length` and 32."""
        if boundaries is None:
            boundaries = self.default_boundaries or sorted(
                {min(width, self.max_length) for width in (16, 32, 64, 128, 256)}
                | {self.max_length})
        if batch_size is None and token_budget is None:
            batch_size = self.default_batch_size or 32
        return super().training_dataset(data, boundaries, batch_size, token_budget, **options)

    def get_config(self):
        return {"tokenizer": self.tokenizer.get_config(), "max_length": self.max_length,
                "categories": list(self.categories)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["tokenizer"] = tokenizer_from_config(config["tokenizer"])
        return cls(**config)
