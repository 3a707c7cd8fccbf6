"""Where a connect-four network's searched moves lose the solved value, and why.

    python experiments/c4_misses.py CKPT [--sims 800] [--positions 1000] [--depths 8,12,16,20]

For each solver test position (the c4-accuracy sets) where the search's move changes the value,
it reports the kind of miss (a win given up for a draw or a loss, a draw given up for a loss),
whether the raw policy already chose a value-keeping move there (search made it worse) or not,
and how far the network's value of the position lies from the truth, per depth. The point is to
say which lever is missing: the policy (raw wrong, search cannot fix it in 800 simulations), or
the value (raw right, the search's values pull it off).

It also says how well the network's value tells won positions from drawn ones (the misses are
mostly win->draw and draw->loss): the AUC of the value over those two sets (0.5 = blind, 1 =
perfect), and for a win / draw / loss head (model.wdl_head) its mean P(draw) on won and on drawn
positions and the AUC of P(draw) for picking out the drawn ones.

From the search's root it says whether a value-aware final choice would have helped: in how many
misses the searched Q of the move played stands above that of every visited value-keeping move
(then the values, not the visit counts, are wrong), and how many positions a choice by Q among the
well-visited moves (`search.final_q_share=0.5`) would keep, beside the most visited move's count.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

import numpy as np
import torch

from azero.agents.checkpoints import load_evaluator, resolve_checkpoint
from azero.agents.mcts import MctsPlayer
from azero.agents.simple import RawNetworkPlayer
from azero.eval.c4accuracy import choose_moves, default_cache_dir, load_test_set, test_states
from azero.games.c4solver import move_values
from azero.games.connect4 import Connect4Game
from azero.search.config import play_config
from azero.search.result import final_choice

VALUE_NAME = {1: "win", 0: "draw", -1: "loss"}


def auc(positive: np.ndarray, negative: np.ndarray) -> float:
    """P(a random positive scores above a random negative), ties counting half (Mann-Whitney)."""
    from sklearn.metrics import roc_auc_score

    if len(positive) == 0 or len(negative) == 0:
        return float("nan")
    return float(roc_auc_score(np.r_[np.ones(len(positive)), np.zeros(len(negative))], np.r_[positive, negative]))


def wdl_probs(net, states) -> np.ndarray | None:
    """[N, 3] win / draw / loss probabilities of a network with a WDL head, else None."""
    if not getattr(net, "has_wdl", False):
        return None
    with torch.no_grad():
        logits = net.heads(torch.from_numpy(states.encode()))["wdl"]
    return torch.softmax(logits.float(), dim=1).numpy()


def separation(value: np.ndarray, net_value: np.ndarray, probs: np.ndarray | None) -> dict:
    """How well the net's value (and P(draw)) tells the won positions from the drawn ones."""
    won, drawn = value == 1, value == 0
    out = {"value AUC won vs drawn": round(auc(net_value[won], net_value[drawn]), 3)}
    if probs is not None:
        out.update({"P(draw) won": round(float(probs[won, 1].mean()), 3),
                    "P(draw) drawn": round(float(probs[drawn, 1].mean()), 3),
                    "P(draw) AUC drawn vs won": round(auc(probs[drawn, 1], probs[won, 1]), 3)})
    return out


def q_prefers_wrong(visits: np.ndarray, q: np.ndarray, keeps: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """bool [N]: the chosen move's Q stands above the Q of every visited value-keeping move (True
    too where no keeping move was visited at all)."""
    best_keep = np.where(keeps & (visits > 0), q, -np.inf).max(axis=1)
    return q[np.arange(len(q)), chosen] > best_keep


def search_roots(search: MctsPlayer, moves: list[str], batch: int = 64):
    """The searched move, root visits and root Q of every position, `batch` positions per search."""
    chosen, visits, q = [], [], []
    for i in range(0, len(moves), batch):
        states = test_states(moves[i:i + batch])
        result = search.search(states)
        n = len(states)
        chosen.append(result.action[:n].astype(np.int64))
        visits.append(result.visits[:n].copy())
        q.append(result.q[:n].copy())
    return np.concatenate(chosen), np.concatenate(visits), np.concatenate(q)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--sims", type=int, default=800)
    ap.add_argument("--positions", type=int, default=1000)
    ap.add_argument("--depths", default="8,12,16,20")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the per-miss records here as JSON")
    args = ap.parse_args(argv)

    game = Connect4Game()
    path = resolve_checkpoint(args.checkpoint, game.spec.name)
    evaluator = load_evaluator(path, game=game, threads=1).evaluator
    net = evaluator.net  # the torch module the evaluator runs (its WDL logits are not in evaluate's output)
    raw = RawNetworkPlayer(evaluator)
    search = MctsPlayer(game.spec, evaluator, play_config(args.sims, seed=args.seed), name=f"puct@{args.sims}")
    summary, misses = {}, []
    for depth in (int(d) for d in args.depths.split(",")):
        # the c4-accuracy cache: another seed than the shipped sets is solved once, not on every run
        ts, _ = load_test_set(args.seed, depth, args.positions, cache_dir=default_cache_dir())
        moves = list(ts.moves)
        chosen, visits, q = search_roots(search, moves)
        raw_chosen = choose_moves(raw, moves)
        states = test_states(moves)
        _, net_value = evaluator.evaluate(states.encode(), states.legal_mask())
        kinds = Counter()
        missed = ~ts.keeps[np.arange(len(ts)), chosen]
        for i in np.flatnonzero(missed):
            truth = int(ts.value[i])
            got = int(move_values(moves[i])[chosen[i]])
            raw_ok = bool(ts.keeps[i, raw_chosen[i]])
            kind = f"{VALUE_NAME[truth]}->{VALUE_NAME[got]}"
            kinds[kind] += 1
            kinds["raw policy kept the value" if raw_ok else "raw policy missed too"] += 1
            misses.append({"depth": depth, "position": moves[i], "truth": truth, "after_move": got,
                           "searched": int(chosen[i]) + 1, "raw": int(raw_chosen[i]) + 1, "raw_ok": raw_ok,
                           "keeps": "".join("1" if k else "0" for k in ts.keeps[i]),
                           "net_value": round(float(net_value[i]), 3)})
        kinds["search Q prefers the wrong move"] = int((q_prefers_wrong(visits, q, ts.keeps, chosen) & missed).sum())
        kinds["kept, most visited"] = int((~missed).sum())
        kinds["kept, max Q of the well visited"] = int(ts.keeps[np.arange(len(ts)), final_choice(visits, q, 0.5)].sum())
        value = ts.value.astype(np.float64)
        err = np.abs(net_value - value)
        summary[str(depth)] = {"positions": len(ts), "misses": int(sum(kinds[k] for k in kinds if "->" in k)),
                               **dict(kinds),
                               "net |v - truth| won": round(float(err[ts.value == 1].mean()), 3),
                               "net |v - truth| drawn": round(float(err[ts.value == 0].mean()), 3),
                               **separation(ts.value, net_value, wdl_probs(net, states))}
        print(depth, json.dumps(summary[str(depth)]), file=sys.stderr, flush=True)
    doc = {"checkpoint": str(path), "simulations": args.sims, "summary": summary, "misses": misses}
    print(json.dumps(summary, indent=1))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
