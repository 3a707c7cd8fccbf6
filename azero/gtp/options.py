"""Command-line options of the GTP engine, shared by `azero gtp` and `python -m azero.gtp`.

Kept free of heavy imports: `python -m azero.gtp` starts in well under a second
without a checkpoint (torch is imported only to load one), which matters when a
controller starts an engine per game.
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    from azero.options import add_algorithm, add_checkpoint, add_device, add_seed, add_sims

    add_checkpoint(p)
    budget = p.add_mutually_exclusive_group()
    add_sims(budget, default=None, help="simulations per move (default 200; cut down by the GTP clock)")
    budget.add_argument("--time-per-move", type=float, metavar="S",
                        help="seconds per move (cut down by the GTP clock)")
    add_algorithm(p)
    p.add_argument("--game", default="go9x9", help="go9x9 (default), goNxN, or go (the network's board size)")
    p.add_argument("--komi", type=float, default=7.5, help="komi until the controller sends one (default 7.5)")
    add_seed(p)
    add_device(p)
    p.add_argument("--quiet", action="store_true", help="log only warnings to stderr")


def run_from_args(args: argparse.Namespace) -> int:
    from azero.gtp.engine import run

    from azero.agents.checkpoints import resolve_checkpoint

    try:
        checkpoint = resolve_checkpoint(args.checkpoint, args.game)
    except (ValueError, FileNotFoundError) as e:
        raise SystemExit(f"azero gtp: {e}")
    return run(checkpoint=checkpoint, game=args.game, komi=args.komi, simulations=args.sims,
               time_per_move=args.time_per_move, algorithm=args.algorithm, seed=args.seed, device=args.device,
               precision=args.precision, backend=args.backend,
               quiet=args.quiet)
