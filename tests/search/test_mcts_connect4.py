"""Connect four: the search takes an immediate win and blocks an immediate loss."""

from __future__ import annotations

import numpy as np
import pytest

from azero.search.config import SearchConfig
from azero.search.evaluators import RandomRolloutEvaluator, UniformEvaluator
from azero.search.mcts import MCTS

# (moves played from the start, the one good reply). Columns are 0..6.
WINS = [
    ([0, 0, 1, 1, 2, 2], 3),        # X: bottom row 0-1-2, completes with 3 (O would win there next)
    ([0, 1, 0, 1, 0, 1], 0),        # X: column 0 three high (O threatens column 1 too)
    ([6, 0, 5, 0, 4, 0, 3], None),  # X already won: terminal, not searched
]
BLOCKS = [
    ([0, 6, 1, 6, 2], 3),           # O must block the bottom row at 3
    ([3, 0, 3, 1, 3], 3),           # O must block column 3
    ([6, 3, 5, 3, 6, 3], 3),        # X must block O's column 3
]


def position(game, moves_list):
    width = max(len(m) for m in moves_list)
    paths = np.full((len(moves_list), width), -1, np.int32)
    for i, moves in enumerate(moves_list):
        paths[i, : len(moves)] = moves
    states = game.new_states(len(moves_list))
    states.apply_paths(paths)
    return states


@pytest.mark.parametrize("algorithm,evaluator,sims", [
    ("puct", "uniform", 200),
    ("puct", "rollout", 400),
    # Gumbel's interior rule follows the improved policy, which with c_scale = 1 is nearly greedy in Q:
    # it is only as good as the values it is fed, so it is tested with the neutral uniform evaluator
    # (exact terminal values do the work). Noisy rollout values can lock it onto a wrong reply.
    ("gumbel", "uniform", 200),
])
@pytest.mark.parametrize("seed", [0, 1])
def test_takes_immediate_win_and_blocks_immediate_loss(connect4, algorithm, evaluator, sims, seed):
    cases = [WINS[0], WINS[1]] + BLOCKS
    states = position(connect4, [moves for moves, _ in cases])
    assert not states.terminal().any()
    config = SearchConfig(simulations=sims, algorithm=algorithm, dirichlet_weight=0.0, seed=seed)
    ev = UniformEvaluator() if evaluator == "uniform" else RandomRolloutEvaluator(seed=seed)
    search = MCTS(connect4.spec, ev, config, batch_size=len(cases))
    result = search.run(states)
    expected = np.array([good for _, good in cases])
    np.testing.assert_array_equal(result.action, expected)
    if algorithm == "gumbel":
        # The improved policy (training target) also puts most of its mass on the only good move.
        assert (result.policy[np.arange(len(cases)), expected] > 0.5).all()


def test_winning_move_has_exact_value(connect4):
    states = position(connect4, [WINS[0][0]])
    search = MCTS(connect4.spec, UniformEvaluator(), SearchConfig(simulations=50, dirichlet_weight=0.0),
                  batch_size=1)
    result = search.run(states)
    # The winning child is terminal: every visit backs up exactly +1 for the player who moved there.
    assert result.q[0, 3] == 1.0
    assert result.visits[0, 3] > 25


def test_terminal_root_is_skipped(connect4):
    states = position(connect4, [WINS[2][0], WINS[0][0]])
    assert states.terminal().tolist() == [True, False]
    search = MCTS(connect4.spec, UniformEvaluator(), SearchConfig(simulations=30), batch_size=2)
    result = search.run(states)
    assert result.simulations.tolist() == [0, 30]
    assert result.action[0] == -1 and result.visits[0].sum() == 0
