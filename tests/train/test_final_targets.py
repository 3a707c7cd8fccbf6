"""Ownership and score: replay format 2 (and format-1 shards still loading), the heads, their masked
losses, and checkpoints of nets without the heads."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from azero.games.go import GoGame
from azero.runs.records import final_targets, stack_records
from azero.selfplay.worker import GameRecord
from azero.train.checkpoint import network_from_checkpoint
from azero.train.network import NetworkConfig, PolicyValueNet
from azero.train.replay import ReplayBuffer, ReplayConfig
from azero.train.trainer import TrainConfig, Trainer

CFG = ReplayConfig(min_window=1000, max_window=1000, min_positions=1, max_samples_per_position=None)
HEADS = NetworkConfig(blocks=1, channels=8, global_pool_every=0, value_hidden=8, ownership_head=True,
                      score_head=True)


def _final(rng, n, points):
    return {"ownership": rng.integers(-1, 2, size=(n, points)).astype(np.int8),
            "score": rng.normal(0, 10, n).astype(np.float32), "has_final": rng.random(n) < 0.5}


def test_final_targets_round_trip_and_format_1_shards_load_masked(tmp_path, spec, positions, rng):
    buf = ReplayBuffer(tmp_path, spec, cfg=CFG)
    d = positions(rng, 6)
    fin = _final(rng, 6, 25)
    buf.add(**d, game_id=0, move=np.arange(6), **fin)
    # A format-1 shard, as written before the final targets existed: no ownership arrays, meta version 1.
    old = positions(rng, 4)
    path = tmp_path / "shard_00000001_000000000006_000004.npz"
    np.savez(path, **old, game_id=np.ones(4, np.int64), move=np.arange(4, dtype=np.int32),
             meta=np.array([1, 1, 6, 4], np.int64))
    again = ReplayBuffer(tmp_path, spec, cfg=CFG)
    data = again.window_data()
    assert len(data["z"]) == 10
    shards = again._shards
    np.testing.assert_array_equal(shards[0].data["ownership"], fin["ownership"])
    np.testing.assert_array_equal(shards[0].data["has_final"], fin["has_final"])
    assert not shards[1].data["has_final"].any() and not shards[1].data["ownership"].any()
    batch = again.sample(64, np.random.default_rng(0), augment=False)
    assert batch["ownership"].shape == (64, 25) and batch["has_final"].dtype == np.bool_


def test_augmentation_moves_ownership_with_the_board(tmp_path, spec, positions, rng):
    buf = ReplayBuffer(tmp_path, spec, cfg=CFG)
    d = positions(rng, 8)
    # ownership = plane 0 of the observation (+1 at pi's best point): both must move together
    own = d["obs"][:, 0].reshape(8, 25).astype(np.int8)
    buf.add(**d, game_id=0, move=np.arange(8), ownership=own, score=np.zeros(8, np.float32),
            has_final=np.ones(8, bool))
    batch = buf.sample(200, np.random.default_rng(1))
    assert len(np.unique(batch["symmetry"])) > 4
    np.testing.assert_array_equal(batch["ownership"], batch["obs"][:, 0].reshape(200, 25))


def test_add_rejects_partial_or_bad_final_targets(tmp_path, spec, positions, rng):
    buf = ReplayBuffer(tmp_path, spec, cfg=CFG)
    d = positions(rng, 3)
    with pytest.raises(ValueError, match="all or none"):
        buf.add(**d, game_id=0, move=np.arange(3), ownership=np.zeros((3, 25), np.int8))
    with pytest.raises(ValueError, match="ownership"):
        buf.add(**d, game_id=0, move=np.arange(3), ownership=np.full((3, 25), 2, np.int8),
                score=np.zeros(3), has_final=np.ones(3, bool))


def _record(to_play, outcome, score, ownership, resigned=False):
    t = len(to_play)
    return GameRecord(obs=np.zeros((t, 10, 3, 3), np.float32), policy=np.full((t, 10), 0.1, np.float32),
                      legal=np.ones((t, 10), bool), to_play=np.asarray(to_play, np.int8),
                      move_number=np.arange(t, dtype=np.int32), actions=[], outcome=outcome, resigned=resigned,
                      no_resign=False, false_resign=None, score=score, final_ownership=ownership,
                      ownership_known=True)


def test_records_give_targets_from_the_player_to_moves_view():
    own = np.array([1, 1, 0, -1, 1, 1, 0, -1, -1], np.int8)   # Black's view; sum 1
    played = _record([0, 1, 0], 1.0, 1.0 - 0.5, own)
    resigned = _record([1, 0], -1.0, None, None, resigned=True)
    arrays = stack_records([played, resigned], 0)
    np.testing.assert_array_equal(arrays["ownership"][0], own)
    np.testing.assert_array_equal(arrays["ownership"][1], -own)   # White to move sees it negated
    np.testing.assert_allclose(arrays["score"], [0.5, -0.5, 0.5, 0, 0])
    np.testing.assert_array_equal(arrays["has_final"], [True, True, True, False, False])
    assert final_targets([resigned])["ownership"].shape == (2, 9)


def test_worker_records_carry_the_final_area_of_played_out_games():
    from azero.search.config import SearchConfig
    from azero.search.evaluators import UniformEvaluator
    from azero.selfplay.config import SelfPlayConfig
    from azero.selfplay.worker import SelfPlayWorker

    game = GoGame(5, komi=0.5, max_moves=30)
    cfg = SelfPlayConfig(games_in_parallel=4, resign_threshold=None, full_search_prob=1.0, temperature_moves=30,
                         no_pass_moves=0)
    worker = SelfPlayWorker(game, UniformEvaluator(), SearchConfig(simulations=4), cfg, seed=3)
    records = worker.play(40)
    assert records
    for r in records:
        assert r.final_ownership is not None and r.final_ownership.shape == (25,)
        assert r.score == pytest.approx(float(r.final_ownership.sum()) - 0.5)


def test_connect_four_records_carry_the_final_board_and_train_the_ownership_head():
    from azero.games.connect4 import Connect4Game
    from azero.search.config import SearchConfig
    from azero.search.evaluators import UniformEvaluator
    from azero.selfplay.config import SelfPlayConfig
    from azero.selfplay.worker import SelfPlayWorker

    game = Connect4Game()
    cfg = SelfPlayConfig(games_in_parallel=4, resign_threshold=None, full_search_prob=1.0, temperature_moves=42)
    records = SelfPlayWorker(game, UniformEvaluator(), SearchConfig(simulations=4), cfg, seed=5).play(45)
    assert records
    for r in records:
        replay = game.new_states(1)
        for a in r.actions:
            replay.apply(np.array([a], np.int32))
        np.testing.assert_array_equal(r.final_ownership, replay.ownership()[0])
        assert (r.final_ownership == 1).sum() == (len(r.actions) + 1) // 2   # X moves first
        assert (r.final_ownership == -1).sum() == len(r.actions) // 2
    arrays = stack_records(records, 0)
    assert arrays["has_final"].all() and not arrays["score"].any()
    # each position sees the final board from its player to move's view
    np.testing.assert_array_equal(arrays["ownership"][1], -records[0].final_ownership)
    net = PolicyValueNet(game.spec, NetworkConfig(blocks=1, channels=8, global_pool_every=0, value_hidden=8,
                                                  ownership_head=True))
    n = 16
    batch = {"obs": arrays["obs"][:n], "pi": arrays["pi"][:n], "z": arrays["z"][:n], "legal": arrays["legal"][:n],
             "ownership": arrays["ownership"][:n], "score": arrays["score"][:n], "has_final": arrays["has_final"][:n]}
    m = Trainer(net, TrainConfig(batch_size=n, warmup_steps=0)).train_step(batch)
    assert m["ownership_loss"] > 0 and "score_loss" not in m


def test_heads_and_their_losses_are_masked_without_final_positions(spec, positions, rng):
    torch.manual_seed(0)
    net = PolicyValueNet(spec, HEADS)
    out = net(torch.zeros(2, *spec.obs_shape))
    assert len(out) == 3 and out[2].shape == (2,)
    heads = net.heads(torch.zeros(2, *spec.obs_shape))
    assert heads["ownership"].shape == (2, 25)
    d = positions(rng, 16)
    fin = _final(rng, 16, 25)
    trainer = Trainer(net, TrainConfig(batch_size=16, warmup_steps=0))
    m = trainer.train_step({**d, **fin})
    assert m["ownership_loss"] > 0 and m["score_loss"] > 0
    masked = trainer.train_step({**d, **dict(fin, has_final=np.zeros(16, bool))})
    assert masked["ownership_loss"] == 0 and masked["score_loss"] == 0
    assert masked["loss"] == pytest.approx(masked["policy_loss"] + masked["value_loss"], rel=1e-5)


def test_ownership_loss_learns_a_fixed_target(spec, positions, rng):
    torch.manual_seed(1)
    net = PolicyValueNet(spec, HEADS)
    d = positions(rng, 32)
    fin = {"ownership": np.ones((32, 25), np.int8), "score": np.full(32, 12.0, np.float32),
           "has_final": np.ones(32, bool)}
    trainer = Trainer(net, TrainConfig(batch_size=32, warmup_steps=0, lr=0.05))
    first = trainer.train_step({**d, **fin})
    for _ in range(60):
        last = trainer.train_step({**d, **fin})
    assert last["ownership_loss"] < 0.5 * first["ownership_loss"]
    assert last["score_loss"] < 0.5 * first["score_loss"]
    net.eval()
    with torch.no_grad():
        assert torch.tanh(net.heads(torch.from_numpy(d["obs"]))["ownership"]).mean() > 0.5


def test_checkpoints_without_the_heads_still_load_and_play(tmp_path, spec):
    plain = PolicyValueNet(spec, NetworkConfig.tiny())
    path = Trainer(plain, TrainConfig()).save(tmp_path)
    loaded = network_from_checkpoint(path)
    assert not loaded.has_score and not loaded.has_ownership
    assert len(loaded(torch.zeros(1, *spec.obs_shape))) == 2


def test_policy_weights_round_trip_and_scale_the_policy_loss(tmp_path, spec, positions, rng):
    buf = ReplayBuffer(tmp_path, spec, cfg=CFG)
    d = positions(rng, 4)
    buf.add(**d, game_id=0, move=np.arange(4), policy_weight=np.array([1, 0.25, 0.25, 1], np.float32))
    buf.add(**positions(rng, 2), game_id=1, move=np.arange(2))
    again = ReplayBuffer(tmp_path, spec, cfg=CFG)
    np.testing.assert_array_equal(again._shards[0].data["policy_weight"], [1, 0.25, 0.25, 1])
    np.testing.assert_array_equal(again._shards[1].data["policy_weight"], [1, 1])
    with pytest.raises(ValueError, match="policy_weight"):
        buf.add(**d, game_id=2, move=np.arange(4), policy_weight=-np.ones(4))
    torch.manual_seed(0)
    trainer = Trainer(PolicyValueNet(spec, NetworkConfig.tiny()), TrainConfig(batch_size=4, lr=1e-9))
    full = trainer.train_step(dict(d))
    half = trainer.train_step(dict(d, policy_weight=np.full(4, 0.5, np.float32)))
    assert half["policy_loss"] == pytest.approx(0.5 * full["policy_loss"], rel=1e-3)


def test_cheap_gumbel_searches_are_recorded_at_their_weight():
    from azero.search.config import SearchConfig
    from azero.search.evaluators import UniformEvaluator
    from azero.selfplay.config import SelfPlayConfig
    from azero.selfplay.worker import SelfPlayWorker

    game = GoGame(5, komi=0.5, max_moves=30)
    cfg = SelfPlayConfig(games_in_parallel=4, resign_threshold=None, full_search_prob=0.3, cheap_simulations=4,
                         cheap_target_weight=0.3, cheap_algorithm="gumbel", temperature_moves=0)
    worker = SelfPlayWorker(game, UniformEvaluator(), SearchConfig(simulations=8), cfg, seed=2)
    assert worker.cheap.config.algorithm == "gumbel"
    records = worker.play(40)
    weights = np.concatenate([r.policy_weight for r in records if r.policy_weight is not None])
    np.testing.assert_allclose(np.unique(weights), [0.3, 1.0])
    arrays = stack_records(records, 0)
    assert arrays["policy_weight"].shape == arrays["z"].shape


def test_surprise_weighting_samples_surprising_positions_more_often(tmp_path, spec, positions, rng):
    cfg = ReplayConfig(min_window=1000, max_window=1000, min_positions=1, max_samples_per_position=None,
                       surprise_weight=0.5, augment=False)
    buf = ReplayBuffer(tmp_path, spec, cfg=cfg)
    surprise = np.zeros(10, np.float32)
    surprise[3] = 9.0                                       # mean 0.9: weight 0.5 + 0.5 * 10 = 5.5 vs 0.5
    buf.add(**positions(rng, 10), game_id=0, move=np.arange(10), surprise=surprise)
    rows = buf.sample(20000, np.random.default_rng(0))["move"]
    share = np.mean(rows == 3)
    assert share == pytest.approx(5.5 / 10.0, abs=0.02)
    uniform = ReplayBuffer(tmp_path, spec, cfg=dataclasses.replace(cfg, surprise_weight=0.0))
    assert np.mean(uniform.sample(20000, np.random.default_rng(0))["move"] == 3) == pytest.approx(0.1, abs=0.01)


def test_policy_surprise_is_the_kl_of_target_from_prior():
    from azero.selfplay.worker import policy_surprise

    target = np.array([[1.0, 0.0], [0.5, 0.5]], np.float32)
    prior = np.array([[0.5, 0.5], [0.5, 0.5]], np.float32)
    np.testing.assert_allclose(policy_surprise(target, prior), [np.log(2), 0.0], atol=1e-6)
