"""Decoding speed of a trained LibreOffice translator: sentences/s, greedy and beam 4.

    python benchmarks/bench_decode_libreoffice.py --model runs/lo/model.keras --sentences 256

The real-model counterpart of `bench_translator.py`'s decoding rows: a 3+3
Transformer with a 96-slot cache on real test paragraphs, through
`Translator.translate` (tokenisation, batching by length, search,
detokenisation), batch 64. One call on a few sentences first traces the search,
so the timing excludes tracing. Prints JSON.

Measured (the method notes docs/results.md held; its table keeps the headline figures):

decoding the 40-minute LibreOffice Transformer, 192 test paragraphs, batch 64
(`bench_decode_libreoffice.py`): greedy 21.4 sentences/s, beam 4 5.4 (before the head-major
scatter cache: 9.6 and 3.0)
"""

import sys
import time

import harness  # benchmarks/harness.py, before TensorFlow
import keras

import kseq  # noqa: F401  (registers the model classes for load_model)
from kseq.data.datasets.libreoffice import libreoffice_dataset


def sentences_per_second(model, sources, beam_size):
    model.translate(sources[:8], beam_size=beam_size)  # traces the search once
    started = time.perf_counter()
    model.translate(sources, beam_size=beam_size, batch_size=64)
    seconds = time.perf_counter() - started
    return {"sentences_per_second": round(len(sources) / seconds, 2), "seconds": round(seconds, 1)}


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--model", required=True, help="a trained `.keras` translator")
    parser.add_argument("--sentences", type=int, default=256, help="first N test paragraphs")
    args = harness.parse(parser, argv)
    if args.smoke:
        args.sentences = 8
    model = keras.saving.load_model(args.model)
    sources = [s for s, _ in libreoffice_dataset("fr")["test"][: args.sentences]]
    result = {"model": args.model, "sentences": len(sources),
              "max_target_length": model.max_target_length,
              "greedy": sentences_per_second(model, sources, 1),
              "beam4": sentences_per_second(model, sources, 4)}
    harness.write("bench_decode_libreoffice", result, args)
    return result


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
