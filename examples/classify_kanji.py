"""Train an image classifier that names a kanji's radical, label new glyphs, export it.

    python examples/classify_kanji.py            # about 10 minutes on 2 CPU cores
    python examples/classify_kanji.py --tiny     # a minute: 2 epochs on 600 glyphs

The data (6,355 kanji from KANJIDIC, CC BY-SA 3.0, drawn with IPA Gothic) is
fetched from Debian with `apt-get download` at first use and never committed.
The same `SequenceClassifier` as for text, over an image encoder: encoded
images in, a label out. Writes `runs/classify_kanji/confusion.png` and
`runs/classify_kanji/export/1` (a SavedModel: image bytes in, label out).
"""

import argparse
import os

import keras

import kseq


def main(tiny=False, output="runs/classify_kanji", splits=None):
    keras.utils.set_random_seed(0)
    # 1. Data: (PNG bytes, "085 水") pairs, split per radical. `splits` replaces it (tests).
    recipe = kseq.zoo.load_recipe("kanji_radical_classifier")
    splits = splits or kseq.zoo.build_data(recipe)
    if tiny:
        splits = {name: pairs[:600] if name == "train" else pairs[:60]
                  for name, pairs in splits.items()}
    # 2. A compiled SequenceClassifier: SmallCnn grid + attention pooling + softmax head.
    options = {"epochs": 2} if tiny else {}
    model = kseq.zoo.classifier("kanji_radical_classifier", load_weights=False,
                                train_data=splits["train"],
                                labels=sorted({label for _, label in
                                               splits["train"] + splits["test"]}),
                                recipe={"training": options})
    # 3. Bytes -> pixels in tf.data (the one image function serving also runs); Keras fit.
    training = model.recipe["training"]
    data = model.preprocessor.training_dataset(splits["train"], training["boundaries"],
                                               batch_size=training["batch_size"])
    model.fit(data, epochs=training["epochs"], verbose=0)
    # 4. Labels for glyphs it never saw: files, bytes or uint8 arrays.
    images = [image for image, _ in splits["test"][:3]]
    print(model.predict_labels(images, top_k=2))
    # 5. Accuracy, macro-F1 and a confusion matrix picture.
    os.makedirs(output, exist_ok=True)
    scores = model.evaluate_labels(splits["test"], plot=os.path.join(output, "confusion.png"))
    print({key: scores[key] for key in ("accuracy", "macro_f1")})
    # 6. A SavedModel TF Serving runs: encoded image bytes in, label / probabilities out.
    model.export(os.path.join(output, "export", "1"))
    return model, scores


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tiny", action="store_true")
    main(tiny=parser.parse_args().tiny)
