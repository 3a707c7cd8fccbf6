"""Command-line options of the GTP engine, shared by `azero gtp` and `python -m azero.gtp`.

Kept free of heavy imports: `python -m azero.gtp` starts in well under a second
without a checkpoint (torch is imported only to load one), which matters when a
controller starts an engine per game.
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", help="network checkpoint (.safetensors); default: random rollouts")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--sims", type=int, help="simulations per move (default 200; cut down by the GTP clock)")
    budget.add_argument("--time-per-move", type=float, metavar="S",
                        help="seconds per move (cut down by the GTP clock)")
    p.add_argument("--algorithm", choices=["puct", "gumbel"], default="puct", help="root search (default puct)")
    p.add_argument("--game", default="go9x9", help="go9x9 (default), goNxN, or go (the network's board size)")
    p.add_argument("--komi", type=float, default=7.5, help="komi until the controller sends one (default 7.5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="torch device for the network (default: cuda if present)")
    p.add_argument("--quiet", action="store_true", help="log only warnings to stderr")


def run_from_args(args: argparse.Namespace) -> int:
    from azero.gtp.engine import run

    return run(checkpoint=args.checkpoint, game=args.game, komi=args.komi, simulations=args.sims,
               time_per_move=args.time_per_move, algorithm=args.algorithm, seed=args.seed, device=args.device,
               quiet=args.quiet)
