"""experiments/c4_conversion.py: games played out to the end, outcomes read from the side to move in the position."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from azero.eval.c4accuracy import test_states as c4_states
from azero.games.connect4 import Connect4Game
from azero.search.config import SearchConfig
from azero.search.evaluators import UniformEvaluator
from azero.search.mcts import MCTS
from evalutil import load_experiment


@pytest.fixture(scope="module")
def conv():
    return load_experiment("c4_conversion")


@pytest.mark.parametrize("rule", ["noised", "greedy"])
def test_play_out_ends_every_game(conv, rule):
    game = Connect4Game()
    states = c4_states(["", "44", "4453"])
    search = MCTS(game.spec, UniformEvaluator(), SearchConfig(simulations=16, algorithm="gumbel", seed=3), batch_size=3)
    conv.play_out(search, states, rule)
    assert states.terminal().all()


@pytest.mark.parametrize("rule", ["noised", "greedy"])
def test_immediate_wins_count_as_kept_for_either_mover(conv, rule):
    # "112233": the first player to move, three in a row on the bottom: column 4 wins at once.
    # "2121213": the second player to move, three stacked in column 1: column 1 wins at once.
    moves = ["112233", "2121213"]
    states = c4_states(moves)
    assert list(states.to_play()) == [0, 1]
    ts = SimpleNamespace(moves=tuple(moves), value=np.array([1, 1], np.int8))
    row = conv.conversion(UniformEvaluator(), ts, 64, rule, seed=1)
    assert row == {"agree": 1.0, "won kept": 1.0, "drawn kept": None, "positions": 2}


def test_a_lost_outcome_is_not_counted_as_kept(conv):
    # The solved value says drawn; the game the search plays from an immediate win ends won, so it disagrees.
    ts = SimpleNamespace(moves=("112233",), value=np.array([0], np.int8))
    row = conv.conversion(UniformEvaluator(), ts, 64, "greedy", seed=1)
    assert row["agree"] == 0.0 and row["drawn kept"] == 0.0 and row["won kept"] is None
