"""The translation setups the translator benchmarks share.

Sizes (`default`: issue #7's; `tiny`: seconds), the `numbers` token ids both
sides read, fixed-shape and length-bucketed batches, and kseq's Transformer in
keras-hub's layout (so kseq and its peer train the same function the same way),
for `bench_translator.py` and `bench_real_rows_train_step.py`; and kseq on the
OpenNMT-tf peer's configuration with its token batches (`onmt_config_*`), for
`bench_onmt_config.py` and `experiments/onmt_step_parts.py`.
"""

SIZES = {
    "default": dict(layers=1, width=256, ff=2048, heads=8, vocab=15000, batch=64,
                    train_steps=120, timed_steps=30, forced_length=40, max_source=24,
                    example_sentences=8, train_pairs=6000),
    "tiny": dict(layers=1, width=16, ff=32, heads=2, vocab=200, batch=8,
                 train_steps=4, timed_steps=2, forced_length=6, max_source=24,
                 example_sentences=1,
                 # Enough pairs for its few batches of each shape (6,000: 2 s to draw and read),
                 # and the optimizer built before the first step (`prebuilt`): untimed warm-up.
                 train_pairs=600, prebuilt_optimizer=True,
                 # The smoke run checks the XLA path once, not each search's compilation.
                 xla_searches=("greedy_natural",), xla_train_one_shape=True),
}
EXAMPLE_LENGTH = 40  # the keras.io example pads every sentence to this length


# === Shared data: the same ids for both sides ===

def build_data(size):
    """Token ids of `numbers` pairs with 6–20 source tokens, a vocabulary padded to `vocab`."""
    import numpy as np

    from kseq.data import numbers_dataset
    from kseq.text import WordTokenizer

    pairs = numbers_dataset("fr", train_size=size.get("train_pairs", 6000), valid_size=0,
                            test_size=200)
    words = WordTokenizer.build_vocabulary([s for p in pairs["train"] for s in p])
    filler = [f"<unused_{i}>" for i in range(size["vocab"] - words.vocabulary_size)]
    tokenizer = WordTokenizer(words.vocabulary + filler)

    def ids(texts):
        return [row for row in tokenizer.tokenize(texts).to_list()]

    out = {}
    for split in ("train", "test"):
        sources, targets = ids([s for s, _ in pairs[split]]), ids([t for _, t in pairs[split]])
        keep = [i for i, s in enumerate(sources) if 6 <= len(s) <= 20 and len(targets[i]) < 23]
        out[split] = ([sources[i] for i in keep], [targets[i] for i in keep])
    return tokenizer, out, np


def padded_batches(data, batch, length, np, shuffle_seed=0):
    """Fixed-shape `(source [B, L], decoder input [B, L], labels [B, L])` batches."""
    sources, targets = data
    order = np.random.default_rng(shuffle_seed).permutation(len(sources))
    for start in range(0, len(order) - batch + 1, batch):
        rows = order[start:start + batch]
        src = np.zeros([batch, length], "int32")
        dec = np.zeros([batch, length], "int32")
        lab = np.zeros([batch, length], "int32")
        for r, i in enumerate(rows):
            s, t = sources[i][:length], targets[i][: length - 1]
            src[r, : len(s)] = s
            dec[r, : len(t) + 1] = [2] + t
            lab[r, : len(t) + 1] = t + [3]
        yield src, dec, lab


def bucketed_batches(data, batch, np, boundaries=(8, 12, 16, 20, 24)):
    """kseq's natural batches: each batch padded only to its length bucket."""
    sources, targets = data
    by_bucket = {b: [] for b in boundaries}
    for i in range(len(sources)):
        need = max(len(sources[i]), len(targets[i]) + 1)
        by_bucket[next(b for b in boundaries if need <= b)].append(i)
    batches = []
    for bound, rows in by_bucket.items():
        subset = ([sources[i] for i in rows], [targets[i] for i in rows])
        batches += list(padded_batches(subset, batch, bound, np))
    order = np.random.default_rng(1).permutation(len(batches))
    return [batches[i] for i in order]


def real_tokens(batch):
    src, _, lab = batch
    return int((src > 0).sum() + (lab > 0).sum())


def prebuilt(model, size):
    """`model` with its optimizer's variables made now when `size` says so (the tiny size):
    Keras makes them inside the first step's trace and then traces that step again, so the
    first step traces once. Only the untimed warm-up changes (values: zeros, step 0)."""
    if size.get("prebuilt_optimizer"):
        model.optimizer.build(model.trainable_variables)
    return model


def kseq_model(tokenizer, size, dtype=None):
    import keras

    import kseq

    model = kseq.models.build_translator(
        "transformer", tokenizer, tokenizer, num_layers=size["layers"], num_heads=size["heads"],
        hidden_dim=size["width"], intermediate_dim=size["ff"], dropout=0.1,
        max_source_length=EXAMPLE_LENGTH, max_target_length=EXAMPLE_LENGTH + 8,
        share_embeddings="none", position="learned", norm_first=False,
        # keras-hub's layout, so both sides train the same function the same way.
        scale_embeddings=False, embedding_dropout=0.0, activation_dropout=0.0, dtype=dtype)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=kseq.metrics.MaskedSparseCrossEntropy(0.0), jit_compile=False)
    return prebuilt(model, size)


# === The arithmetic limit: what a training figure is a fraction of ===

def flops_per_token(size):
    """Training FLOPs per real token: 6 × the weights one token meets (attention scores ignored)."""
    d, f, layers, vocab = size["width"], size["ff"], size["layers"], size["vocab"]
    encoder = layers * (4 * d * d + 2 * d * f)
    decoder = layers * (4 * d * d + 4 * d * d + 2 * d * f) + d * vocab
    return {"source": 6 * encoder, "target": 6 * decoder,
            "formula": "source 6·L(4d²+2df); target 6·(L(8d²+2df)+dV); "
                       "average over the timed tokens' source/target mix"}


def matmul_flops(n=2048, calls=10, dtype="float32"):
    """The machine's practical limit: FLOP/s of an `n`² matmul (2048²; smoke: 512²) in
    `dtype` (float32; bfloat16 for the bf16 limit)."""
    import time

    import tensorflow as tf

    a, b = (tf.cast(tf.random.normal([n, n]), dtype) for _ in range(2))
    fn = tf.function(tf.matmul)
    fn(a, b).numpy()
    started = time.perf_counter()
    for _ in range(calls):
        out = fn(a, b)
    out.numpy()
    return 2 * n ** 3 * calls / (time.perf_counter() - started)


# === kseq on the OpenNMT-tf peer's configuration (issue #7) ===

ONMT_TOKEN_BUDGET = 4096


def onmt_config_recipe(boundaries=None, dropout=0.1, jit_compile=False):
    """The `libreoffice_en_fr_transformer` recipe with the peer's 4,096-token batches and
    dropout; `boundaries`: bucket boundaries (default: the preset's)."""
    from kseq import zoo

    return zoo.merge(zoo.load_recipe("libreoffice_en_fr_transformer"),
                     {"training": {"token_budget": ONMT_TOKEN_BUDGET, "jit_compile": jit_compile},
                      "model": {"dropout": dropout}},
                     {"training": {"boundaries": boundaries}} if boundaries else None)


def onmt_config_model(recipe, train_pairs, precision="float32"):
    """A new compiled Transformer translator of `recipe`, built under `precision`."""
    from kseq import zoo
    from kseq.training.precision import precision_scope

    with precision_scope(precision):
        return zoo.translator("transformer", train_data=train_pairs, recipe=recipe,
                              **{k: v for k, v in recipe["model"].items() if k != "arch"})


def onmt_config_batches(model, train_pairs, boundaries, steps):
    """`(warm, timed)` token batches of `train_pairs`: the first batch of each shape (for
    tracing, untimed), then up to `steps` further batches to time."""
    from kseq.models.translator.translator_preprocessor import TranslatorPreprocessor

    preprocessor = TranslatorPreprocessor(model.source_tokenizer, model.target_tokenizer,
                                          model.max_source_length, model.max_target_length)
    dataset = preprocessor.training_dataset(train_pairs, boundaries,
                                            token_budget=ONMT_TOKEN_BUDGET)
    batches = list(dataset.take(steps + 4 * len(boundaries)))
    shapes = {}
    for batch in batches:
        shapes.setdefault(tuple(batch[0]["source_ids"].shape) + tuple(batch[1].shape), batch)
    warm = list(shapes.values())
    return warm, [b for b in batches if all(b is not w for w in warm)][:steps]
