"""kseq against its own CTranslate2 export: identical output, beam agreement, int8, speed.

    .venv/bin/python benchmarks/bench_ctranslate2.py      # ~4 min on a shared 2-core CPU

Checks `kseq export --format ctranslate2` as a converter is checked, on the same
weights in the same process:

- `numbers_fr_transformer` (shipped): greedy output of the CTranslate2 export
  against kseq's on the recipe's whole test split (1,000 numbers, the
  `numbers` builder) — the share of identical strings — and beam 4 with
  kseq's `fairseq` penalty (`L^0.6`, the one CTranslate2 has: `length_penalty`);
- `libreoffice_en_fr_transformer` (shipped): the committed 200-paragraph test
  slice (the full test split needs the LibreOffice builder's apt data, not
  cached on these machines). Greedy identity; beam 4 against kseq's default
  GNMT `((5+L)/6)^0.6` with CTranslate2's closest, `L^0.6` (patience 2, the
  export's default, and 1, CTranslate2's), and against kseq's own `L^0.6`;
  `compute_type="int8"` greedy: BLEU (sacrebleu) against float32's and kseq's,
  and its share identical to float32;
- speed: sentences/s of greedy and beam 4 at batch 64, one thread on each side
  (TensorFlow's intra/inter-op threads via `--threads`, CTranslate2's
  `intra_threads`), kseq's search traced before the clock starts; the ratios
  CTranslate2 / kseq. Each figure is one timed pass over the slice (kseq) or
  the median of `--repeats` passes (CTranslate2: cheap).

Prints JSON and writes benchmarks/results/bench_ctranslate2.json.

Measured (the method notes docs/results.md held; its table keeps the headline figures):

kseq vs its CTranslate2 export, `libreoffice_en_fr_transformer`, the 200-paragraph slice,
batch 64, one thread each (`bench_ctranslate2.py`, AVX-512 CPU, load 1.0): greedy kseq 77.0
sentences/s, CT2 float32 114.0 (CT2/kseq **1.48×**; 2.20× before finished-row compaction,
3.6× before the growing cache), int8 221.6 (2.88×); beam 4 kseq 26.2, CT2 45.3 (**1.73×**;
2.76× before, 5.9× at first), int8 74.5 (2.85×); greedy output identical on 200/200 (numbers
preset: 1,000/1,000); int8 BLEU −0.06 greedy, −0.14 beam 4
"""

import os
import sys
import tempfile
import time

import harness  # benchmarks/harness.py, before TensorFlow

NUMBERS = "numbers_fr_transformer"
LIBREOFFICE = "libreoffice_en_fr_transformer"


def timed(call):
    """`(result, seconds)` of `call()`."""
    started = time.perf_counter()
    result = call()
    return result, time.perf_counter() - started


def share(left, right):
    """The share of identical strings (rounded)."""
    return round(sum(a == b for a, b in zip(left, right)) / max(1, len(left)), 4)


def kseq_run(model, sources, batch, **search):
    """kseq's outputs and sentences/s: a few sentences first trace the search."""
    model.translate(sources[:8], batch_size=batch, **search)
    outputs, seconds = timed(lambda: model.translate(sources, batch_size=batch, **search))
    return outputs, round(len(sources) / seconds, 2)


def ct2_run(model, sources, batch, repeats, **search):
    """The CTranslate2 export's outputs and sentences/s (median of `repeats` passes)."""
    model.translate(sources[:8], batch_size=batch, **search)
    runs = [timed(lambda: model.translate(sources, batch_size=batch, **search))
            for _ in range(max(1, repeats))]
    seconds = sorted(s for _, s in runs)[len(runs) // 2]
    return runs[0][0], round(len(sources) / seconds, 2)


def numbers_section(folder, args):
    from kseq.models.translator.ctranslate2_export import export_ctranslate2
    from kseq.models.recipes import build_data, load_recipe
    from kseq.zoo import translator

    model = translator(NUMBERS)
    pairs = build_data(load_recipe(NUMBERS))["test"][: args.numbers]
    sources = [source for source, _ in pairs]
    ct2 = translator(export_ctranslate2(model, os.path.join(folder, NUMBERS)),
                     intra_threads=args.threads)
    greedy, _ = kseq_run(model, sources, args.batch, beam_size=1)
    ct2_greedy, _ = ct2_run(ct2, sources, args.batch, 1, beam_size=1)
    beam = dict(beam_size=4, length_penalty="fairseq", alpha=0.6)
    fairseq, _ = kseq_run(model, sources, args.batch, **beam)
    ct2_beam, _ = ct2_run(ct2, sources, args.batch, 1, **beam)
    return {"test_numbers": len(sources),
            "greedy_identical": share(greedy, ct2_greedy),
            "beam4_fairseq_0.6_identical": share(fairseq, ct2_beam)}


def libreoffice_section(folder, args):
    from kseq.models.translator.ctranslate2_export import export_ctranslate2
    from kseq.metrics.text_scores import corpus_scores
    from kseq.presets.catalog import slice_pairs
    from kseq.zoo import translator

    model = translator(LIBREOFFICE)
    pairs = slice_pairs(LIBREOFFICE)[: args.sentences]
    sources, references = [s for s, _ in pairs], [t for _, t in pairs]
    path = export_ctranslate2(model, os.path.join(folder, LIBREOFFICE))
    ct2 = translator(path, intra_threads=args.threads)
    ct2_int8 = translator(path, intra_threads=args.threads, compute_type="int8")
    beam, lp = dict(beam_size=4, alpha=0.6), dict(length_penalty="fairseq")
    runs = {
        "kseq_greedy": kseq_run(model, sources, args.batch, beam_size=1),
        "ct2_greedy": ct2_run(ct2, sources, args.batch, args.repeats, beam_size=1),
        "ct2_int8_greedy": ct2_run(ct2_int8, sources, args.batch, args.repeats, beam_size=1),
        "kseq_beam4_gnmt": kseq_run(model, sources, args.batch, length_penalty="gnmt", **beam),
        "ct2_beam4": ct2_run(ct2, sources, args.batch, args.repeats, **beam, **lp),
        "ct2_int8_beam4": ct2_run(ct2_int8, sources, args.batch, args.repeats, **beam, **lp),
        "ct2_beam4_patience1": ct2_run(ct2, sources, args.batch, 1, patience=1, **beam, **lp),
        "kseq_beam4_fairseq": kseq_run(model, sources, args.batch, **beam, **lp),
    }
    out = {name: outputs for name, (outputs, _) in runs.items()}
    speed = {name: rate for name, (_, rate) in runs.items() if name != "ct2_beam4_patience1"}
    bleu = {name: corpus_scores(out[name], references)["bleu"]
            for name in ("kseq_greedy", "ct2_greedy", "ct2_int8_greedy", "kseq_beam4_gnmt",
                         "ct2_beam4", "ct2_int8_beam4")}
    return {
        "paragraphs": len(sources),
        "data": "the committed test slice (kseq.presets.catalog.slice_pairs): the LibreOffice "
                "builder's apt data is not cached here",
        "greedy_identical": share(out["kseq_greedy"], out["ct2_greedy"]),
        "beam4_kseq_gnmt_0.6_vs_ct2_lp_0.6_patience2_identical":
            share(out["kseq_beam4_gnmt"], out["ct2_beam4"]),
        "beam4_kseq_gnmt_0.6_vs_ct2_lp_0.6_patience1_identical":
            share(out["kseq_beam4_gnmt"], out["ct2_beam4_patience1"]),
        "beam4_kseq_fairseq_0.6_vs_ct2_lp_0.6_patience2_identical":
            share(out["kseq_beam4_fairseq"], out["ct2_beam4"]),
        "int8_greedy_identical_to_float32": share(out["ct2_greedy"], out["ct2_int8_greedy"]),
        "bleu": bleu,
        "int8_bleu_change": {"greedy": round(bleu["ct2_int8_greedy"] - bleu["ct2_greedy"], 2),
                             "beam4": round(bleu["ct2_int8_beam4"] - bleu["ct2_beam4"], 2)},
        "bleu_signature": corpus_scores(out["ct2_greedy"][:1], references[:1])["bleu_signature"],
        "sentences_per_second": speed,
        "ratio_ct2_over_kseq": {
            "greedy": harness.ratio(speed["ct2_greedy"], speed["kseq_greedy"]),
            "greedy_int8": harness.ratio(speed["ct2_int8_greedy"], speed["kseq_greedy"]),
            "beam4": harness.ratio(speed["ct2_beam4"], speed["kseq_beam4_gnmt"]),
            "beam4_int8": harness.ratio(speed["ct2_int8_beam4"], speed["kseq_beam4_gnmt"]),
        },
    }


def main(argv=None):
    parser = harness.arguments(__doc__, repeats=3)
    parser.set_defaults(threads=1)
    parser.add_argument("--batch", type=int, default=64, help="sentences per batch")
    parser.add_argument("--sentences", type=int, default=200,
                        help="LibreOffice slice paragraphs (at most 200)")
    parser.add_argument("--numbers", type=int, default=1000,
                        help="numbers test pairs (at most the recipe's 1,000)")
    args = harness.parse(parser, argv)
    if args.smoke:
        args.sentences, args.numbers = 8, 16
    import ctranslate2

    import kseq

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        result = {"ctranslate2_version": ctranslate2.__version__, "kseq_version": kseq.__version__,
                  "batch": args.batch, "threads": {"tensorflow": args.threads,
                                                   "ctranslate2_intra_threads": args.threads},
                  NUMBERS: numbers_section(folder, args),
                  LIBREOFFICE: libreoffice_section(folder, args)}
    result["seconds"] = round(time.perf_counter() - started, 1)
    harness.write("bench_ctranslate2", result, args)
    return result


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
