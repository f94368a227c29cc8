"""Train a language model conditioned on a category, generate from a category, score it, export it.

    python examples/language_model.py            # about 3 minutes on 2 CPU cores
    python examples/language_model.py --tiny     # seconds: the version the tests run

The data is built here: number words in English, French and German, the
language as each text's category (1 vs N: from a category, generate a text).
The full run ends with the shipped `debian_descriptions_lm` preset writing a
package description for a Debian section. Writes `runs/language_model/export/1`
(a SavedModel: prompt and category in, text and score out).
"""

import argparse
import os

import keras

import kseq


def main(tiny=False, output="runs/language_model"):
    keras.utils.set_random_seed(0)
    # 1. Data: (category, text) pairs; the category becomes the sequence's first token.
    recipe = kseq.zoo.load_recipe("number_words_lm_tiny")
    if not tiny:  # more numbers, a wider model, more epochs
        recipe = kseq.zoo.merge(recipe, {"data": {"train_size": 3000},
                                         "model": {"hidden_dim": 64, "intermediate_dim": 128,
                                                   "num_layers": 2},
                                         "training": {"epochs": 8}})
    splits = kseq.zoo.build_data(recipe)
    # 2. A compiled decoder-only Transformer (causal self-attention with a KV cache);
    #    the vocabulary and the categories come from the training pairs.
    model = kseq.zoo.language_model("transformer", recipe=recipe, train_data=splits["train"])
    # 3. Text -> ids in tf.data by the model's preprocessor, then plain Keras fit.
    training = recipe["training"]
    data = model.preprocessor.training_dataset(splits["train"], training["boundaries"],
                                               batch_size=training["batch_size"])
    model.fit(data, epochs=training["epochs"], verbose=0)
    # 4. Generation: greedy from a category, a prompt continued, seeded sampling, beam n-best.
    print(model.generate(["", ""], category=["fr", "de"]))
    print(model.generate(["twenty"], category="en", max_length=12))
    print(model.generate([""], category="fr", sample=True, top_p=0.9, seed=1))
    print(model.generate([""], category="de", beam_size=4, n_best=2))
    # 5. Perplexity over real tokens (end token included), with the true and a wrong category.
    result = model.perplexity(splits["test"])
    wrong = model.perplexity([("de" if c != "de" else "fr", t) for c, t in splits["test"]])
    print(result.summary(), "| wrong category:", round(wrong.perplexity, 2))
    # 6. A SavedModel TF Serving runs: prompt and category in, text and score out.
    model.export(os.path.join(output, "export", "1"))
    if not tiny:  # 7. The shipped preset: a Debian package description for a section
        preset = kseq.zoo.language_model("debian_descriptions_lm")
        print(preset.generate([""], category="games", sample=True, top_p=0.9, seed=3))
    return model, {"perplexity": result.perplexity, "wrong_perplexity": wrong.perplexity}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tiny", action="store_true")
    main(tiny=parser.parse_args().tiny)
