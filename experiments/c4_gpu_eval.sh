#!/bin/bash
# Connect four evaluation of a finished run on a lent GPU machine (the `device` tool), where the
# 2-core CPU would need about 45 minutes for it. Everything runs float32 (as on a CPU without bf16),
# side by side on the machine's cores, the network on the GPU:
#   - c4-accuracy of the run's last checkpoint at 100 and 800 simulations, 1,000 positions per depth;
#   - c4-curve of every checkpoint at 100 and 800 simulations, 250 positions per depth;
#   - c4-openings against openspiel-mcts:1000 at 800 simulations, each opening twice from both sides;
#   - one c4-accuracy per search setting given (e.g. c_init=2.5 solver=true): the last checkpoint
#     at 800 simulations with that setting, to compare with the plain search on the same positions.
# The results come back as OUTDIR/c4eval.tgz.
# The machine has torch but not hydra/omegaconf/sgfmill/open_spiel: copy the pure-Python packages
# (antlr4 hydra omegaconf sgfmill ml_collections) from .venv's site-packages to .dev/site, and for the
# openings download open_spiel's cp312 wheel to .whl; all git-ignored through .git/info/exclude.
# What travels is capped at 64 MiB and the tracked tree is already most of it, so carry a slim copy
# of the run: weights-only exports of a few checkpoints and the metrics (the wheel, 16 MB, then
# rarely fits: GAMES=0 and play the openings on the CPU):
#   mkdir -p .devrun/RUN/checkpoints .devrun/RUN/logs; cp runs/RUN/logs/metrics.jsonl .devrun/RUN/logs/
#   python -m azero.models.export runs/RUN/checkpoints/ckpt_S.safetensors --game connect4 --out /tmp/eS
#   cp /tmp/eS/connect4.safetensors .devrun/RUN/checkpoints/ckpt_S.safetensors   # for each step S
# Usage, from the repo root on the device:
#   experiments/c4_gpu_eval.sh RUN_DIR OUTDIR [SETTING ...]
# A dry run here, small: SKIP_INSTALL=1 DEVICE=cpu POSITIONS=8 CURVE_POSITIONS=2 SIMS=4 GAMES=0 ...
# (GAMES=0 leaves the openings out).
set -uo pipefail
RUN=${1:?usage: c4_gpu_eval.sh RUN_DIR OUTDIR [SETTING ...]}; OUTDIR=$2; shift 2
export PYTHONPATH=$PWD/.dev/site:/tmp/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
t0=$(date +%s)
since() { echo "$(( $(date +%s) - t0 )) s"; }
DEVICE=${DEVICE:-cuda}; POSITIONS=${POSITIONS:-1000}; CURVE_POSITIONS=${CURVE_POSITIONS:-250}; SIMS=${SIMS:-800}
GAMES=${GAMES:-2}; PY=${PY:-python3}
[ "$DEVICE" = cpu ] || nvidia-smi -L; $PY -V; nproc
[ -n "${SKIP_INSTALL:-}" ] || { ! ls .whl/*.whl > /dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps \
  --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > "$OUTDIR/install.log" 2>&1 \
  || { tail -20 "$OUTDIR/install.log"; exit 1; }
python3 -m pip install --no-build-isolation --no-deps -e . >> "$OUTDIR/install.log" 2>&1 \
  || { tail -30 "$OUTDIR/install.log"; exit 1; }; }
echo "install done at $(since)"
ckpt=$(ls "$RUN"/checkpoints/ckpt_*.safetensors | sort | tail -1)
[ -n "$ckpt" ] || { echo "no checkpoints in $RUN"; exit 1; }
res=$OUTDIR/c4eval; mkdir -p "$res"
az() { $PY -m azero.cli "$@"; }
common=(--precision f32 --device "$DEVICE")
az c4-accuracy --checkpoint "$ckpt" --sims 100,$SIMS --positions $POSITIONS "${common[@]}" --out "$res/accuracy.json" > "$res/accuracy.txt" 2>&1 &
az c4-curve "$RUN" --sims 100,$SIMS --positions $CURVE_POSITIONS "${common[@]}" --out "$res/curve" > "$res/curve.txt" 2>&1 &
[ "$GAMES" = 0 ] || az c4-openings --checkpoint "$ckpt" --sims $SIMS --games $GAMES "${common[@]}" \
  --out "$res/openings.json" > "$res/openings.txt" 2>&1 &
for s in "$@"; do
  name=${s//[^A-Za-z0-9._-]/_}
  az c4-accuracy --checkpoint "$ckpt" --sims '' --agent "mcts:$ckpt@$SIMS:$s" --positions $POSITIONS \
    "${common[@]}" \
    --out "$res/setting-$name.json" > "$res/setting-$name.txt" 2>&1 &
done
wait
echo "evaluations done at $(since)"
for f in "$res"/*.txt; do echo "== $f"; grep -v "^azero c4" "$f" | tail -12; done
tar czf "$OUTDIR/c4eval.tgz" -C "$OUTDIR" c4eval
echo "packed at $(since)"
