#!/bin/bash
# Issue 20, the value head's budget: the protocol's checkpoints fit their value heads on 2,048
# problems x 4 rollouts in 300 steps (85 s, about one pass over the rollouts; held-out AUC 0.70 and
# 0.66). This refits each head (`azero llm train --value-only`: the same joint objective, value BCE
# plus the LM's own loss, so the LM trains on as well) on
# 8,192 problems x 8 rollouts in 3,000 steps, then reruns the protocol's 1,024- and 4,096-token
# columns (500 test problems, SEEDS default 0,1,2, as in the README) for the vote
# baselines and the step searches; then expert iteration from the refitted countdown3 checkpoint.
# Resumable: a refitted checkpoint or a finished comparison is kept.
cd "$(dirname "$0")/.."
AZERO=${AZERO:-.venv/bin/azero}
OUT=${OUT:-runs/llm-value8x}
T=${THREADS:-2}
mkdir -p "$OUT"
for task in ${TASKS:-countdown game24}; do
  ckpt="$OUT/$task.safetensors"
  if [ ! -f "$OUT/$task.done" ]; then
    cp docs/llm/$task.safetensors "$ckpt"
    nice "$AZERO" llm train --task $task --value-only --out "$ckpt" --value-problems 8192 --rollouts 8 \
      --value-steps 3000 --threads $T && touch "$OUT/$task.done" || exit 1
  fi
  nice "$AZERO" llm compare --ckpt "$ckpt" --problems 500 --seeds ${SEEDS:-0,1,2} --budgets 1024,4096 --threads $T \
    --methods greedy,bon-value,bon-majority,bon-weighted,oracle,step-beam,step-beam-weighted,dvts,dvts-weighted,puct-step,gumbel-step \
    --out "$OUT/compare-$task"
done
# Expert iteration from the refitted countdown3 checkpoint, evaluated on 500 test problems, each
# round's value head refit with the same larger budget (head mode: the distilled LM stays as it is).
if [[ " ${TASKS:-countdown game24} " == *" countdown "* ]]; then
  nice "$AZERO" llm iterate --ckpt "$OUT/countdown.safetensors" --rounds 2 --eval-problems 500 \
    --value-problems 8192 --value-steps 3000 --threads $T --out "$OUT/iterate-countdown"
fi
