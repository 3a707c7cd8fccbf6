"""Answering a pass: pass when both counts (as the board stands, and without the stones the ownership
head calls dead) already win; otherwise search on."""

from __future__ import annotations

import numpy as np

from azero.agents.passing import pass_wins
from azero.agents.mcts import MctsPlayer
from azero.games.go import GoGame
from azero.search.config import play_config
from azero.search.evaluators import UniformEvaluator

# 5x5: Black walls off the left three columns, White the right column; a White stone sits inside Black's area.
BOARD = np.array([
    [0, 0, 1, 2, 0],
    [0, 2, 1, 2, 0],
    [0, 0, 1, 2, 0],
    [0, 0, 1, 2, 0],
    [0, 0, 1, 2, 0],
], np.int8)


def test_pass_wins_by_both_counts_only():
    # As it stands Black has 5 stones, White 6 stones + 5 points: Black loses the count, even with komi 0.5.
    assert not pass_wins(BOARD, 0, 0.5, None)
    # White to move wins as it stands and no stone of White's is called dead.
    owner_white = np.where(BOARD.reshape(-1) == 2, 1.0, -1.0)     # White's view: its stones and the right column
    assert pass_wins(BOARD, 1, 0.5, owner_white)
    # The head calls White's B4 dead: removing it gives Black the whole left area (15) against White's 10.
    view = -np.ones(25)
    view[BOARD.reshape(-1) == 2] = 1.0
    view[1 * 5 + 1] = -1.0
    assert not pass_wins(BOARD, 1, 0.5, view)
    # Black with B4 dead: still not won as the board stands, so Black searches on.
    assert not pass_wins(BOARD, 0, 0.5, -view)


def test_pass_wins_without_an_ownership_head_uses_the_board_count():
    board = BOARD.copy()
    board[1, 1] = 0
    assert pass_wins(board, 0, 0.5, None)          # Black 15 vs White 10
    assert not pass_wins(board, 1, 0.5, None)


def test_the_arena_player_answers_a_pass_with_a_winning_pass():
    game = GoGame(5, komi=0.5)
    states = game.new_states(2)
    # Both games: Black builds a wall on column C while White passes (Black then owns every point).
    for v in ("C5", "pass", "C4", "pass", "C3", "pass", "C2", "pass", "C1"):
        states.apply(np.full(2, game.str_to_action(v), np.int32))
    player = MctsPlayer(game.spec, UniformEvaluator(), play_config(8))
    player.start(2)
    # White passes in game 0 and plays E1 in game 1; Black to move.
    last = np.array([game.spec.pass_action, game.str_to_action("E1")], np.int32)
    states.apply(last)
    player.observe(np.arange(2), last)
    actions = player.act(np.arange(2), states)
    assert actions[0] == game.spec.pass_action     # passing ends the game, won by the count
    assert player.passes_that_win == 1             # game 1: White did not pass, so Black searched
