"""Command-line options of the GTP engine, shared by `azero gtp` and `python -m azero.gtp`.

Kept free of heavy imports: `python -m azero.gtp` starts in well under a second
without a checkpoint (torch is imported only to load one), which matters when a
controller starts an engine per game.
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    from azero.options import add_algorithm, add_checkpoint, add_device, add_search, add_seed, add_sims

    add_checkpoint(p)
    budget = p.add_mutually_exclusive_group()
    add_sims(budget, default=None, help="simulations per move (default 200; cut down by the GTP clock)")
    budget.add_argument("--time-per-move", type=float, metavar="S",
                        help="seconds per move (cut down by the GTP clock)")
    add_algorithm(p)
    add_search(p)
    p.add_argument("--game", default="go9x9", help="go9x9 (default), goNxN, or go (the network's board size)")
    p.add_argument("--komi", type=float, default=7.5, help="komi until the controller sends one (default 7.5)")
    add_seed(p)
    add_device(p)
    p.add_argument("--quiet", action="store_true", help="log only warnings to stderr")


# --search settings the engine cannot honour: its analysis grows one tree across commands (tree reuse),
# which a graph cannot, and it sizes its trees to each move's budget from the clock.
GTP_REFUSED_SEARCH = ("graph", "graph_stop", "max_nodes")


def check_gtp_search(search: dict) -> None:
    """ValueError naming any --search setting the GTP engine refuses (GTP_REFUSED_SEARCH)."""
    refused = [key for key in GTP_REFUSED_SEARCH if search.get(key) not in (None, False)]
    if refused:
        raise ValueError(f"--search {', '.join(refused)}: not for the GTP engine (its analysis tree grows across "
                         f"commands and it sizes its trees to each move's budget); graph search is for azero play, "
                         f"analyze and player specs")


def run_from_args(args: argparse.Namespace) -> int:
    from azero.gtp.engine import run

    from azero.agents.checkpoints import resolve_checkpoint
    from azero.agents.spec import search_overrides

    try:
        search = search_overrides(args.search, simulations=args.sims or 1, algorithm=args.algorithm)
        check_gtp_search(search)
        checkpoint = resolve_checkpoint(args.checkpoint, args.game)
    except (ValueError, FileNotFoundError) as e:
        raise SystemExit(f"azero gtp: {e}")
    return run(checkpoint=checkpoint, game=args.game, komi=args.komi, simulations=args.sims,
               time_per_move=args.time_per_move, algorithm=args.algorithm, seed=args.seed, device=args.device,
               precision=args.precision, backend=args.backend, search=search,
               quiet=args.quiet)
