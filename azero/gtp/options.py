"""Command-line options of the GTP engine, shared by `azero gtp` and `python -m azero.gtp`.

Kept free of heavy imports: `python -m azero.gtp` starts in well under a second
without a checkpoint (torch is imported only to load one), which matters when a
controller starts an engine per game.
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", help="network checkpoint (.safetensors), or 'shipped' for the network shipped "
                                        "with azero for --game (azero/models); default: random rollouts")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--sims", type=int, help="simulations per move (default 200; cut down by the GTP clock)")
    budget.add_argument("--time-per-move", type=float, metavar="S",
                        help="seconds per move (cut down by the GTP clock)")
    p.add_argument("--algorithm", choices=["puct", "gumbel"], default="puct", help="root search (default puct)")
    p.add_argument("--game", default="go9x9", help="go9x9 (default), goNxN, or go (the network's board size)")
    p.add_argument("--komi", type=float, default=7.5, help="komi until the controller sends one (default 7.5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="torch device for the network (default: cuda if present)")
    from azero.train.precision import add_inference_arguments

    add_inference_arguments(p)
    p.add_argument("--quiet", action="store_true", help="log only warnings to stderr")


SHIPPED = "shipped"


def gtp_checkpoint(game: str, checkpoint: str | None) -> str | None:
    """The file --checkpoint names: 'shipped' is the shipped network of `game` (ValueError if none)."""
    if checkpoint != SHIPPED:
        return checkpoint
    from azero.models import shipped_checkpoint, shipped_games

    path = shipped_checkpoint(game)
    if path is None:
        raise ValueError(f"--checkpoint shipped: no network is shipped for {game!r} "
                         f"(shipped: {', '.join(shipped_games()) or 'none'})")
    return str(path)


def run_from_args(args: argparse.Namespace) -> int:
    from azero.gtp.engine import run

    try:
        checkpoint = gtp_checkpoint(args.game, args.checkpoint)
    except ValueError as e:
        raise SystemExit(f"azero gtp: {e}")
    return run(checkpoint=checkpoint, game=args.game, komi=args.komi, simulations=args.sims,
               time_per_move=args.time_per_move, algorithm=args.algorithm, seed=args.seed, device=args.device,
               precision=args.precision, backend=args.backend,
               quiet=args.quiet)
