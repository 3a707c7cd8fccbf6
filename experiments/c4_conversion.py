"""How often self-play's own move choice turns a solved connect-four position into the outcome it is worth.

    python experiments/c4_conversion.py CKPT [--sims 64] [--positions 250] [--depths 8,12] [--rules noised,greedy]

From the solver test positions (the c4-accuracy sets: won or drawn for the player to move) it
plays every game to the end the way self-play does (Gumbel search, root noise on),
both sides choosing by one rule, and reports how often the game's result equals the solved
value. The rules:

- noised: SearchResult.action, the Gumbel move g + logit + sigma(completed Q) that self-play
  plays after its opening moves (selfplay.temperature_moves does not apply to a Gumbel root);
- greedy: the argmax of the improved policy, the same choice without the Gumbel noise.

An outcome that disagrees with the solved value is a wrong value target for every position of
that game before the error, so the gap between the rules is the noise the move choice adds to
the value head's targets.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from azero.agents.checkpoints import load_evaluator, resolve_checkpoint
from azero.eval.c4accuracy import load_test_set, test_states
from azero.games.base import NO_ACTION
from azero.games.connect4 import Connect4Game
from azero.search.config import SearchConfig
from azero.search.mcts import MCTS

RULES = ("noised", "greedy")


def play_out(search: MCTS, states, rule: str) -> None:
    """Play every game of `states` to its end, both sides choosing by `rule`."""
    while True:
        over = states.terminal()
        if over.all():
            return
        result = search.run(states, active=~over)
        actions = result.action if rule == "noised" else result.policy.argmax(axis=1).astype(np.int32)
        actions = np.where(over, NO_ACTION, actions).astype(np.int32)
        states.apply(actions)
        search.advance(actions)


def conversion(evaluator, ts, sims: int, rule: str, seed: int) -> dict:
    states = test_states(list(ts.moves))
    mover = states.to_play().copy()
    search = MCTS(Connect4Game().spec, evaluator,
                  SearchConfig(simulations=sims, algorithm="gumbel", seed=seed), batch_size=len(ts.moves))
    play_out(search, states, rule)
    outcome = states.outcome() * np.where(mover == 0, 1.0, -1.0)  # outcome is player 0's; the solved value is the mover's
    agree = np.rint(outcome) == ts.value
    won, drawn = ts.value == 1, ts.value == 0
    return {"agree": round(float(agree.mean()), 4),
            "won kept": round(float(agree[won].mean()), 4) if won.any() else None,
            "drawn kept": round(float(agree[drawn].mean()), 4) if drawn.any() else None,
            "positions": len(ts.moves)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--sims", type=int, default=64)
    ap.add_argument("--positions", type=int, default=250)
    ap.add_argument("--depths", default="8,12")
    ap.add_argument("--rules", default=",".join(RULES))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    rules = args.rules.split(",")
    unknown = sorted(set(rules) - set(RULES))
    if unknown:
        ap.error(f"--rules: unknown rule(s) {unknown}; choose from {list(RULES)}")

    game = Connect4Game()
    evaluator = load_evaluator(resolve_checkpoint(args.checkpoint, game.spec.name), game=game, threads=1).evaluator
    out = {}
    for depth in (int(d) for d in args.depths.split(",")):
        ts, _ = load_test_set(0, depth, args.positions)
        for rule in rules:
            row = conversion(evaluator, ts, args.sims, rule, args.seed)
            out.setdefault(str(depth), {})[rule] = row
            print(f"depth {depth:>2}  {rule:<7} agree {row['agree']:.3f}  won kept {row['won kept']}  "
                  f"drawn kept {row['drawn kept']}", file=sys.stderr)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
