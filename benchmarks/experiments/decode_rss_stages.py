"""Where a decoding process's memory goes: resident set size after each stage.

    python benchmarks/experiments/decode_rss_stages.py \
        --json benchmarks/experiments/results/decode_rss_stages.json

The question (issue #33's goal: peak RSS of a decoding process <= 600 MB for
`libreoffice_en_fr_transformer`): which stage of a `kseq.zoo.translator`
process costs what? One thread, as `bench_engines.py --threads-list 1`; the
200 committed slice paragraphs, greedy and then beam 4 at batch 64 (each first
run on one batch, which traces its search). After each stage: the peak RSS
(`ru_maxrss`), and the current RSS split into anonymous memory (the heap:
tensors, graphs, Python objects) and file pages (mapped shared libraries,
clean and shared between processes). Prints JSON.
"""

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # benchmarks/
import resource  # noqa: E402

import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)

PRESET = "libreoffice_en_fr_transformer"


def memory():
    """`{"peak_mb", "rss_mb", "anon_mb", "file_mb"}` of this process now."""
    fields = {}
    with open("/proc/self/status", encoding="utf-8") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile"):
                fields[key] = int(value.split()[0]) / 1024  # kB
    return {"peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "rss_mb": round(fields.get("VmRSS", 0)), "anon_mb": round(fields.get("RssAnon", 0)),
            "file_mb": round(fields.get("RssFile", 0))}


def slice_sources(count):
    """The committed slice's source sides, read as plain text: `kseq.presets.catalog`
    would import TensorFlow (through `kseq.data.pipeline`) before the first stage."""
    path = _os.path.join(harness.ROOT, "kseq", "presets", "slices", f"{PRESET}.test200.tsv")
    with open(path, encoding="utf-8") as handle:
        return [line.split("\t")[0].strip() for line in handle if line.strip()][:count]


def main(argv=None):
    parser = harness.arguments(__doc__)
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--batch", type=int, default=64)
    # Parsed without Keras: importing TensorFlow is itself a measured stage.
    args = harness.parse(parser, argv, keras=False)
    sources = slice_sources(8 if args.smoke else args.sentences)
    stages = {"start": memory()}
    import tensorflow as tf

    stages["import tensorflow"] = memory()
    import tensorflow_text  # noqa: F401 (the tokenizer's ops: a stage of its own)

    stages["import tensorflow_text"] = memory()
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    from kseq.zoo import translator

    stages["import kseq.zoo"] = memory()
    model = translator(PRESET)
    stages["preset loaded"] = memory()
    for beam in (1, 4):
        model.translate(sources[: args.batch], beam_size=beam, batch_size=args.batch)
        stages[f"beam {beam}: first batch (traced)"] = memory()
        model.translate(sources, beam_size=beam, batch_size=args.batch)
        stages[f"beam {beam}: {len(sources)} sentences"] = memory()
    harness.write("decode_rss_stages", {"preset": PRESET, "batch": args.batch,
                                        "sentences": len(sources), "stages": stages}, args,
                  path=harness.experiment_result("decode_rss_stages"))
    return stages


if __name__ == "__main__":
    _sys.exit(0 if main() else 1)
