"""Train a small Transformer to read English numbers out in French, then use it.

    python examples/translate_numbers.py            # about 6 minutes on 2 CPU cores
    python examples/translate_numbers.py --tiny     # seconds: the version the tests run
"""

import argparse

import keras

import kseq


def main(tiny=False):
    keras.utils.set_random_seed(0)
    preset = "numbers_fr_tiny" if tiny else "numbers_fr_transformer"
    # 1. Data: (English words, French words) pairs, disjoint train/valid/test numbers.
    recipe = kseq.zoo.load_recipe(preset)
    splits = kseq.zoo.build_data(recipe)
    # 2. A compiled Translator; vocabularies are built from the training pairs.
    model = kseq.zoo.translator(preset, load_weights=False, train_data=splits["train"])
    # 3. Strings -> bucketed id batches, in graph mode inside tf.data: the model's
    #    preprocessor, the same one translate() and the exported model use.
    preprocessor = model.preprocessor
    training = recipe["training"]
    train_data = preprocessor.training_dataset(
        splits["train"], training["boundaries"],
        batch_size=training.get("batch_size"), token_budget=training.get("token_budget"))
    # 4. Plain Keras fit, with validation BLEU reported each epoch.
    bleu = kseq.metrics.BleuCallback(splits["valid"], subset=50)
    model.fit(train_data, epochs=training["epochs"], callbacks=[bleu], verbose=0)
    # 5. Decode: greedy, beam search with a length penalty, n-best lists.
    sources = [source for source, _ in splits["test"][:3]]
    print(model.translate(sources, beam_size=1))
    print(model.translate(sources, beam_size=4, length_penalty="gnmt", alpha=0.6))
    print(model.translate(sources[:1], beam_size=4, n_best=3))
    # 6. Evaluate with sacrebleu on detokenised text.
    result = model.evaluate_bleu(splits["test"][:200], beam_size=4)
    return model, result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tiny", action="store_true")
    main(tiny=parser.parse_args().tiny)
