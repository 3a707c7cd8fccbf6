"""Networks shipped with azero: the strongest checkpoint per game, small enough to commit.

Each `<game>.safetensors` here sits next to `<game>.json`, which records the command and
config that trained it and its measured strength (see README, "Shipped networks").
`azero play` and `azero analyze` use the shipped network of their game when no
--checkpoint is given; `azero gtp --checkpoint shipped` asks for it (a GTP engine
without a checkpoint stays on random rollouts, which play any board size).
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


NO_NETWORK = "none"
"""--checkpoint value that asks for no network even where one is shipped."""


def resolve_checkpoint(game: str, checkpoint: str | None) -> str | None:
    """The checkpoint a command should load: the one given, else the shipped one of `game`, else None.

    `checkpoint == 'none'` means no network (search on the command's network-free evaluator).
    """
    if checkpoint is not None:
        return None if checkpoint == NO_NETWORK else checkpoint
    shipped = shipped_checkpoint(game)
    return str(shipped) if shipped is not None else None
