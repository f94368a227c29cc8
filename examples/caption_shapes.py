"""Train a captioner on drawn scenes, caption unseen ones, look where it attends, export it.

    python examples/caption_shapes.py            # about 5 minutes on 2 CPU cores
    python examples/caption_shapes.py --tiny     # seconds: the version the tests run

Writes `runs/caption_shapes/attention.png` (each word's attention over the image) and
`runs/caption_shapes/export/1` (a SavedModel: image bytes in, captions out).
"""

import argparse
import os

import keras

import kseq


def main(tiny=False, output="runs/caption_shapes"):
    keras.utils.set_random_seed(0)
    preset = "shapes_captioner_tiny" if tiny else "shapes_captioner"
    # 1. Data: (PNG bytes, caption) pairs; test scene tuples never occur in training.
    recipe = kseq.zoo.load_recipe(preset)
    splits = kseq.zoo.build_data(recipe)
    # 2. A compiled Captioner (SmallCnn grid + Transformer decoder); the caption
    #    vocabulary is built from the training captions.
    model = kseq.zoo.captioner(preset, load_weights=False, train_data=splits["train"])
    # 3. Bytes -> pixels and captions -> ids in tf.data, by the model's preprocessor
    #    (the one image function serving also runs), then plain Keras fit.
    training = recipe["training"]
    data = model.preprocessor.training_dataset(splits["train"], training["boundaries"],
                                               batch_size=training["batch_size"])
    model.fit(data, epochs=training["epochs"], verbose=0)
    # 4. Caption unseen scenes: greedy, beam search, n-best with scores.
    images = [image for image, _ in splits["test"][:3]]
    print(model.caption(images, beam_size=1))
    print(model.caption(images[:1], beam_size=4, n_best=2, return_scores=True))
    # 5. Where it looks, and what it scores.
    os.makedirs(output, exist_ok=True)
    model.plot_attention(images[0], os.path.join(output, "attention.png"))
    result = model.evaluate_bleu(splits["test"], beam_size=4)
    # 6. A SavedModel TF Serving runs: encoded image bytes in, captions out.
    model.export(os.path.join(output, "export", "1"), beam_size=4)
    return model, result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tiny", action="store_true")
    main(tiny=parser.parse_args().tiny)
