#!/usr/bin/env bash
# The training commands behind the shipped debian_descriptions_lm preset (issue 51), two runs
# of `kseq train` on 2 CPU cores, one line per epoch in the log:
#  1. pre-training: the preset's recipe with every other Debian section's texts added to train
#     without a category (data.background_sections="all": 30,730 texts, 1.64M tokens instead
#     of 4,181 and 250k), 36 epochs (35,568 steps: about 2 hours on 2 quiet AVX-512 cores at
#     3 minutes an epoch; --minutes stops it, the same command continues it);
#  2. fine-tuning it on the six sections alone (`--from`: the language model's fine-tuning
#     schedule with its peak raised to 2e-3, 30 warm-up steps, 8 epochs, the best validation
#     epoch kept; about 4 minutes). The peak: a higher one costs a little perplexity and makes
#     the samples keep their section more often (after 36 epochs of pre-training, 1e-3 /
#     2e-3: 60.0% / 63.0% of the samples, test perplexity 54.9 / 56.9; the same order after
#     16 and 26 epochs, 5e-4 lowest: benchmarks/results/lm_fine_tuning_trials.json).
# Then tools/language_model_card.py measures the fine-tuned run (bench_language_model.py's
# n-grams count the texts of both stages) and writes the shipped weights with the card.
# Usage: tools/train_debian_descriptions_lm.sh   (RUNS=folder, default runs/; MINUTES=180)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-runs}
MINUTES=${MINUTES:-180}
KSEQ=${KSEQ:-.venv/bin/kseq}
mkdir -p "$RUNS"
echo "== debian_all_sections_lm $(date -u +%H:%M:%S) minutes=$MINUTES"
/usr/bin/time -f "debian_all_sections_lm: %e s wall, %U s user" \
  "$KSEQ" train debian_descriptions_lm --output "$RUNS/debian_all_sections_lm" \
  --set 'data.background_sections="all"' --set training.epochs=36 \
  --minutes "$MINUTES" 2>&1 | tee -a "$RUNS/debian_all_sections_lm.log"
echo "== debian_descriptions_lm $(date -u +%H:%M:%S)"
/usr/bin/time -f "debian_descriptions_lm: %e s wall, %U s user" \
  "$KSEQ" train debian_descriptions_lm --from "$RUNS/debian_all_sections_lm" \
  --output "$RUNS/debian_descriptions_lm" --learning-rate 0.002 2>&1 | tee -a "$RUNS/debian_descriptions_lm.log"
