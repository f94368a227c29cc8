"""Language-model quality and speed (issue 51): a trained category-conditioned LM against
n-gram baselines on the same tokens, what its category is worth, and sampling speed next to
a keras-hub sampler, every row in one run.

    .venv/bin/python benchmarks/bench_language_model.py           # the shipped preset
    .venv/bin/python benchmarks/bench_language_model.py --model runs/debian_descriptions_lm

Rows (the recipe's data builder gives the texts; held-out = its **test** split, the n-gram
weights and discounts tuned on its **valid** split, counts from every **train** text the model
learnt from: its recipe's train split, and a pre-training stage's too: a preset's
`sources.pretraining_data`, or the recipe of the run a fine-tuned run started from):

- Baselines on the model's own tokens (its tokenizer; each text cut to `max_length - 1`
  tokens, then the end token, exactly the tokens `model.perplexity` scores; the counts are
  checked equal): a unigram model (maximum likelihood interpolated with uniform), and
  bigram and trigram models, each both interpolated (Jelinek-Mercer, weights by EM on
  valid) and interpolated Kneser-Ney (one discount per order, tuned on valid). None sees
  the category. Floor: the model's held-out perplexity <= 0.8x the best n-gram's.
- Conditioning: held-out perplexity with each text's true category against the same
  texts under each wrong category (the mean cross-entropy over all C - 1 wrong ones, so
  "averaged over categories"), overall and per category. Floor: ratio <= 0.95.
- Samples: `--samples` texts per category (top-p 0.9, seeded, empty prompt), labelled by
  a binarised unigram+bigram multinomial Naive Bayes trained on the real train texts (its
  accuracy on the real test texts is its ceiling). Floor: >= 60% labelled with the
  category they were generated for (chance ~ 1/C). Also: the share of samples that
  copy a training text verbatim.
- Speed: sampled generation (top-p 0.9) at batch 64, every row forced to `--gen-length`
  tokens (end token blocked), tokens/s of kseq's `generate` (without and with XLA) next to
  keras-hub's `TopPSampler` driving a same-size decoder built from keras-hub layers
  (`TokenAndPositionEmbedding` with tied weights, pre-LN `TransformerDecoder` blocks with
  their self-attention cache, a final LayerNorm: GPT-2's `call_with_cache` loop), run as
  keras-hub's `CausalLM.generate` runs it (one `tf.function`, XLA). Alternated rounds; a
  ratio, same run. Untrained peer weights: the work per token is the same.

Measured (the shipped debian_descriptions_lm, 2026-12-06, 2 cores, load 1.4; avx512, amx):
pre-trained 36 epochs on every Debian section's texts (`data.background_sections="all"`:
30,730 texts, the six sections' with their category, the rest without), then fine-tuned on
the six (`--from`, peak 2e-3; tools/train_debian_descriptions_lm.sh). Test perplexity 56.9
against the Kneser-Ney trigram's 75.0 counting the same 30,730 texts (**0.759x**; interpolated
trigram 94.8, Kneser-Ney bigram 121.3, unigram 808.3); 56.9 with the true section against 62.9
with a wrong one (0.904); Naive Bayes labels 62.5% of 600 samples with their section (fonts
63%, games 69%, graphics 53%, net 80%, science 80%, sound 30%; 79.7% of the real test texts);
sampling 4,707 tokens/s against keras-hub's 1,233 (3.82x; kseq with XLA 1,490, 1.21x).
The fine-tuning peak trades the two (results/lm_fine_tuning_trials.json): after 36 epochs,
1e-3 gives perplexity 54.9 (0.733x) and 60.0% of samples with their section, 2e-3 56.9 and
63%; after 16 and 26 epochs the same order, with 5e-4 lowest.

Earlier presets and runs: the six sections alone (33 minutes, 4,181 texts, 250k tokens):
test perplexity 116.0 against its Kneser-Ney trigram's 112.6 (1.03x), conditioning 0.805,
83.7% of samples with their section: the model fits its train split well below the n-grams
(train perplexity ~45 with dropout) while validation stopped at ~115 after epoch 11; a
WordPiece-2k run with dropout 0.3 did worse against its own trigram
(results/train_debian_descriptions_lm.json). The uncategorised pre-training alone (115
minutes, epoch 16; results/bench_language_model_background.json): 64.0 against the same
75.0 (0.853x), conditioning 0.913, but only 53.3% of samples with their section: trained
mostly without a category, the model leans less on it, which the fine-tuning on the six partly
restores.
"""

import collections
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402 (sets TensorFlow's log level before it loads)

FLOORS = {"perplexity_vs_best_ngram": 0.8, "true_vs_wrong_category": 0.95,
          "sample_category_accuracy": 0.6}
PRESET = "debian_descriptions_lm"


# === n-gram baselines (pure Python; sequences are lists of token ids ending with the end id) ===

def histories(sequence, order, start_id):
    """`(history, token)` of each position: history = the `order - 1` tokens before it,
    padded on the left with `start_id`.

    >>> histories([5, 6, 2], 3, 1)
    [((1, 1), 5), ((1, 5), 6), ((5, 6), 2)]
    """
    padded = [start_id] * (order - 1) + list(sequence)
    return [(tuple(padded[i : i + order - 1]), padded[i + order - 1])
            for i in range(len(sequence))]


def ngram_tables(sequences, order, start_id):
    """`tables[k][history of k - 1 tokens][token]` = count, for k = 1..order (raw counts)."""
    tables = {k: collections.defaultdict(collections.Counter) for k in range(1, order + 1)}
    for sequence in sequences:
        for history, token in histories(sequence, order, start_id):
            for k in range(1, order + 1):
                tables[k][history[len(history) - (k - 1):] if k > 1 else ()][token] += 1
    return tables


class InterpolatedNgram:
    """Jelinek-Mercer interpolation of maximum-likelihood k-gram estimates (k = 1..order)
    and the uniform distribution over `vocabulary_size` tokens, its weights fitted by EM on
    held-out `tune` sequences (order 1: the unigram model).

    >>> model = InterpolatedNgram([[3, 4, 2], [3, 5, 2]], 2, vocabulary_size=6, start_id=1)
    >>> model.fit_weights([[3, 4, 2]])
    >>> round(sum(model.probability((3,), w) for w in range(6)), 6)
    1.0
    """

    def __init__(self, sequences, order, vocabulary_size, start_id):
        self.order, self.vocabulary_size, self.start_id = order, vocabulary_size, start_id
        self.tables = ngram_tables(sequences, order, start_id)
        self.totals = {k: {h: sum(c.values()) for h, c in table.items()}
                       for k, table in self.tables.items()}
        self.weights = [1.0 / (order + 1)] * (order + 1)  # uniform, then k = 1..order

    def components(self, history, token):
        values = [1.0 / self.vocabulary_size]
        for k in range(1, self.order + 1):
            h = history[len(history) - (k - 1):] if k > 1 else ()
            total = self.totals[k].get(h)
            values.append(self.tables[k][h][token] / total if total else 0.0)
        return values

    def probability(self, history, token):
        return sum(w * p for w, p in zip(self.weights, self.components(history, token)))

    def fit_weights(self, sequences, iterations=40):
        rows = [self.components(h, t) for s in sequences
                for h, t in histories(s, self.order, self.start_id)]
        for _ in range(iterations):
            shares = [0.0] * len(self.weights)
            for row in rows:
                mixed = sum(w * p for w, p in zip(self.weights, row))
                for i, (w, p) in enumerate(zip(self.weights, row)):
                    shares[i] += w * p / mixed
            self.weights = [share / len(rows) for share in shares]


class KneserNey:
    """Interpolated Kneser-Ney of `order` (raw counts at the top order, continuation counts
    below, the uniform distribution under order 1), discount `discounts[k - 1]` at order k.

    >>> model = KneserNey([[3, 4, 2], [3, 5, 2], [4, 4, 2]], 3, vocabulary_size=6, start_id=1)
    >>> round(sum(model.probability((3, 4), w) for w in range(6)), 6)
    1.0
    """

    def __init__(self, sequences, order, vocabulary_size, start_id, discounts=None):
        self.order, self.vocabulary_size, self.start_id = order, vocabulary_size, start_id
        raw = ngram_tables(sequences, order, start_id)
        self.tables = {order: raw[order]}
        for k in range(order - 1, 0, -1):  # N1+(. h w): distinct left extensions
            table = collections.defaultdict(collections.Counter)
            for history, counter in self.tables[k + 1].items():
                for token in counter:
                    table[history[1:]][token] += 1
            self.tables[k] = table
        self.totals = {k: {h: sum(c.values()) for h, c in t.items()}
                       for k, t in self.tables.items()}
        self.types = {k: {h: len(c) for h, c in t.items()} for k, t in self.tables.items()}
        self.discounts = list(discounts or self.estimated_discounts())

    def estimated_discounts(self):
        """Ney's D = n1 / (n1 + 2 n2) per order (n_r: k-gram types seen r times)."""
        result = []
        for k in range(1, self.order + 1):
            seen = collections.Counter(c for counter in self.tables[k].values()
                                       for c in counter.values())
            n1, n2 = seen.get(1, 0), seen.get(2, 0)
            result.append(n1 / (n1 + 2 * n2) if n1 + n2 else 0.5)
        return result

    def probability(self, history, token):
        p = 1.0 / self.vocabulary_size
        for k in range(1, self.order + 1):
            h = history[len(history) - (k - 1):] if k > 1 else ()
            total = self.totals[k].get(h)
            if total:
                d = self.discounts[k - 1]
                p = (max(self.tables[k][h][token] - d, 0.0) + d * self.types[k][h] * p) / total
        return p

    def tune(self, sequences, grid=(0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95), passes=2):
        """Coordinate descent of each order's discount over `grid` on `sequences`."""
        for _ in range(passes):
            for k in range(self.order):
                best = None
                for d in sorted(set(grid) | {self.discounts[k]}):
                    self.discounts[k] = d
                    entropy = cross_entropy(self, sequences)
                    if best is None or entropy < best[0]:
                        best = (entropy, d)
                self.discounts[k] = best[1]


def cross_entropy(model, sequences):
    """Nats per token of `sequences` under an n-gram `model`."""
    nats, tokens = 0.0, 0
    for sequence in sequences:
        for history, token in histories(sequence, model.order, model.start_id):
            nats -= math.log(model.probability(history, token))
            tokens += 1
    return nats / tokens


def ngram_rows(train, valid, test, vocabulary_size, start_id):
    """`{name: {"perplexity", "cross_entropy", ...}}` of the n-gram baselines on `test`."""
    rows = {}
    for order in (1, 2, 3):
        model = InterpolatedNgram(train, order, vocabulary_size, start_id)
        model.fit_weights(valid)
        name = "unigram" if order == 1 else f"{['', '', 'bi', 'tri'][order]}gram_interpolated"
        rows[name] = {"weights": [round(w, 4) for w in model.weights]}
        rows[name]["cross_entropy"] = cross_entropy(model, test)
        if order > 1:
            kn = KneserNey(train, order, vocabulary_size, start_id)
            kn.tune(valid)
            name = f"{['', '', 'bi', 'tri'][order]}gram_kneser_ney"
            rows[name] = {"discounts": [round(d, 3) for d in kn.discounts],
                          "cross_entropy": cross_entropy(kn, test)}
    for row in rows.values():
        row["perplexity"] = math.exp(row["cross_entropy"])
    return rows


# === Naive Bayes (labels sampled texts with the category it thinks they come from) ===

def nb_features(text):
    """Binarised lower-cased words and word bigrams.

    >>> sorted(nb_features("Plays MIDI files"))
    ['files', 'midi', 'midi files', 'plays', 'plays midi']
    """
    words = [w.strip(".,;:()\"'!?") for w in text.lower().split()]
    words = [w for w in words if w]
    return set(words) | {f"{a} {b}" for a, b in zip(words, words[1:])}


class NaiveBayes:
    """Multinomial Naive Bayes over `nb_features`, add-one smoothing.

    >>> nb = NaiveBayes([("games", "a puzzle game"), ("sound", "an audio player")])
    >>> nb.predict(["a fun game"]), nb.predict(["audio files"])
    (['games'], ['sound'])
    """

    def __init__(self, pairs):
        self.labels = sorted({label for label, _ in pairs})
        self.counts = {label: collections.Counter() for label in self.labels}
        priors = collections.Counter(label for label, _ in pairs)
        for label, text in pairs:
            self.counts[label].update(nb_features(text))
        self.vocabulary = set().union(*self.counts.values())
        self.log_prior = {label: math.log(priors[label] / len(pairs)) for label in self.labels}
        self.log_total = {label: math.log(sum(self.counts[label].values())
                                          + len(self.vocabulary)) for label in self.labels}

    def predict(self, texts):
        result = []
        for text in texts:
            features = [f for f in nb_features(text) if f in self.vocabulary]
            result.append(max(self.labels, key=lambda label: self.log_prior[label] + sum(
                math.log(self.counts[label][f] + 1) - self.log_total[label]
                for f in features)))
        return result


# === The model's side ===

def load_model(args):
    from kseq import zoo
    from kseq.training import load_trained

    if args.model:
        model = load_trained(args.model)
        saved = os.path.join(args.model, "recipe.json")  # a run folder keeps its recipe
        recipe = zoo.load_recipe(saved if os.path.isfile(saved) else args.preset)
    else:
        model = zoo.language_model(args.preset)
        recipe = zoo.load_recipe(args.preset)
    return model, recipe


def trained_on(recipe):
    """The data sections of every stage the model was trained on: the recipe's own, then
    a preset's recorded `sources.pretraining_data`, or, for a fine-tuned run, those of its
    source (`fine_tuning.from`: a run folder keeping its recipe, or a preset).

    >>> trained_on({"data": {"builder": "b", "seed": 1},
    ...             "sources": {"pretraining_data": {"builder": "b", "all": True}}})
    [{'builder': 'b', 'seed': 1}, {'builder': 'b', 'all': True}]
    """
    from kseq import zoo
    from kseq.presets.catalog import is_preset, preset_recipe

    sections = [recipe["data"]]
    pretraining = (recipe.get("sources") or {}).get("pretraining_data")
    source = (recipe.get("fine_tuning") or {}).get("from")
    if pretraining:
        sections.append(pretraining)
    elif source and os.path.isfile(os.path.join(source, "recipe.json")):
        sections += trained_on(zoo.load_recipe(os.path.join(source, "recipe.json")))
    elif source and not os.path.exists(source) and is_preset(source):
        sections += trained_on(preset_recipe(source))
    return sections


def ngram_train_texts(train, earlier_stages, limit=None):
    """The texts the n-gram baselines count: the recipe's `train` pairs' texts, then each
    earlier stage's train texts (`trained_on`'s data sections after the first) not already
    among them: every text the model learnt from."""
    from kseq import zoo

    texts = [text for _, text in train]
    seen = set(texts)
    for data in earlier_stages:
        for _, text in zoo.build_data({"data": data})["train"][:limit]:
            if text not in seen:
                seen.add(text)
                texts.append(text)
    return texts


def token_sequences(model, texts):
    """The ids `model.perplexity` scores for each text: its tokens cut to `max_length - 1`,
    then the end token."""
    import tensorflow as tf

    from kseq.text.tokenizer import END_ID

    ragged = model.preprocessor.tokenizer.tokenize(tf.constant(texts, tf.string))
    return [row[: model.max_length - 1] + [END_ID] for row in ragged.to_list()]


def conditioning_rows(model, test):
    """Held-out cross-entropy with the true category and with each wrong one."""
    categories = model.categories
    true = model.perplexity(test)
    wrong_nats = []
    for shift in range(1, len(categories)):
        moved = [(categories[(categories.index(c) + shift) % len(categories)], t)
                 for c, t in test]
        wrong_nats.append(model.perplexity(moved).cross_entropy)
    wrong = sum(wrong_nats) / len(wrong_nats)
    per_category = {}
    for category in categories:
        own = [(c, t) for c, t in test if c == category]
        if not own:
            continue
        right = model.perplexity(own).cross_entropy
        others = [model.perplexity([(o, t) for _, t in own]).cross_entropy
                  for o in categories if o != category]
        per_category[category] = {"texts": len(own), "perplexity_true": math.exp(right),
                                  "perplexity_wrong": math.exp(sum(others) / len(others))}
    return true, {"perplexity_true": true.perplexity, "perplexity_wrong": math.exp(wrong),
                  "ratio": true.perplexity / math.exp(wrong),
                  "per_category": per_category}


def sample_rows(model, train, test, count, seed):
    """Samples per category, labelled by Naive Bayes trained on the real train texts."""
    # only the categorised texts: a recipe's uncategorised background texts (category "")
    # would be a class of their own, and the largest
    classifier = NaiveBayes([(c, t) for c, t in train if c])
    real = classifier.predict([t for _, t in test])
    ceiling = sum(p == c for p, (c, _) in zip(real, test)) / len(test)
    samples = {}
    for index, category in enumerate(model.categories):
        samples[category] = model.generate([""] * count, category=category, sample=True,
                                           top_p=0.9, seed=seed + index)
    known = {t for _, t in train}
    right = total = copies = 0
    per_category = {}
    for category, texts in samples.items():
        labels = classifier.predict(texts)
        hits = sum(label == category for label in labels)
        per_category[category] = hits / len(texts)
        right, total = right + hits, total + len(texts)
        copies += sum(text in known for text in texts)
    return samples, {"per_category": per_category, "accuracy": right / total,
                     "chance": 1 / len(samples), "naive_bayes_on_real_test": ceiling,
                     "copies_of_training_texts": copies / total, "top_p": 0.9}


# === Speed: kseq's generate against keras-hub's sampler on a same-size decoder ===

def keras_hub_generator(model, batch, length, seed):
    """A keras-hub decoder of `model`'s size and its top-p sampling run (XLA, as
    `CausalLM.generate` compiles it); returns `(run, parameters)`."""
    import keras
    import keras_hub
    import tensorflow as tf
    from keras import ops

    decoder = model.decoder
    config = decoder.get_config()
    hidden, heads = config["hidden_dim"], config["num_heads"]
    layers_count, vocabulary = config["num_layers"], decoder.vocabulary_size
    embedding = keras_hub.layers.TokenAndPositionEmbedding(
        vocabulary, model.max_length, hidden, tie_weights=True)
    blocks = [keras_hub.layers.TransformerDecoder(config["intermediate_dim"], heads,
                                                  normalize_first=True)
              for _ in range(layers_count)]
    norm = keras.layers.LayerNormalization(epsilon=1e-5)
    head_dim = hidden // heads

    def call_with_cache(ids, cache, index):  # GPT2CausalLM.call_with_cache
        x = embedding(ids, start_index=index)
        caches = []
        for i, block in enumerate(blocks):
            x, layer_cache = block(x, self_attention_cache=cache[:, i, ...],
                                   self_attention_cache_update_index=index)
            caches.append(layer_cache)
        x = norm(x)
        return embedding.token_embedding(x, reverse=True), x, ops.stack(caches, axis=1)

    sampler = keras_hub.samplers.TopPSampler(p=0.9, seed=seed)
    mask = tf.concat([tf.ones([batch, 1], tf.bool), tf.zeros([batch, length - 1], tf.bool)], 1)

    def generate(prompt):
        cache = tf.zeros([batch, layers_count, 2, length, heads, head_dim])
        _, _, cache = call_with_cache(prompt, cache, 0)

        def next_token(prompt, cache, index):
            ids = ops.slice(prompt, [0, index - 1], [batch, 1])
            logits, states, cache = call_with_cache(ids, cache, index - 1)
            return ops.squeeze(logits, 1), ops.squeeze(states, 1), cache

        return sampler(next=next_token, prompt=prompt, cache=cache, index=1, mask=mask,
                       stop_token_ids=None)

    prompt = tf.fill([batch, length], vocabulary - 1)  # the last category's token first
    call_with_cache(prompt, tf.zeros([batch, layers_count, 2, length, heads, head_dim]), 0)
    parameters = sum(int(v.numpy().size) for layer in [embedding, norm, *blocks]
                     for v in layer.weights)
    compiled = tf.function(generate, jit_compile=True)
    return (lambda: compiled(prompt).numpy()), parameters


def speed_rows(model, batch, length, rounds, seed):
    """Tokens/s of sampled generation, every row `length - 1` tokens after its start."""
    category = model.categories[-1] if model.categories else None
    kseq_runs = {}
    for xla in (False, True):
        def run(xla=xla):
            return model.generate([""] * batch, category=category, sample=True, top_p=0.9,
                                  seed=seed, max_length=length, min_length=length - 1,
                                  batch_size=batch, xla=xla)
        kseq_runs["kseq_xla" if xla else "kseq"] = run
    hub_run, hub_parameters = keras_hub_generator(model, batch, length, seed)
    runs = {**kseq_runs, "keras_hub_top_p_xla": hub_run}
    first = {}
    for name, run in runs.items():  # traces and compiles, untimed
        started = time.perf_counter()
        run()
        first[name] = time.perf_counter() - started
    timed = harness.alternated({name: (lambda run=run: _seconds(run))
                                for name, run in runs.items()}, rounds=rounds)
    tokens = batch * (length - 1)
    rates = {name: tokens / seconds for name, seconds in timed["median"].items()}
    return {"batch": batch, "generated_tokens_per_row": length - 1, "top_p": 0.9,
            "tokens_per_second": rates, "first_call_seconds": first,
            "kseq_vs_keras_hub": harness.ratio(rates["kseq"], rates["keras_hub_top_p_xla"]),
            "kseq_xla_vs_keras_hub": harness.ratio(rates["kseq_xla"],
                                                   rates["keras_hub_top_p_xla"]),
            "parameters": {"kseq": model.count_params(), "keras_hub": hub_parameters},
            "rounds": timed["rounds"]}


def _seconds(run):
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--preset", default=PRESET, help="the preset (recipe and weights)")
    parser.add_argument("--model", default=None,
                        help="a run folder or .keras file to measure instead of the preset's "
                             "weights (its recipe's data)")
    parser.add_argument("--samples", type=int, default=100, help="sampled texts per category")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--gen-length", type=int, default=64,
                        help="tokens per generated row in the speed rows (start included)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None,
                        help="use only the first N texts of each split (smoke runs)")
    args = harness.parse(parser, argv)
    if args.smoke:
        args.samples, args.rounds, args.batch, args.gen_length = 4, 1, 8, 16
        args.limit = args.limit or 200
    from kseq import zoo
    from kseq.text.tokenizer import START_ID

    model, recipe = load_model(args)
    splits = zoo.build_data(recipe)
    if args.limit:
        splits = {name: pairs[: args.limit] for name, pairs in splits.items()}
    train, valid, test = splits["train"], splits["valid"], splits["test"]
    started = time.perf_counter()
    stages = trained_on(recipe)
    ngram_train = ngram_train_texts(train, stages[1:], args.limit)
    sequences = {"train": token_sequences(model, ngram_train),
                 **{name: token_sequences(model, [t for _, t in splits[name]])
                    for name in ("valid", "test")}}
    baselines = ngram_rows(sequences["train"], sequences["valid"], sequences["test"],
                           model.preprocessor.text_vocabulary_size, START_ID)
    ngram_seconds = time.perf_counter() - started
    true, conditioning = conditioning_rows(model, test)
    if true.tokens != sum(len(s) for s in sequences["test"]):
        raise RuntimeError(f"The n-gram rows score other tokens than the model. Received: "
                           f"{sum(len(s) for s in sequences['test'])} against {true.tokens}")
    best_name = min((n for n in baselines if n != "unigram"),
                    key=lambda n: baselines[n]["perplexity"])
    samples, sampled = sample_rows(model, train, test, args.samples, args.seed)
    speed = speed_rows(model, args.batch, min(args.gen_length, model.max_length), args.rounds,
                       args.seed)
    ratio = true.perplexity / baselines[best_name]["perplexity"]
    result = {
        "model": args.model or args.preset, "recipe_data": recipe.get("data"),
        "texts": {name: len(pairs) for name, pairs in splits.items()},
        "trained_on": stages, "ngram_train_texts": len(ngram_train),
        "test_tokens": true.tokens, "categories": model.categories,
        "perplexity": {"model": true.perplexity, "model_cross_entropy": true.cross_entropy,
                       **{name: row["perplexity"] for name, row in baselines.items()}},
        "baselines": baselines, "best_ngram": best_name, "ngram_seconds": ngram_seconds,
        "model_vs_best_ngram": ratio, "conditioning": conditioning, "samples": sampled,
        "samples_per_category": args.samples,
        "sample_texts": {c: texts[:10] for c, texts in samples.items()}, "speed": speed,
        "floors": {"perplexity_vs_best_ngram": {"floor": 0.8, "value": ratio,
                                                "met": ratio <= 0.8},
                   "true_vs_wrong_category": {"floor": 0.95, "value": conditioning["ratio"],
                                              "met": conditioning["ratio"] <= 0.95},
                   "sample_category_accuracy": {"floor": 0.6, "value": sampled["accuracy"],
                                                "met": sampled["accuracy"] >= 0.6}},
    }
    result["machine"] = harness.machine()  # the load average at the end of the run
    harness.write("bench_language_model", result, args)
    return result


if __name__ == "__main__":
    random.seed(0)
    main()
