"""Networks shipped with azero: the strongest checkpoint per game, small enough to commit.

Each `<game>.safetensors` here sits next to `<game>.json`, which records the command and
config that trained it and its measured strength (see README, "Shipped networks").
Every command plays the shipped network of its game when no --checkpoint is
given (azero/agents/checkpoints.py: the one resolver).
"""

from __future__ import annotations

import json
from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent


def shipped_checkpoint(game: str) -> Path | None:
    """The shipped checkpoint of `game` ('connect4', 'go9x9', ...), or None if there is none."""
    path = MODELS_DIR / f"{game}.safetensors"
    return path if path.is_file() else None


def shipped_card(game: str) -> dict | None:
    """The record (command, config, strength) of the shipped checkpoint of `game`, or None."""
    path = MODELS_DIR / f"{game}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def shipped_games() -> list[str]:
    """Games with a shipped checkpoint."""
    return sorted(p.stem for p in MODELS_DIR.glob("*.safetensors"))
