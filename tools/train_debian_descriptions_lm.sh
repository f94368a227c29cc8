#!/usr/bin/env bash
# The training command behind the shipped debian_descriptions_lm preset (issue 51): 33 minutes
# of `kseq train` on 2 shared CPU cores at nice 5, one line per epoch in the log. The run is
# then measured by benchmarks/bench_language_model.py and written as shipped weights with its
# card by tools/language_model_card.py.
# Usage: tools/train_debian_descriptions_lm.sh   (RUNS=folder, default runs/; MINUTES=33)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-runs}
MINUTES=${MINUTES:-33}
KSEQ=${KSEQ:-.venv/bin/kseq}
mkdir -p "$RUNS"
echo "== debian_descriptions_lm $(date -u +%H:%M:%S) minutes=$MINUTES"
/usr/bin/time -f "debian_descriptions_lm: %e s wall, %U s user" \
  nice -n 5 "$KSEQ" train debian_descriptions_lm --output "$RUNS/debian_descriptions_lm" \
  --minutes "$MINUTES" 2>&1 | tee -a "$RUNS/debian_descriptions_lm.log"
