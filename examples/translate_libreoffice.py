"""Train an English -> French translator on LibreOffice's own help and UI translations.

    python examples/translate_libreoffice.py --arch attention --minutes 20
    python examples/translate_libreoffice.py --arch transformer --minutes 40

The first run downloads three Debian packages (~6 MB, `apt-get download`,
nothing is installed) and caches the splits in `$KSEQ_HOME` (default
`~/.cache/kseq`). Training is resumable: run the same command again after an
interruption. The output folder gets `curves.png` (loss and validation BLEU)
and, for the attention architectures, an alignment plot.
"""

import argparse
import os

import kseq
from kseq.training import train


def main(arch="attention", minutes=20.0, output="runs/libreoffice_example", overrides=None):
    preset = f"libreoffice_en_fr_{arch}"
    # 1. Data and model come from the preset; training stops cleanly after `minutes`.
    model, splits, _ = train(preset, output, minutes=minutes, overrides=overrides, verbose=0)
    print(f"{model.count_params():,} parameters; splits "
          f"{ {name: len(pairs) for name, pairs in splits.items()} }")
    # 2. Translate new text: greedy, and beam search with GNMT's length penalty.
    sentences = ["Click the OK button to close the dialog.", "Select the cells you want."]
    print(model.translate(sentences, beam_size=1))
    print(model.translate(sentences, beam_size=4, length_penalty="gnmt", alpha=0.6))
    # 3. sacrebleu BLEU / chrF on detokenised output, against the raw references.
    result = model.evaluate_bleu(splits["test"][:200], beam_size=4)
    # 4. Where the model looks while it writes each word.
    plot = os.path.join(output, "alignment.png")
    model.plot_attention(splits["test"][0][0], plot)
    print(f"curves: {os.path.join(output, 'curves.png')}, alignment: {plot}")
    return model, result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", default="attention", choices=kseq.zoo.ARCHITECTURES)
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--output", default="runs/libreoffice_example")
    args = parser.parse_args()
    main(args.arch, args.minutes, args.output)
