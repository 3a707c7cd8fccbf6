"""The opponent policy head (KataGo's auxiliary policy target): the reply's targets the replay
derives from each row's successor, their augmentation, the masked loss, checkpoints and warm starts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from azero.train.checkpoint import network_from_checkpoint
from azero.train.network import NetworkConfig, PolicyValueNet
from azero.train.replay import ReplayBuffer, ReplayConfig
from azero.train.trainer import TrainConfig, Trainer
from azero.train.warm_start import warm_start

CFG = ReplayConfig(min_window=1000, max_window=1000, min_positions=1, max_samples_per_position=None)
HEAD = NetworkConfig(blocks=1, channels=8, global_pool_every=0, value_hidden=8, opponent_policy_head=True)


def _buffer(tmp_path, spec, positions, rng, *, augment: bool):
    """Two shards: games 0 (moves 3-6) and 1 (moves 0-2, with move 1's search not recorded, as PCR
    or the random opening moves leave them) in the first, game 2 (moves 0-1) in the second."""
    buf = ReplayBuffer(tmp_path, spec, cfg=ReplayConfig(**{**CFG.__dict__, "augment": augment}))
    first = positions(rng, 6)
    buf.add(**first, game_id=np.array([0, 0, 0, 0, 1, 1]), move=np.array([3, 4, 5, 6, 0, 2]),
            policy_weight=np.array([1, 1, 0.25, 1, 1, 1], np.float32))
    second = positions(rng, 2)
    buf.add(**second, game_id=np.array([2, 2]), move=np.array([0, 1]))
    pi = np.concatenate([first["pi"], second["pi"]])
    legal = np.concatenate([first["legal"], second["legal"]])
    return buf, pi, legal


def test_the_reply_is_the_same_games_next_recorded_move(tmp_path, spec, positions, rng):
    buf, pi, legal = _buffer(tmp_path, spec, positions, rng, augment=False)
    batch = buf.sample(400, np.random.default_rng(0))
    # position -> the position whose target is its reply, and that reply's policy weight
    successor = {0: (1, 1.0), 1: (2, 0.25), 2: (3, 1.0), 6: (7, 1.0)}
    seen = set()
    for i, p in enumerate(batch["position"]):
        seen.add(int(p))
        if int(p) in successor:
            nxt, w = successor[int(p)]
            np.testing.assert_array_equal(batch["pi_next"][i], pi[nxt])
            np.testing.assert_array_equal(batch["legal_next"][i], legal[nxt])
            assert batch["next_weight"][i] == w
        else:  # a game's last move, a move whose reply was not recorded, the end of a shard
            assert batch["next_weight"][i] == 0 and not batch["pi_next"][i].any() and batch["legal_next"][i].all()
    assert seen == set(range(8))


def test_augmentation_moves_the_reply_with_the_board(tmp_path, spec, positions, rng):
    buf, pi, legal = _buffer(tmp_path, spec, positions, rng, augment=True)
    batch = buf.sample(400, np.random.default_rng(1))
    assert len(np.unique(batch["symmetry"])) == 8
    checked = 0
    for i, (p, t) in enumerate(zip(batch["position"], batch["symmetry"])):
        if batch["next_weight"][i] > 0:
            tr = buf.transforms[int(t)]
            np.testing.assert_array_equal(batch["pi_next"][i], tr.apply_policy(pi[p + 1][None])[0])
            np.testing.assert_array_equal(batch["legal_next"][i], tr.apply_policy(legal[p + 1][None])[0])
            checked += 1
    assert checked > 100


def test_the_loss_is_weighted_masked_and_learns_the_reply(spec, positions, rng):
    torch.manual_seed(0)
    net = PolicyValueNet(spec, HEAD)
    d = positions(rng, 16)
    reply = positions(rng, 16)
    batch = {**d, "pi_next": reply["pi"], "legal_next": reply["legal"], "next_weight": np.ones(16, np.float32)}
    trainer = Trainer(net, TrainConfig(batch_size=16, warmup_steps=0, lr=0.05))
    first = trainer.train_step(batch)
    assert first["opponent_policy_loss"] > 0
    masked = trainer.train_step({**batch, "next_weight": np.zeros(16, np.float32)})
    assert masked["opponent_policy_loss"] == 0
    assert masked["loss"] == pytest.approx(masked["policy_loss"] + masked["value_loss"], rel=1e-5)
    # half the rows at weight 0.5: the mean over the rows that have a reply, each at its weight
    half = trainer.train_step({**batch, "next_weight": np.r_[np.full(8, 0.5), np.zeros(8)].astype(np.float32)})
    assert 0 < half["opponent_policy_loss"] < first["opponent_policy_loss"]
    for _ in range(60):
        last = trainer.train_step(batch)
    p = reply["pi"]
    entropy = float(-(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=1).mean())  # the least cross-entropy
    assert last["opponent_policy_loss"] - entropy < 0.5 * (first["opponent_policy_loss"] - entropy)
    # the search's inputs are unchanged by the head: forward() still returns (logits, value)
    assert len(net(torch.from_numpy(d["obs"]))) == 2


def test_a_net_without_the_head_ignores_the_reply_and_checkpoints_keep_it(tmp_path, spec, positions, rng):
    d = positions(rng, 8)
    batch = {**d, "pi_next": d["pi"], "legal_next": d["legal"], "next_weight": np.ones(8, np.float32)}
    plain = Trainer(PolicyValueNet(spec, NetworkConfig.tiny()), TrainConfig(batch_size=8))
    assert "opponent_policy_loss" not in plain.train_step(batch)
    plain_path = plain.save(tmp_path / "plain")
    torch.manual_seed(2)
    with_head = Trainer(PolicyValueNet(spec, HEAD), TrainConfig(batch_size=8))
    path = with_head.save(tmp_path / "head")
    loaded = network_from_checkpoint(path)
    assert loaded.cfg.opponent_policy_head
    x = torch.from_numpy(d["obs"])
    with_head.net.eval()
    loaded.eval()
    with torch.no_grad():
        torch.testing.assert_close(loaded.heads(x)["opponent"], with_head.net.heads(x)["opponent"])
    # warm start from a net without the head: the head starts fresh, everything else is copied
    tiny_head = PolicyValueNet(spec, NetworkConfig(**{**NetworkConfig.tiny().__dict__, "opponent_policy_head": True}))
    report = warm_start(tiny_head, plain_path)
    assert sorted(report["fresh"]) == ["opponent_bn", "opponent_conv", "opponent_fc"]
    assert report["copied"] == len(network_from_checkpoint(plain_path).state_dict())
