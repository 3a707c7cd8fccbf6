"""Players search to win: play_config has no root noise and a deterministic Gumbel root, so Gumbel
with one simulation plays the network's own best move instead of sampling from its policy."""

from __future__ import annotations

import numpy as np

from azero.agents.spec import parse_player_spec
from azero.games.connect4 import Connect4Game
from azero.search.config import play_config
from azero.search.mcts import MCTS


class PeakedEvaluator:
    """Priors peaked on column 5 (not the lowest index), value 0."""

    def evaluate(self, obs, legal):
        priors = np.where(legal, 1.0, 0.0).astype(np.float32)
        priors[:, 5] *= 4.0
        return priors, np.zeros(len(legal), np.float32)


def test_play_config_is_deterministic_and_noise_free():
    cfg = play_config(8, algorithm="gumbel", seed=3)
    assert cfg.gumbel_scale == 0 and cfg.dirichlet_weight == 0 and cfg.temperature == 0 and not cfg.tree_reuse
    assert play_config(8, algorithm="gumbel", gumbel_scale=1.0).gumbel_scale == 1.0
    spec = parse_player_spec("mcts:shipped@1:gumbel")
    assert spec.search_config().gumbel_scale == 0
    assert parse_player_spec("mcts:shipped@4:gumbel:gumbel_scale=1").search_config().gumbel_scale == 1.0


def test_gumbel_with_one_simulation_plays_the_prior_argmax_every_time():
    game = Connect4Game()
    states = game.new_states(64)
    picks = set()
    for seed in range(5):
        search = MCTS(game.spec, PeakedEvaluator(), play_config(1, algorithm="gumbel", seed=seed), batch_size=64)
        picks |= set(search.run(states).action.tolist())
    assert picks == {5}
