"""How well a self-play search's root value tells won connect-four positions from drawn ones.

    python experiments/c4_root_value.py CKPT [--sims 64] [--algorithm gumbel] [--positions 250] [--depths 8,12]

On the solver test positions (the c4-accuracy sets) it runs the search self-play runs (Gumbel
root noise on) and compares four readings of each position's value, per solved value (won /
drawn) and by the AUC of won against drawn: the raw network, the mean backed-up root value
(SearchResult.value), the root's value under its policy target (search.result.policy_value,
what selfplay.value_q_weight mixes into the value target) and the Q of the move it plays.
This is the measurement behind policy_value: a Gumbel root's mean value averages in the moves
that sequential halving visits and then rules out.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from azero.agents.checkpoints import load_evaluator, resolve_checkpoint
from azero.eval.c4accuracy import load_test_set, test_states
from azero.games.connect4 import Connect4Game
from azero.search.config import SearchConfig
from azero.search.mcts import MCTS
from azero.search.result import policy_value

from c4_misses import auc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--sims", type=int, default=64)
    ap.add_argument("--algorithm", default="gumbel", choices=("gumbel", "puct"))
    ap.add_argument("--positions", type=int, default=250)
    ap.add_argument("--depths", default="8,12")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    game = Connect4Game()
    evaluator = load_evaluator(resolve_checkpoint(args.checkpoint, game.spec.name), game=game, threads=1).evaluator
    out = {}
    for depth in (int(d) for d in args.depths.split(",")):
        ts, _ = load_test_set(0, depth, args.positions)
        states = test_states(list(ts.moves))
        search = MCTS(game.spec, evaluator, SearchConfig(simulations=args.sims, algorithm=args.algorithm,
                                                         seed=args.seed), batch_size=len(ts))
        r = search.run(states)
        _, net_value = evaluator.evaluate(states.encode(), states.legal_mask())
        readings = {"network": net_value, "root mean": r.value, "policy value": policy_value(r),
                    "Q(played move)": r.q[np.arange(len(ts)), r.action]}
        won, drawn = ts.value == 1, ts.value == 0
        out[str(depth)] = {name: {"won": round(float(x[won].mean()), 3), "drawn": round(float(x[drawn].mean()), 3),
                                  "AUC won vs drawn": round(auc(x[won], x[drawn]), 3)}
                           for name, x in readings.items()}
        for name, row in out[str(depth)].items():
            print(f"depth {depth:>2}  {name:<15} won {row['won']:+.2f}  drawn {row['drawn']:+.2f}  "
                  f"AUC {row['AUC won vs drawn']:.3f}", file=sys.stderr)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
