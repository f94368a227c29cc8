"""Does `PlainTokenizer` give the in-graph tokenizers' ids and text on a preset's real data?

    python benchmarks/experiments/plain_tokenizer_agreement.py \
        --json benchmarks/experiments/results/plain_tokenizer_agreement.json

The question (issue #33: `kseq translate` on a CTranslate2 export tokenises in plain
Python, without TensorFlow): on every pair of `libreoffice_en_fr_transformer`'s data
(its recipe's builder: train, valid and test), both sides, does the plain twin of the
preset's WordPiece tokenizers give the same ids as the graph, and does it detokenise
the graph's ids to the same text? Counts the texts that differ on either, with up to
five examples, and times both tokenizers over the same texts. The tests check the
same on crafted and random texts and over Unicode's first two planes
(`tests/text/test_plain_tokenizer.py`). Prints JSON.
"""

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # benchmarks/
import time  # noqa: E402

import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)

PRESET = "libreoffice_en_fr_transformer"
SMOKE_PRESET = "numbers_fr_transformer"
CHUNK = 4096


def compare(graph, plain, texts):
    """`{"texts", "differing", "examples", "graph_seconds", "plain_seconds"}` over `texts`."""
    import tensorflow as tf

    differing, examples, seconds = 0, [], {"graph": 0.0, "plain": 0.0}
    for start in range(0, len(texts), CHUNK):
        chunk = texts[start : start + CHUNK]
        started = time.perf_counter()
        ids = graph.tokenize(tf.constant(chunk)).to_list()
        seconds["graph"] += time.perf_counter() - started
        started = time.perf_counter()
        plain_ids = plain.tokenize(chunk)
        seconds["plain"] += time.perf_counter() - started
        graph_text = graph.detokenize(tf.ragged.constant(ids, tf.int32, ragged_rank=1)).numpy()
        plain_text = plain.detokenize(ids)
        for text, a, b, c, d in zip(chunk, ids, plain_ids, graph_text, plain_text):
            if a != b or c.decode("utf-8") != d:
                differing += 1
                examples += [text][: 5 - len(examples)]
    return {"texts": len(texts), "differing": differing, "examples": examples,
            "graph_seconds": round(seconds["graph"], 2),
            "plain_seconds": round(seconds["plain"], 2)}


def main(argv=None):
    parser = harness.arguments(__doc__)
    args = harness.parse(parser, argv)
    from kseq.models.recipes import build_data
    from kseq.presets.catalog import preset_recipe
    from kseq.text import PlainTokenizer
    from kseq.zoo import translator

    preset = SMOKE_PRESET if args.smoke else PRESET
    preprocessor = translator(preset).preprocessor
    splits = build_data(preset_recipe(preset))
    pairs = [pair for name in ("train", "valid", "test") for pair in splits[name]]
    if args.smoke:
        pairs = pairs[:200]
    result = {"preset": preset, "pairs": len(pairs)}
    for side, tokenizer, column in (("source", preprocessor.source_tokenizer, 0),
                                    ("target", preprocessor.target_tokenizer, 1)):
        result[side] = compare(tokenizer, PlainTokenizer(tokenizer.get_config()),
                               [pair[column] for pair in pairs])
    harness.write("plain_tokenizer_agreement", result, args,
                  path=harness.experiment_result("plain_tokenizer_agreement"))
    return result


if __name__ == "__main__":
    found = main()
    _sys.exit(1 if found["source"]["differing"] or found["target"]["differing"] else 0)
