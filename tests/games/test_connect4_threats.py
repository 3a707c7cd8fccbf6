"""Connect four's "threats" feature set: the basic planes, then the empty cells where each side's disc
would complete four; chosen by the spec, the same through encode() and the search's leaf API, and a
network of either set plays beside the other (the game takes the richest set)."""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest
import torch

from azero.games import make_game
from azero.games.config import GameConfig, game_from_config
from azero.games.connect4 import FEATURES, Connect4Game, Connect4States

from statecheck import random_positions

LINES = ((0, 1), (1, 0), (1, 1), (1, -1))


def completes_four(board: np.ndarray, r: int, c: int) -> bool:
    """Whether a disc at (r, c) would make four in a row with the discs of `board` (bool [6, 7]):
    a plain scan of the four lines through the cell, independent of the bitboard shifts."""
    for dr, dc in LINES:
        run = 1
        for sign in (1, -1):
            rr, cc = r + sign * dr, c + sign * dc
            while 0 <= rr < 6 and 0 <= cc < 7 and board[rr, cc]:
                run += 1
                rr, cc = rr + sign * dr, cc + sign * dc
        if run >= 4:
            return True
    return False


def expected_threats(own: np.ndarray, opp: np.ndarray) -> np.ndarray:
    out = np.zeros((2, 6, 7), np.float32)
    for r in range(6):
        for c in range(7):
            if not (own[r, c] or opp[r, c]):
                out[0, r, c] = completes_four(own, r, c)
                out[1, r, c] = completes_four(opp, r, c)
    return out


def test_threat_planes_are_the_cells_that_complete_four():
    game = Connect4Game("threats")
    assert game.spec.obs_shape == (5, 6, 7) and FEATURES == {"basic": 3, "threats": 5}
    seen = 0
    for moves in (6, 12, 20, 30):
        states = random_positions(game, 48, seed=moves, max_plies=moves)
        obs = states.encode()
        basic = random_positions(Connect4Game(), 48, seed=moves, max_plies=moves).encode()
        np.testing.assert_array_equal(obs[:, :3], basic)    # the basic planes lead, unchanged
        for b in range(len(states)):
            np.testing.assert_array_equal(obs[b, 3:], expected_threats(obs[b, 0] > 0, obs[b, 1] > 0))
        seen += int(obs[:, 3:].sum())
    assert seen > 100       # the positions hold threats of both kinds to check


def test_a_known_position():
    # X on columns 1, 2, 3 of the bottom row, O on 1 and 2 above them: X's one winning cell is
    # column 4's bottom cell; O's two in a row make none.
    states = Connect4Game("threats").new_states(1)
    for col in (0, 0, 1, 1, 2):
        states.apply(np.array([col], np.int32))
    obs = states.encode()[0]          # O to move: plane 3 is O's threats, plane 4 X's
    assert obs[3].sum() == 0
    assert obs[4].sum() == 1 and obs[4, 5, 3] == 1       # row 5 = the bottom row, column 4
    assert obs[2].sum() == 0          # player 1 (O) to move


def test_the_search_sees_the_same_planes_as_encode():
    """The MCTS driver encodes leaves through the leaf API: a threats game hands it 5 planes."""
    from azero.search.config import SearchConfig
    from azero.search.mcts import MCTS

    seen = []

    class Recorder:
        def evaluate(self, obs, legal):
            seen.append(obs.copy())
            n = obs.shape[0]
            return np.full((n, 7), 1 / 7, np.float32), np.zeros(n, np.float32)

    game = Connect4Game("threats")
    states = random_positions(game, 4, seed=3, max_plies=14)
    MCTS(game.spec, Recorder(), SearchConfig(simulations=32), batch_size=4).run(states)
    obs = np.concatenate(seen)
    assert obs.shape[1:] == (5, 6, 7) and len(obs) > 4
    for o in obs:
        np.testing.assert_array_equal(o[3:], expected_threats(o[0] > 0, o[1] > 0))


def test_feature_sets_by_name_and_bad_input():
    assert make_game("connect4").spec.obs_shape == (3, 6, 7)
    assert make_game("connect4", features="threats").spec.obs_shape == (5, 6, 7)
    assert game_from_config(GameConfig(name="connect4", features="threats")).features == "threats"
    with pytest.raises(ValueError, match="'basic', 'threats'.*'ladders'"):
        Connect4Game("ladders")
    game = Connect4Game("threats")
    assert pickle.loads(pickle.dumps(game)).spec == game.spec
    assert Connect4Game().with_planes(5).features == "threats" and game.with_planes(3).features == "basic"
    with pytest.raises(ValueError, match="no connect-four feature set has 4"):
        game.with_planes(4)
    assert game.planes_prefix_ok(3) and game.planes_prefix_ok(5) and not Connect4Game().planes_prefix_ok(5)
    from azero.agents.checkpoints import game_for

    # A Go network's 10 planes match no connect-four set: the game stays basic and the network's
    # shape check names the mismatch (azero play: "does not play connect4").
    assert game_for("connect4", [10]).spec.obs_shape == (3, 6, 7)
    wrong = dataclasses.replace(Connect4Game().spec, obs_shape=(4, 6, 7))
    with pytest.raises(ValueError, match="3 or 5 planes, the spec asks for 4"):
        Connect4States(2, wrong)


def test_networks_of_both_sets_are_scored_side_by_side(tmp_path):
    """c4-accuracy with a threats network and a basic one as --agent: the game takes the threats set
    and the basic network reads the leading planes."""
    from azero.agents.checkpoints import FirstPlanes, game_for
    from azero.agents.factory import PlayerFactory
    from azero.cli import main
    from azero.train.network import NetworkConfig, PolicyValueNet
    from azero.train.trainer import TrainConfig, Trainer

    paths = {}
    for features in ("basic", "threats"):
        torch.manual_seed(0)
        net = PolicyValueNet(Connect4Game(features).spec, NetworkConfig.tiny())
        paths[features] = Trainer(net, TrainConfig()).save(tmp_path / features)
    game = game_for("connect4", [3, 5])
    assert game.spec.obs_shape == (5, 6, 7)
    assert isinstance(PlayerFactory(game).evaluator(str(paths["basic"])), FirstPlanes)
    with pytest.raises(ValueError, match=r"\(5, 6, 7\).*\(3, 6, 7\)"):
        PlayerFactory(Connect4Game()).evaluator(str(paths["threats"]))
    out = tmp_path / "acc.json"
    assert main(["c4-accuracy", "--checkpoint", str(paths["threats"]), "--positions", "6", "--depths", "20",
                 "--sims", "4", "--cache-dir", str(tmp_path / "cache"), "--out", str(out),
                 "--agent", f"mcts:{paths['basic']}@4"]) == 0
    records = json.loads(out.read_text())["agents"]
    assert [r["overall"]["n"] for r in records] == [6, 6, 6, 6]
    # Without --agent the checkpoint alone picks the feature set.
    assert main(["c4-accuracy", "--checkpoint", str(paths["threats"]), "--positions", "6", "--depths", "20",
                 "--sims", "4", "--cache-dir", str(tmp_path / "cache"), "--out", str(out)]) == 0
