#!/bin/bash
# A burst on a lent GPU machine (the `device` tool): install azero there, run the CUDA tests,
# continue a run for MINUTES with the GPU serving inference and training, and pack what the
# burst added (checkpoints, shards, logs) as OUTDIR/burst.tgz.part-* to unpack over the run here:
#   cat burst.tgz.part-* | tar xz -C runs/go-long
# The machine has torch but not hydra/omegaconf/sgfmill: copy those pure-Python packages
# from .venv's site-packages to .dev/site (git-ignored) and carry .dev and the run dir.
# Usage, from the repo root on the device:
#   experiments/gpu_burst.sh RUN_DIR MINUTES OUTDIR [KEY=VALUE overrides for the resumed run]
set -uo pipefail
RUN=${1:?usage: gpu_burst.sh RUN_DIR MINUTES OUTDIR [overrides]}; MIN=$2; OUTDIR=$3; shift 3
export PYTHONPATH=$PWD/.dev/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
t0=$(date +%s)
since() { echo "$(( $(date +%s) - t0 )) s"; }
nvidia-smi -L; python3 -V; nproc
[ -n "${SKIP_INSTALL:-}" ] || python3 -m pip install --no-build-isolation --no-deps -e . > "$OUTDIR/install.log" 2>&1 \
  || { tail -30 "$OUTDIR/install.log"; exit 1; }
echo "install done at $(since)"
python3 -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tee "$OUTDIR/gpu-tests.txt" | tail -8
echo "gpu tests done at $(since)"
[ -d "$RUN" ] || { echo "no run dir $RUN"; exit 1; }
touch /tmp/burst-start; sleep 1
timeout $(( MIN * 60 + 180 )) python3 -m azero.cli selfplay --resume "$RUN" run.max_minutes="$MIN" "$@" \
  > "$OUTDIR/burst.log" 2>&1
echo "burst rc $? at $(since)"
head -2 "$OUTDIR/burst.log"; awk 'NR % 6 == 0' "$OUTDIR/burst.log" | tail -12; tail -3 "$OUTDIR/burst.log"
# Everything the burst wrote or appended to (state.json and the logs hold the old lines too).
(cd "$RUN" && find . -type f -newer /tmp/burst-start -print0 | tar czf - --null -T -) \
  | split -b 15m - "$OUTDIR/burst.tgz.part-"
ls -la "$OUTDIR"; echo "packed at $(since)"
