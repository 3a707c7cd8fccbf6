"""Do threat planes help a connect-four network? A supervised probe on fixed self-play data.

    python experiments/c4_feature_probe.py --runs runs/c4-ro8,runs/c4-own --steps 6000 --out F.json

Self-play arms differ by far more noise than a feature is likely to be worth (one 4,000-position
reading is +-0.45 points), so this fits two networks of the recipe's size (8x64) from scratch on
the same replay positions, with the same seed, batches and schedule, one reading the game's three
planes and one with two more: the empty cells where a disc of the player to move, or of the
opponent, would complete four ("threats", whether or not the cell is playable yet; connect four's
strategy is about where these lie: Allis 1988, odd and even threats). Each is scored on the solver
test sets as the raw network: accuracy (argmax of the policy keeps the value) per depth, and the
value's AUC for won against drawn positions (c4_misses.py showed the misses are mostly win->draw
and draw->loss). A feature worth a self-play arm shows here first.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

import numpy as np
import torch

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.getcwd())

from azero.eval.c4accuracy import load_test_set, test_states  # noqa: E402
from azero.games.connect4 import Connect4Game  # noqa: E402
from azero.train.network import NetworkConfig, PolicyValueNet, Shapes  # noqa: E402
from azero.train.trainer import TrainConfig, Trainer  # noqa: E402

H, W = 6, 7
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def threats(mine: np.ndarray, empty: np.ndarray) -> np.ndarray:
    """bool [N, H, W]: empty cells where a disc of `mine`'s owner completes four in some line."""
    n = mine.shape[0]
    pad = np.zeros((n, H + 6, W + 6), bool)
    pad[:, 3:3 + H, 3:3 + W] = mine
    out = np.zeros((n, H, W), bool)
    for dr, dc in DIRECTIONS:
        for k in range(4):           # the cell's place in the window of four
            ok = np.ones((n, H, W), bool)
            for i in range(4):
                if i == k:
                    continue
                r, c = 3 + (i - k) * dr, 3 + (i - k) * dc
                ok &= pad[:, r:r + H, c:c + W]
            out |= ok
    return out & empty


def with_threats(obs: np.ndarray) -> np.ndarray:
    """[N, 3, H, W] -> [N, 5, H, W]: replay observations (stored with the basic planes) as
    game.features=threats encodes them: the basic planes, then own and opponent threats."""
    own, opp = obs[:, 0] > 0, obs[:, 1] > 0
    empty = ~(own | opp)
    return np.concatenate([obs, threats(own, empty)[:, None], threats(opp, empty)[:, None]],
                          axis=1).astype(obs.dtype)


def load_replay(runs: list[str]) -> dict[str, np.ndarray]:
    parts: dict[str, list] = {"obs": [], "pi": [], "z": [], "legal": []}
    for run in runs:
        for f in sorted(glob.glob(os.path.join(run, "replay", "*.npz"))):
            with np.load(f, allow_pickle=False) as d:
                for k in parts:
                    parts[k].append(d[k])
    return {k: np.concatenate(v) for k, v in parts.items()}


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """P(a positive scores above a negative), ties half (the Mann-Whitney statistic)."""
    from sklearn.metrics import roc_auc_score

    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    return float(roc_auc_score(np.r_[np.ones(len(pos)), np.zeros(len(neg))], np.r_[pos, neg]))


def evaluate(net: PolicyValueNet, sets: dict, feature: bool) -> dict:
    net.eval()
    out = {}
    total = correct = 0
    for depth, ts in sets.items():
        obs = test_states(list(ts.moves), Connect4Game("threats" if feature else "basic")).encode()
        with torch.no_grad():
            heads = net.heads(torch.as_tensor(obs, dtype=torch.float32))
        logits = heads["logits"].float().numpy()
        value = heads["value"].float().numpy().reshape(-1)
        legal = (obs[:, 0] + obs[:, 1])[:, 0, :] == 0    # top row empty
        logits = np.where(legal, logits, -np.inf)
        move = logits.argmax(axis=1)
        ok = ts.keeps[np.arange(len(move)), move]
        won = ts.value == 1
        out[str(depth)] = {"n": len(ok), "correct": int(ok.sum()), "accuracy": float(ok.mean()),
                           "value_auc_won_vs_drawn": auc(value[won], value[~won]),
                           "value_mean_won": float(value[won].mean()), "value_mean_drawn": float(value[~won].mean())}
        total += len(ok)
        correct += int(ok.sum())
    out["overall"] = {"n": total, "correct": correct, "accuracy": correct / total}
    return out


def fit(data: dict, feature: bool, args) -> tuple[PolicyValueNet, list]:
    torch.manual_seed(args.seed)
    obs = with_threats(data["obs"]) if feature else data["obs"]
    net = PolicyValueNet(Shapes(obs_shape=obs.shape[1:], num_actions=7),
                         NetworkConfig(blocks=8, channels=64, global_pool_every=2, global_pool_channels=8,
                                       value_hidden=32))
    cfg = TrainConfig(lr=args.lr, steps=args.steps, lr_schedule="cosine", lr_min_ratio=0.03, seed=args.seed)
    trainer = Trainer(net, cfg, device="cpu")
    rng = np.random.default_rng(args.seed)      # same batches and mirror flips for both nets
    n = len(obs)
    log = []
    t0 = time.time()
    for step in range(args.steps):
        idx = rng.integers(0, n, args.batch)
        flip = rng.random(args.batch) < 0.5
        o, pi, legal = obs[idx].copy(), data["pi"][idx].copy(), data["legal"][idx].copy()
        o[flip] = o[flip][..., ::-1]
        pi[flip] = pi[flip][:, ::-1]
        legal[flip] = legal[flip][:, ::-1]
        m = trainer.train_step({"obs": o, "pi": pi, "z": data["z"][idx], "legal": legal})
        if (step + 1) % 500 == 0:
            log.append({k: m[k] for k in ("step", "policy_loss", "value_loss", "lr")})
            print(f"  {'threats' if feature else 'plain'} step {step + 1}: policy {m['policy_loss']:.3f} "
                  f"value {m['value_loss']:.3f} ({time.time() - t0:.0f} s)", flush=True)
    return trainer.net, log


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", required=True, help="comma-separated run folders whose replay/ to fit")
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--arms", default="plain,threats")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("THREADS", "2")))
    data = load_replay(args.runs.split(","))
    print(f"{len(data['obs'])} positions from {args.runs}", flush=True)
    sets = {d: load_test_set(0, d, 1000)[0] for d in (8, 12, 16, 20)}
    report = {"runs": args.runs, "positions": len(data["obs"]), "steps": args.steps, "batch": args.batch,
              "lr": args.lr, "seed": args.seed, "arms": {}}
    for arm in args.arms.split(","):
        net, log = fit(data, arm == "threats", args)
        report["arms"][arm] = {"raw": evaluate(net, sets, arm == "threats"), "log": log}
        r = report["arms"][arm]["raw"]
        print(f"{arm}: raw {r['overall']['accuracy']:.4f} ({r['overall']['correct']}), depth 8 "
              f"{r['8']['accuracy']:.3f} AUC {r['8']['value_auc_won_vs_drawn']:.3f}", flush=True)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
