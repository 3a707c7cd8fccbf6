"""The options every command that plays shares, each defined once with one default.

    --checkpoint   the shipped network of the game by default; 'none' for no network
                   (agents/checkpoints.py has the whole convention)
    --sims         simulations per move or position (default 200)
    --algorithm    puct or gumbel (Gumbel with its deterministic root)
    --search       KEY=VALUE search settings, as in an mcts: player spec (graph=true, c_init=1.5, ...)
    --seed         0
    --device       auto: CUDA where there is one, else the CPU
    --threads      torch CPU threads, 1 (searches evaluate small batches; the LLM commands leave
                   torch its own pool, 0, for a language model's large forward passes)
    --precision, --backend   train/precision.py

Kept free of heavy imports: `python -m azero.gtp` builds its parser from these.
"""

from __future__ import annotations

import argparse

DEFAULT_SIMULATIONS = 200
ALGORITHM_HELP = ("search algorithm (default puct); gumbel uses its deterministic root (gumbel_scale=0: no "
                  "sampling), as every player does")
CHECKPOINT_HELP = ("network: a checkpoint file, a run directory (its newest checkpoint), 'shipped' (default: the "
                   "network shipped for the game, if any) or 'none' (search on random rollouts)")


def add_checkpoint(p, *, help: str = CHECKPOINT_HELP) -> None:
    p.add_argument("--checkpoint", metavar="CKPT", help=help)


def add_sims(p, *, default: int | None = DEFAULT_SIMULATIONS, help: str | None = None) -> None:
    p.add_argument("--sims", type=int, default=default,
                   help=help or f"simulations per move (default {DEFAULT_SIMULATIONS})")


def add_algorithm(p) -> None:
    p.add_argument("--algorithm", choices=["puct", "gumbel"], default="puct", help=ALGORITHM_HELP)


SEARCH_HELP = ("a search setting KEY=VALUE, repeatable: the KEY=VALUE options of an mcts: player spec, e.g. "
               "--search graph=true --search final_q_share=0.5 (azero/agents/spec.py lists them)")


def add_search(p) -> None:
    p.add_argument("--search", action="append", default=[], metavar="KEY=VALUE", help=SEARCH_HELP)


def add_seed(p, *, default: int | None = 0, help: str = "seed of every random choice (default 0)") -> None:
    p.add_argument("--seed", type=int, default=default, help=help)


def add_device(p) -> None:
    p.add_argument("--device", default="auto", help="torch device for networks (default auto: cuda if present)")
    from azero.train.precision import add_inference_arguments

    add_inference_arguments(p)


def add_threads(p, *, default: int = 1, help: str = "torch CPU threads (default 1)") -> None:
    p.add_argument("--threads", type=int, default=default, help=help)


def add_player_options(p: argparse.ArgumentParser, *, checkpoint: bool = True, sims: bool = True,
                       algorithm: bool = True, search: bool = False, seed: bool = True,
                       threads: bool = True) -> None:
    """The shared options of a command that searches with a network (module docstring)."""
    if checkpoint:
        add_checkpoint(p)
    if sims:
        add_sims(p)
    if algorithm:
        add_algorithm(p)
    if search:
        add_search(p)
    if seed:
        add_seed(p)
    add_device(p)
    if threads:
        add_threads(p)
