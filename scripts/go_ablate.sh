#!/bin/bash
# Go 9x9 lever ablations (issue 16): from zero, seed 1, the preset plus one lever group per arm,
# each stopped at the same CPU budget (CPU=90 minutes ~ 45 minutes of wall clock on 2 idle cores;
# CPU time rather than wall clock so that other work on the machine does not shorten an arm).
# Arms run one after another. ONLY="name ..." runs just those; finished arms are skipped.
cd "$(dirname "$0")/.."
CPU=${CPU:-90}
OUT=${OUT:-runs/go-ablate}
mkdir -p "$OUT"
arm() {
  name=$1; shift
  [ -f "$OUT/$name/done" ] && return
  [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]] && return
  rm -rf "$OUT/$name"
  nice -n 10 .venv/bin/azero selfplay --game go9x9 --run-dir "$OUT/$name" seed=1 \
     train.steps=1000000 train.lr_schedule=constant train.checkpoint_every=1000 \
     run.max_cpu_minutes=$CPU "$@" > "$OUT/$name.log" 2>&1 && touch "$OUT/$name/done"
}
arm preset
