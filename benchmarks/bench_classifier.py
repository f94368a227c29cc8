"""Inference speed of kseq's classifier and tagger against keras-hub-layer models of the same size.

    .venv/bin/python benchmarks/bench_classifier.py               # issue #17's throughput row
    .venv/bin/python benchmarks/bench_classifier.py --smoke       # seconds: a smoke test

Sentences per second at batch 256 on synthetic sentences (fixed seed, 10-30
words each; the classifier reads words, the tagger characters of
Turkish-like words). Random weights: speed does not depend on them. Rows:

- **kseq forward**: the model's forward pass on token ids (what
  `predict_labels` / `tag` call), wrapped in a `tf.function`, after one
  warm-up pass that traces every batch width;
- **kseq end to end**: `predict_labels(texts, batch_size=256)` /
  `tag(sentences, batch_size=256)` from raw strings, as a user calls them;
  with two diagnostic rows: the preprocessor alone (strings -> padded ids) and
  the forward pass called eagerly;
- **peer forward**: `keras_hub.layers.TokenAndPositionEmbedding`, pre-LN
  `keras_hub.layers.TransformerEncoder` blocks, a final `LayerNormalization`,
  masked mean pooling (`keras.layers.GlobalAveragePooling1D`) and a `Dense`
  head (per token for the tagger), in a `tf.function`, on the same id batches.
  Same vocabulary, width, heads, feed-forward width and layers as kseq's
  Transformer encoder; the parameter counts differ only by keras-hub's learned
  position table (kseq's zoo encoder uses sinusoidal positions, no weights).

The RNN presets (`sentiment_classifier`: BiGRU + attention pooling;
`turkish_pos_tagger`: a 2-layer character BiGRU) are timed on kseq's side only
(keras-hub has no recurrent layers), on the first 512 sentences. kseq's and
the peer's forward passes alternate within each repeat, so a busy machine
slows both alike; medians of `--repeats`. Batches `[B, W]` (`B` = 256, `W` the
padded width) are padded as kseq's preprocessor pads them (the longest row,
rounded up to 8). Prints JSON; writes it to
`benchmarks/results/bench_classifier.json` (`--smoke`: only with `--json`).
"""

import platform
import sys
import time
import warnings

import harness  # benchmarks/harness.py, before TensorFlow
import numpy as np

BATCH = 256
TURKISH_LETTERS = "abcçdefgğhıijklmnoöprsştuüvyz"
TAGS = ["ADJ", "ADP", "ADV", "AFFIX", "CONJ", "DET", "NOUN", "NUM", "ONOM", "PRON", "PRT",
        "PUNCT", "VERB", "X"]  # the turkish_pos_tagger preset's tags
SIZES = {
    # The sentiment preset's vocabulary and length; the zoo's Transformer defaults.
    "default": dict(sentences=1024, vocabulary=20000, classifier_length=64, tagger_length=320,
                    transformer=dict(num_layers=2, num_heads=4, hidden_dim=128,
                                     intermediate_dim=512),
                    rnn_sentences=512),  # the RNN preset rows (kseq only), to save time
    "quick": dict(sentences=256, vocabulary=2000, classifier_length=64, tagger_length=320,
                  transformer=dict(num_layers=1, num_heads=2, hidden_dim=32,
                                   intermediate_dim=64),
                  rnn_sentences=0),
}


# === Synthetic sentences (fixed seed) ===

def lexicon(rng, size, letters, mean_length):
    """`size` distinct random words, Poisson lengths around `mean_length`, in random rank order."""
    words = set()
    while len(words) < size:
        length = int(np.clip(rng.poisson(mean_length - 1) + 1, 1, 3 * mean_length))
        words.add("".join(rng.choice(list(letters), length)))
    return list(rng.permutation(sorted(words)))


def sentences(rng, words, count, separate_punctuation):
    """`count` sentences of 10-30 Zipf-drawn words: capitalised, commas, a final mark."""
    weights = 1.0 / np.arange(1, len(words) + 1) ** 1.07
    weights /= weights.sum()
    out = []
    for _ in range(count):
        picked = [words[i] for i in rng.choice(len(words), rng.integers(10, 31), p=weights)]
        picked[0] = picked[0].capitalize()
        glue = " " if separate_punctuation else ""
        picked = [w + glue + "," if rng.random() < 0.08 else w for w in picked]
        out.append(" ".join(picked) + glue + str(rng.choice([".", ".", ".", "?", "!"])))
    return out


def classifier_data(size, rng):
    """A word tokenizer of exactly `vocabulary` entries and texts drawn from it."""
    from kseq.text import WordTokenizer
    from kseq.text.tokenizer import RESERVED_TOKENS
    from kseq.text.word_tokenizer import JOINER

    marks = [JOINER + m for m in ",.?!"]
    words = lexicon(rng, size["vocabulary"] - len(RESERVED_TOKENS) - len(marks),
                    "abcdefghijklmnopqrstuvwxyz", 5)
    tokenizer = WordTokenizer(list(RESERVED_TOKENS) + marks + words, lowercase=True)
    return tokenizer, sentences(rng, words, size["sentences"], separate_punctuation=False)


def tagger_data(size, rng):
    """A character tokenizer and sentences of Turkish-like words (punctuation as words)."""
    from kseq.text import CharTokenizer
    from kseq.text.tokenizer import RESERVED_TOKENS

    words = lexicon(rng, 5000, TURKISH_LETTERS, 5)  # the treebank: 4.6 characters a word
    texts = sentences(rng, words, size["sentences"], separate_punctuation=True)
    characters = sorted(set("".join(texts)) | set(TURKISH_LETTERS) | set(TURKISH_LETTERS.upper()))
    return CharTokenizer(list(RESERVED_TOKENS) + characters), texts


# === The peer: keras-hub layers ===

def peer_model(vocabulary, length, outputs, per_token, num_layers, num_heads, hidden_dim,
               intermediate_dim):
    """keras-hub embedding + pre-LN encoder blocks + final norm, then a pooled or per-token head."""
    import keras
    import keras_hub

    # keras-hub's TokenAndPositionEmbedding re-attaches the mask its inner PositionEmbedding drops.
    warnings.filterwarnings("ignore", message=".*PositionEmbedding.*does not support masking")
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    x = keras_hub.layers.TokenAndPositionEmbedding(vocabulary, length, hidden_dim,
                                                   mask_zero=True)(token_ids)
    for _ in range(num_layers):  # the padding mask travels with x (mask_zero)
        x = keras_hub.layers.TransformerEncoder(intermediate_dim, num_heads, dropout=0.1,
                                                normalize_first=True)(x)
    x = keras.layers.LayerNormalization(epsilon=1e-5)(x)
    if not per_token:
        x = keras.layers.GlobalAveragePooling1D()(x)  # masked mean over real tokens
    return keras.Model({"token_ids": token_ids}, keras.layers.Dense(outputs)(x))


# === Timing ===

def id_batches(preprocessor, texts, key):
    """Strings -> the padded id batches `[B, W]` (`key` of the inputs) kseq's model gets."""
    import tensorflow as tf

    return [preprocessor.inference_inputs(tf.constant(texts[i:i + BATCH]))[key]
            for i in range(0, len(texts), BATCH)]


def forward(model):
    """A function running `model` over every batch, to numpy."""
    def run(batches):
        for ids in batches:
            model(ids).numpy()
    return run


def compiled(model, name):
    """`model`'s inference forward on ids `[B, W]` in a `tf.function` (one trace per width)."""
    import tensorflow as tf

    return tf.function(lambda ids: model({name: ids}, training=False))


def medians(runs, repeats):
    """Median seconds of each `(fn, args)` of `runs` (a dict), the calls alternating."""
    for fn, args in runs.values():
        fn(*args)  # warm-up: traces, table and kernel set-up

    def seconds(fn, args):
        started = time.perf_counter()
        fn(*args)
        return time.perf_counter() - started

    sides = {name: (lambda fn=fn, args=args: seconds(fn, args)) for name, (fn, args) in runs.items()}
    return {name: float(m) for name, m in harness.alternated(sides, repeats)["median"].items()}


def speeds(seconds, count):
    return {name: round(count / s, 1) for name, s in seconds.items()}


def shape_facts(batches):
    real = [float((np.asarray(ids) > 0).sum(axis=1).mean()) for ids in batches]
    return {"batch": BATCH, "batches": len(batches),
            "padded_widths": [int(ids.shape[1]) for ids in batches],
            "mean_real_length": round(float(np.mean(real)), 1)}


# === One task ===

def transformer_row(kseq_model, input_name, peer, texts, batches, end_to_end, repeats):
    """kseq's compiled and end-to-end (`end_to_end(texts)`) speeds next to the peer's forward."""
    count = len(texts)
    seconds = medians({
        "kseq_forward": (forward(compiled(kseq_model, input_name)), (batches,)),
        "peer_forward": (forward(compiled(peer, "token_ids")), (batches,)),
    }, repeats)
    seconds.update(medians({
        "kseq_end_to_end": (end_to_end, (texts,)),
        "kseq_preprocess_only": (id_batches, (kseq_model.preprocessor, texts, input_name)),
        "kseq_forward_eager": (forward(lambda ids: kseq_model({input_name: ids}, training=False)),
                               (batches,)),
    }, repeats))
    per_second = speeds(seconds, count)
    return {
        "sentences_per_second": per_second,
        "ratio_kseq_forward_over_peer_forward": round(
            per_second["kseq_forward"] / per_second["peer_forward"], 2),
        "ratio_kseq_end_to_end_over_peer_forward": round(
            per_second["kseq_end_to_end"] / per_second["peer_forward"], 2),
        "parameters": {"kseq": kseq_model.count_params(), "peer": peer.count_params()},
    }


def classifier_rows(size, repeats):
    import kseq

    tokenizer, texts = classifier_data(size, np.random.default_rng(0))
    labels = ["negative", "positive"]
    model = kseq.zoo.classifier("transformer", labels=labels, vocab=tokenizer,
                                max_length=size["classifier_length"], **size["transformer"])
    peer = peer_model(tokenizer.vocabulary_size, size["classifier_length"], len(labels),
                      per_token=False, **size["transformer"])
    batches = id_batches(model.preprocessor, texts, "token_ids")
    result = {"transformer_mean_pooling": {
        "model": {"vocabulary": tokenizer.vocabulary_size, "max_length": size["classifier_length"],
                  "classes": len(labels), **size["transformer"],
                  "peer_position_table_parameters": size["classifier_length"]
                  * size["transformer"]["hidden_dim"]},
        **transformer_row(model, "token_ids", peer, texts, batches,
                          lambda t: model.predict_labels(t, batch_size=BATCH), repeats)}}
    if size["rnn_sentences"]:
        rnn = kseq.zoo.classifier("sentiment_classifier", load_weights=False,
                                  labels=labels, vocab=tokenizer)
        result["rnn_preset_sentiment_classifier"] = rnn_row(
            rnn, "token_ids", texts[:size["rnn_sentences"]], batches,
            lambda t: rnn.predict_labels(t, batch_size=BATCH), repeats)
    return result, shape_facts(batches)


def tagger_rows(size, repeats):
    import kseq

    tokenizer, texts = tagger_data(size, np.random.default_rng(1))
    model = kseq.zoo.tagger("transformer", labels=TAGS, vocab=tokenizer,
                            max_length=size["tagger_length"], **size["transformer"])
    peer = peer_model(tokenizer.vocabulary_size, size["tagger_length"], len(TAGS),
                      per_token=True, **size["transformer"])
    batches = id_batches(model.preprocessor, texts, "char_ids")
    result = {"transformer": {
        "model": {"vocabulary": tokenizer.vocabulary_size, "max_length": size["tagger_length"],
                  "tags": len(TAGS), **size["transformer"],
                  "peer_position_table_parameters": size["tagger_length"]
                  * size["transformer"]["hidden_dim"]},
        **transformer_row(model, "char_ids", peer, texts, batches,
                          lambda t: model.tag(t, batch_size=BATCH), repeats)}}
    if size["rnn_sentences"]:
        rnn = kseq.zoo.tagger("turkish_pos_tagger", load_weights=False, labels=TAGS,
                              vocab=tokenizer)
        result["rnn_preset_turkish_pos_tagger"] = rnn_row(
            rnn, "char_ids", texts[:size["rnn_sentences"]], batches,
            lambda t: rnn.tag(t, batch_size=BATCH), repeats)
    return result, shape_facts(batches)


def rnn_row(model, input_name, texts, batches, end_to_end, repeats):
    """kseq only: the preset's compiled forward and its end-to-end call on `texts`."""
    batches = batches[: len(texts) // BATCH]
    seconds = medians({"kseq_forward": (forward(compiled(model, input_name)), (batches,)),
                       "kseq_end_to_end": (end_to_end, (texts,))}, repeats)
    return {"sentences_per_second": speeds(seconds, len(texts)), "sentences": len(texts),
            "parameters": model.count_params()}


def versions():
    import keras
    import keras_hub
    import tensorflow as tf

    import kseq

    return {"kseq": kseq.__version__, "keras": keras.__version__,
            "keras_hub": keras_hub.__version__, "tensorflow": tf.__version__,
            "numpy": np.__version__, "python": platform.python_version()}


def main(argv=None):
    parser = harness.arguments(__doc__, repeats=5)
    args = harness.parse(parser, argv)  # --smoke: small models, one batch, no RNN presets
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1. Received: {args.repeats}")
    size = SIZES["quick" if args.smoke else "default"]
    started, load_before = time.perf_counter(), harness.load_average()
    classifier, classifier_shapes = classifier_rows(size, args.repeats)
    tagger, tagger_shapes = tagger_rows(size, args.repeats)
    result = {
        "settings": "quick" if args.smoke else "default", "repeats": args.repeats,
        "sentences": size["sentences"],
        "classifier": {"inputs": {"unit": "word tokens", **classifier_shapes}, **classifier},
        "tagger": {"inputs": {"unit": "characters", **tagger_shapes}, **tagger},
        # A busy machine lowers every row; kseq's and the peer's forward rows alternate.
        "load_average_before": load_before,
        "versions": versions(), "seconds": round(time.perf_counter() - started, 1),
    }
    harness.write("bench_classifier", result, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
