"""Train a Turkish part-of-speech tagger from characters, tag sentences, score it, export it.

    python examples/tag_turkish.py            # about 5 minutes on 2 CPU cores
    python examples/tag_turkish.py --tiny     # seconds: the version the tests run

The treebank (Google's universal tags) comes from the `turkish-treebanks`
wheel on PyPI. The tagger reads characters, so words it never saw still get
a tag from their spelling. Writes `runs/tag_turkish/export/1` (a SavedModel:
`serving_default` takes sentences, `serve_tokens` pre-tokenised words).
"""

import argparse
import os

import keras

import kseq


def main(tiny=False, output="runs/tag_turkish"):
    keras.utils.set_random_seed(0)
    preset = "turkish_pos_tagger_tiny" if tiny else "turkish_pos_tagger"
    # 1. Data: (words, tags) pairs on the treebank's own tokens.
    recipe = kseq.zoo.load_recipe(preset)
    splits = kseq.zoo.build_data(recipe)
    # 2. A compiled SequenceTagger (characters -> BiGRU -> a tag at each word's first
    #    character); every tag is named in the recipe.
    model = kseq.zoo.tagger(preset, load_weights=False, train_data=splits["train"])
    # 3. Characters -> ids, tags aligned to word starts, in tf.data; plain Keras fit.
    training = recipe["training"]
    data = model.preprocessor.training_dataset(splits["train"], training["boundaries"],
                                               batch_size=training["batch_size"])
    model.fit(data, epochs=training["epochs"], verbose=0)
    # 4. A sentence (split on spaces) and a pre-tokenised one: one tag per word.
    print(model.tag(["Ali okula gitti .", ["Bu", "kitap", "çok", "güzel", "."]]))
    # 5. Token accuracy and per-tag F1 on the test split.
    scores = model.evaluate_tags(splits["test"])
    print({key: scores[key] for key in ("token_accuracy", "macro_f1")})
    # 6. A SavedModel TF Serving runs.
    model.export(os.path.join(output, "export", "1"))
    return model, scores


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tiny", action="store_true")
    main(tiny=parser.parse_args().tiny)
