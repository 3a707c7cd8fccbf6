"""Networks of both Go feature sets play in one match: the game takes the richest set, and a
network that reads fewer planes gets the leading ones; GTP builds its board for the network's set."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from azero.agents.checkpoints import FirstPlanes, checkpoint_planes, game_for

from azero.agents.factory import PlayerFactory
from azero.games.go import GoGame, features_for
from azero.train.network import NetworkConfig, PolicyValueNet
from azero.train.trainer import TrainConfig, Trainer


def _checkpoint(tmp_path, features, name):
    torch.manual_seed(0)
    net = PolicyValueNet(GoGame(9, features=features).spec, NetworkConfig.tiny())
    return Trainer(net, TrainConfig()).save(tmp_path / name)


def test_a_match_of_basic_and_extended_networks_feeds_each_its_planes(tmp_path):
    basic = _checkpoint(tmp_path, "basic", "b")
    extended = _checkpoint(tmp_path, "extended", "e")
    assert (checkpoint_planes(basic), checkpoint_planes(extended)) == (10, 19)
    game = game_for("go9x9", [10, 19])
    assert game.spec.obs_shape == (19, 9, 9)
    factory = PlayerFactory(game)
    small, big = factory.evaluator(str(basic)), factory.evaluator(str(extended))
    assert isinstance(small, FirstPlanes) and not isinstance(big, FirstPlanes)
    states = game.new_states(3)
    obs, legal = states.encode(), states.legal_mask()
    ref = factory.evaluator(str(basic)).inner
    np.testing.assert_allclose(small.evaluate(obs, legal)[0], ref.evaluate(obs[:, :10].copy(), legal)[0])
    # A basic game cannot feed an extended network: the error names both shapes.
    with pytest.raises(ValueError, match=r"\(19, 9, 9\).*\(10, 9, 9\)"):
        PlayerFactory(game_for("go9x9")).evaluator(str(extended))


def test_gtp_plays_an_extended_network_on_its_own_feature_set(tmp_path):
    from azero.agents.checkpoints import load_evaluator
    from azero.gtp.engine import GtpEngine

    path = _checkpoint(tmp_path, "extended", "e")
    engine = GtpEngine(load_evaluator(str(path)), simulations=4)
    assert engine.board.game.spec.obs_shape == (19, 9, 9)
    assert engine.handle("genmove b").startswith("=")
    with pytest.raises(ValueError, match="no Go feature set has 7"):
        features_for((7, 9, 9))
