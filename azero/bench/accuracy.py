"""`azero bench accuracy`: what the default inference (bf16, OpenVINO) changes in a trained
network's answers, against float32 eager torch, on a real run's positions.

  - policy and value: on up to N observations from RUN/replay (the run's replay shards, read
    without pickle), the mean KL(p_f32 || p_default) over the legal moves in nats and the mean
    |v_f32 - v_default|;
  - search: on up to N positions rebuilt from RUN/sgf (that run's recorded games; run with
    selfplay.sgf_every=1 to record every game), a PUCT search of S simulations with each
    evaluator, no root noise and the same seed, and how often both pick the same move.

Goals (issue 15): KL < 0.01 nats, |dv| < 0.02, the searches agree in >= 97% of positions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from azero.games.base import NO_ACTION
from azero.search.config import SearchConfig
from azero.search.mcts import MCTS
from azero.selfplay.network_evaluator import NetworkEvaluator
from azero.train.checkpoint import network_from_checkpoint


def replay_positions(replay_dir: Path, limit: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Up to `limit` (obs float32 [N, C, H, W], legal bool [N, A]) drawn without replacement."""
    obs, legal = [], []
    for path in sorted(replay_dir.glob("shard_*.npz")):
        with np.load(path, allow_pickle=False) as f:
            obs.append(f["obs"].astype(np.float32))
            legal.append(f["legal"].astype(bool))
    if not obs:
        raise FileNotFoundError(f"no replay shards (shard_*.npz) in {replay_dir}")
    obs_all, legal_all = np.concatenate(obs), np.concatenate(legal)
    pick = np.random.default_rng(seed).permutation(len(obs_all))[:limit]
    return obs_all[np.sort(pick)], legal_all[np.sort(pick)]


def sgf_positions(game, sgf_dir: Path, limit: int, seed: int):
    """A batch of up to `limit` states: positions before a move of the run's recorded games."""
    from azero.games.sgf import SgfError, read_sgf

    games = []
    for path in sorted(sgf_dir.glob("*.sgf")):
        try:
            games.append(read_sgf(path.read_bytes()).moves)
        except SgfError as e:
            raise SgfError(f"{path}: {e}") from None
    pairs = [(g, m) for g, moves in enumerate(games) for m in range(len(moves))]
    if not pairs:
        raise FileNotFoundError(f"no recorded games (*.sgf) in {sgf_dir}")
    rng = np.random.default_rng(seed)
    chosen = [pairs[i] for i in np.sort(rng.permutation(len(pairs))[:limit])]
    states = game.new_states(len(chosen))
    for t in range(max(m for _, m in chosen)):
        states.apply(np.array([games[g][t] if t < m else NO_ACTION for g, m in chosen], dtype=np.int32))
    return states


def policy_value_gap(ref: NetworkEvaluator, new: NetworkEvaluator, obs, legal, batch: int = 256):
    """(mean KL(p_ref || p_new) in nats, mean |v_ref - v_new|) over the positions."""
    kls, dvs = [], []
    for i in range(0, len(obs), batch):
        p0, v0 = ref.evaluate(obs[i:i + batch], legal[i:i + batch])
        p1, v1 = new.evaluate(obs[i:i + batch], legal[i:i + batch])
        kls.append(np.where(p0 > 0, p0 * (np.log(np.maximum(p0, 1e-30)) - np.log(np.maximum(p1, 1e-30))), 0).sum(1))
        dvs.append(np.abs(v0 - v1))
    return float(np.concatenate(kls).mean()), float(np.concatenate(dvs).mean())


def search_moves(game, evaluator, states, simulations: int, seed: int, batch: int = 128) -> np.ndarray:
    cfg = SearchConfig(simulations=simulations, dirichlet_weight=0.0, seed=seed)
    moves = []
    for i in range(0, len(states), batch):
        chunk = states.take(np.arange(i, min(i + batch, len(states)), dtype=np.int64))
        search = MCTS(game.spec, evaluator, cfg, batch_size=len(chunk))
        moves.append(search.choose_actions(search.run(chunk), temperature=0.0))
    return np.concatenate(moves)


def run_accuracy_bench(checkpoint: str, run_dir: str, *, game_name: str = "go9x9", positions: int = 10_000,
                       search_positions: int | None = None, simulations: int = 200, threads: int = 1, seed: int = 0,
                       precision: str = "auto", log=print) -> dict:
    from azero.agents.checkpoints import checkpoint_planes, game_for, resolve_checkpoint

    path = resolve_checkpoint(checkpoint, game_name)
    if path is None:
        raise ValueError("bench accuracy needs a network: --checkpoint CKPT (or 'shipped')")
    # the game with the network's feature set (the shipped Go network reads 19 planes, the default 10)
    game = game_for(game_name, [checkpoint_planes(path)])
    run = Path(run_dir)
    ref = NetworkEvaluator(network_from_checkpoint(path), device="cpu", threads=threads, backend="torch",
                           precision="f32")
    new = NetworkEvaluator(network_from_checkpoint(path), device="cpu", threads=threads, precision=precision,
                           async_reload=False)
    log(f"azero bench accuracy: {game.spec.name}, network {path}, positions of {run}; "
        f"torch f32 eager vs {'the default' if precision == 'auto' else 'precision ' + precision} ({new.describe})")
    obs, legal = replay_positions(run / "replay", positions, seed)
    if new.precision == "int8":  # quantized on another sample of the run's replay, before measuring
        calibration, _ = replay_positions(run / "replay", 512, seed + 1)
        new.calibrate(calibration)
    kl, dv = policy_value_gap(ref, new, obs, legal)
    log(f"  {len(obs):,} replay positions: mean KL(p_f32 || p_{new.precision}) {kl:.5f} nats (goal < 0.01), "
        f"mean |v_f32 - v_{new.precision}| {dv:.4f} (goal < 0.02)")
    states = sgf_positions(game, run / "sgf", search_positions or positions, seed)
    a = search_moves(game, ref, states, simulations, seed)
    b = search_moves(game, new, states, simulations, seed)
    agree = float((a == b).mean())
    log(f"  {len(states):,} positions of the run's games, {simulations}-simulation PUCT search: the same move in "
        f"{100 * agree:.1f}% (goal >= 97%)")
    return {"positions": len(obs), "kl": kl, "value_diff": dv, "search_positions": len(states),
            "simulations": simulations, "search_agreement": agree}
