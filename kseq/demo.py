"""`make demo`: train a Transformer translator on `numbers` (en -> fr) and use it.

Prints test exact match, BLEU and chrF for greedy and beam-4 search, a few
source -> reference -> hypothesis lines, saves the model, reloads it and
translates new inputs. `KSEQ_DEMO_FAST=1` runs the same path at tiny size
(the smoke test); `KSEQ_DEMO_MINUTES` caps the training time (default 4).
"""

import os
import sys
import time


def main():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from kseq.training import load_trained, train

    fast = os.environ.get("KSEQ_DEMO_FAST") == "1"
    preset = "numbers_fr_tiny" if fast else "numbers_fr_transformer"
    minutes = float(os.environ.get("KSEQ_DEMO_MINUTES", "0.5" if fast else "4"))
    output = os.environ.get("KSEQ_DEMO_OUTPUT", os.path.join("runs", f"demo-{preset}"))
    test_size = 40 if fast else 1000
    print(f"kseq demo: training preset {preset} for at most {minutes:g} min -> {output}",
          flush=True)
    started = time.perf_counter()
    model, splits, _ = train(preset, output, minutes=minutes or None,  # 0: no time limit
                             verbose=1 if not fast else 2)
    print(f"trained in {time.perf_counter() - started:.0f} s, "
          f"{model.count_params():,} parameters", flush=True)

    test = splits["test"][:test_size]
    for name, beam in (("greedy", 1), ("beam 4", 4)):
        result = model.evaluate_bleu(test, beam_size=beam, print_signature=False)
        print(f"{name:7s} on {len(test)} unseen numbers: exact match {result['exact_match']:.3f}"
              f"  BLEU {result['bleu']:.2f}  chrF {result['chrf']:.2f}", flush=True)
    print(f"signature: {result['bleu_signature']}")
    for (source, reference), hypothesis in list(zip(test, result["hypotheses"]))[:5]:
        print(f"  {source}\n    ref: {reference}\n    hyp: {hypothesis}")

    reloaded = load_trained(output)
    new_inputs = ["seven hundred and seventy-seven", "twelve thousand and five",
                  "nine hundred and ninety-nine thousand, nine hundred and ninety-nine"]
    print(f"reloaded {os.path.join(output, 'model.keras')}; new inputs, beam 4:")
    for source, target in zip(new_inputs, reloaded.translate(new_inputs, beam_size=4)):
        print(f"  {source} -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
