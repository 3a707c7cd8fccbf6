#!/bin/bash
# Issue 20: outcome against process labels for the value head (`azero llm train --value-labels`), a
# paired A/B from the protocol's countdown3 checkpoint. Each arm refits the value head (the joint
# objective) on 8,192 problems x 8 rollouts in STEPS (default 1,000) steps, one arm after the
# other, then runs one seed of the protocol at 1,024 tokens on 500 test problems for the vote and
# the step searches. Resumable: a finished refit is kept.
cd "$(dirname "$0")/.."
AZERO=${AZERO:-.venv/bin/azero}
OUT=${OUT:-runs/llm-process-labels}
T=${THREADS:-1}
mkdir -p "$OUT"
for arm in outcome process; do
  ck="$OUT/$arm.safetensors"
  if [ ! -f "$OUT/$arm.done" ]; then
    cp docs/llm/countdown.safetensors "$ck"
    nice "$AZERO" llm train --task countdown --value-only --out "$ck" --value-problems 8192 --rollouts 8 \
      --value-steps ${STEPS:-1000} --value-labels $arm --threads $T && touch "$OUT/$arm.done" || exit 1
  fi
done
for arm in outcome process; do
  nice "$AZERO" llm compare --ckpt "$OUT/$arm.safetensors" --problems 500 --seeds ${SEEDS:-0} --budgets 1024 --threads $T \
    --methods greedy,bon-value,bon-weighted,oracle,step-beam,step-beam-weighted,rebase,rebase-weighted,gumbel-step,gumbel-step-weighted \
    --no-kv-check --out "$OUT/compare-$arm"
done
