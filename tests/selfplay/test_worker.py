import numpy as np
import pytest

from azero.games import make_game
from azero.search.config import SearchConfig
from azero.search.evaluators import UniformEvaluator
from azero.selfplay.config import SelfPlayConfig
from azero.selfplay.worker import SelfPlayWorker, lambda_returns


class PlayerZeroLoses(UniformEvaluator):
    """Uniform priors; every position is judged lost for player 0 (value from the mover's view)."""

    needs_observations = True

    def evaluate(self, obs, legal):
        priors, _ = super().evaluate(obs, legal)
        player0_to_move = obs[:, 2].mean(axis=(1, 2)) > 0.5  # plane 2: ones when player 0 moves
        return priors, np.where(player0_to_move, -0.9, 0.9).astype(np.float32)


def play_games(worker, n):
    records = []
    while len(records) < n:
        records += worker.play(1)
    return records


def test_records_are_consistent_game_by_game():
    game = make_game("tictactoe")
    cfg = SelfPlayConfig(games_in_parallel=8, full_search_prob=1.0, resign_threshold=None)
    worker = SelfPlayWorker(game, UniformEvaluator(), SearchConfig(simulations=24), cfg, seed=0)
    records = play_games(worker, 20)
    for r in records:
        T = len(r.to_play)
        assert T == len(r.actions)  # every move recorded without playout cap randomization
        assert r.obs.shape == (T, *game.spec.obs_shape) and r.policy.shape == (T, 9)
        np.testing.assert_allclose(r.policy.sum(axis=1), 1.0, rtol=1e-5)
        assert np.all(r.policy[~r.legal] == 0)
        assert np.array_equal(r.to_play, np.arange(T) % 2)
        assert np.array_equal(r.move_number, np.arange(T))
        # Replaying the moves reproduces the outcome and each recorded legal mask.
        s = game.new_states(1)
        for t, a in enumerate(r.actions):
            assert s.legal_mask()[0].tolist() == r.legal[t].tolist()
            s.apply(np.array([a], np.int32))
        assert s.terminal()[0] and s.outcome()[0] == r.outcome
        z = r.value_targets
        assert np.all(z == np.where(r.to_play == 0, r.outcome, -r.outcome))


def test_playout_cap_randomization_records_only_full_searches():
    game = make_game("connect4")
    cfg = SelfPlayConfig(games_in_parallel=4, full_search_prob=0.25, cheap_simulations=4, resign_threshold=None)
    worker = SelfPlayWorker(game, UniformEvaluator(), SearchConfig(simulations=16), cfg, seed=1)
    records = play_games(worker, 12)
    recorded = sum(len(r.to_play) for r in records)
    played = sum(len(r.actions) for r in records)
    assert 0.1 < recorded / played < 0.45, (recorded, played)
    for r in records:
        assert np.all(np.diff(r.move_number) > 0) and np.all(r.move_number < len(r.actions))


def test_same_seed_same_games():
    game = make_game("tictactoe")
    cfg = SelfPlayConfig(games_in_parallel=4, resign_threshold=None, full_search_prob=0.5, cheap_simulations=4)
    a = play_games(SelfPlayWorker(game, UniformEvaluator(), SearchConfig(simulations=16), cfg, seed=7), 8)
    b = play_games(SelfPlayWorker(game, UniformEvaluator(), SearchConfig(simulations=16), cfg, seed=7), 8)
    assert [r.actions for r in a] == [r.actions for r in b]


def test_resignation_and_false_resign_accounting():
    game = make_game("connect4")
    cfg = SelfPlayConfig(games_in_parallel=16, full_search_prob=1.0, resign_threshold=-0.5, resign_min_moves=4,
                         resign_consecutive=2, no_resign_fraction=0.5)
    worker = SelfPlayWorker(game, PlayerZeroLoses(), SearchConfig(simulations=8), cfg, seed=2)
    records = play_games(worker, 40)
    resigned = [r for r in records if r.resigned]
    kept = [r for r in records if r.no_resign]
    assert resigned and kept
    for r in resigned:
        # Player 0 is below the threshold on its moves 4 and 6 (two in a row) and resigns at move 6.
        assert not r.no_resign and len(r.actions) == 6 and r.outcome == -1.0
    flagged = [r for r in kept if r.false_resign is not None]
    assert len(flagged) >= len(kept) // 2  # unless a search saw a forced win first, player 0 would resign
    for r in flagged:
        # A false resignation exactly when the would-be resigner did not lose.
        assert r.false_resign == (r.outcome >= 0)
    # Each no-resign game's bleakest values (selfplay/resign.py) say the same at this threshold.
    assert all(r.bleakest is None for r in records if not r.no_resign)
    for r in kept:
        assert [lost for _, lost in r.bleakest] == [r.outcome < 0, r.outcome > 0]
        would = [lost for b, lost in r.bleakest if b < -0.5]
        assert r.false_resign == (any(not lost for lost in would) if would else None)
    assert sum(r.bleakest[0][0] < -0.5 for r in kept) >= len(kept) // 2  # player 0 is the would-be resigner
    # With resignation disabled (an untrained net) no game ends early.
    worker = SelfPlayWorker(game, PlayerZeroLoses(), SearchConfig(simulations=8), cfg, seed=2)
    worker.resign_below = None
    assert not any(r.resigned for r in play_games(worker, 10))


def test_bad_config_is_rejected():
    with pytest.raises(ValueError, match="full_search_prob"):
        SelfPlayConfig(full_search_prob=0)
    with pytest.raises(ValueError, match="games_in_parallel"):
        SelfPlayConfig(games_in_parallel=0)


def test_opening_moves_never_sample_a_pass():
    # Go 5x5 with 8 simulations: most children get one visit, so a temperature draw is nearly
    # uniform over them; a drawn pass would end many games at once (opponent passes back).
    game = make_game("go", board_size=5)
    worker = SelfPlayWorker(game, UniformEvaluator(), SearchConfig(simulations=8, dirichlet_weight=0.0),
                            SelfPlayConfig(games_in_parallel=32, temperature_moves=30, full_search_prob=1.0,
                                           resign_threshold=None), seed=3)
    records = worker.play(30)
    assert records == [] and (worker.states.num_moves() == 30).all(), "no game may end early by passing"


def test_cheap_searches_play_the_most_visited_move():
    game = make_game("connect4")
    cfg = SelfPlayConfig(games_in_parallel=8, temperature_moves=100, full_search_prob=1e-9, cheap_simulations=16,
                         resign_threshold=None)
    worker = SelfPlayWorker(game, UniformEvaluator(), SearchConfig(simulations=32), cfg, seed=0)
    calls = []
    original = worker.cheap.choose_actions
    worker.cheap.choose_actions = lambda *a, **k: calls.append(1) or original(*a, **k)
    worker.play(5)
    assert not calls  # no temperature draw: the cheap search's argmax is played


def test_no_pass_moves_keeps_young_games_going_and_out_of_the_targets():
    game = make_game("go", board_size=5)
    p = game.spec.pass_action

    class PassLover(UniformEvaluator):
        """Puts almost all prior on the pass: without the rule every game would pass at once."""

        def evaluate(self, obs, legal):
            priors, values = super().evaluate(obs, legal)
            priors[:, p] *= 1000.0
            return priors, values

    worker = SelfPlayWorker(game, PassLover(), SearchConfig(simulations=16, dirichlet_weight=0.0),
                            SelfPlayConfig(games_in_parallel=8, temperature_moves=0, full_search_prob=1.0,
                                           resign_threshold=None, no_pass_moves=12), seed=1)
    assert worker.play(12) == []  # nobody passed, so no game ended (two passes end a game)
    assert (worker.states.num_moves() == 12).all()
    for t in worker.traj:
        assert all(pi[p] == 0 for pi in t.policy) and all(abs(pi.sum() - 1) < 1e-5 for pi in t.policy)
    finished = play_games(worker, 8)  # after move 12 the pass is allowed again: the games end
    assert all(len(r.actions) >= 14 and r.actions[:12].count(p) == 0 for r in finished)


def test_no_pass_moves_must_not_be_negative():
    with pytest.raises(ValueError, match="no_pass_moves"):
        SelfPlayConfig(no_pass_moves=-1)


def test_value_q_weight_mixes_the_root_value_into_the_target():
    """Every position is judged lost for player 0 (root values near -0.9 / +0.9 from the mover's
    view); the targets are (1 - w) z + w q with q the recorded search's root value."""
    game = make_game("tictactoe")
    kw = dict(games_in_parallel=4, resign_threshold=None, full_search_prob=1.0)
    runs = {}
    for w in (0.0, 0.5):
        worker = SelfPlayWorker(game, PlayerZeroLoses(), SearchConfig(simulations=8),
                                SelfPlayConfig(value_q_weight=w, **kw), seed=3)
        runs[w] = play_games(worker, 4)[:4]
    for plain, mixed in zip(runs[0.0], runs[0.5]):
        assert plain.actions == mixed.actions  # the weight changes targets, not play
        z = np.where(mixed.to_play == 0, mixed.outcome, -mixed.outcome)
        np.testing.assert_array_equal(plain.value_targets, z)
        q = mixed.root_value
        assert len(q) == len(z) and np.all(np.abs(q) <= 1)
        assert mixed.to_play[0] == 0 and q[0] == pytest.approx(-0.9)  # the first search saw player 0 losing
        np.testing.assert_allclose(mixed.value_targets, 0.5 * z + 0.5 * q, rtol=1e-6)
    with pytest.raises(ValueError, match="value_q_weight"):
        SelfPlayConfig(value_q_weight=1.5)


def test_lambda_returns_weigh_later_search_values_and_the_outcome():
    """Three alternating positions, player 0 won (z = +1): worked by hand from
    G_t = (1 - lam) v_t + lam G_{t+1}, each G in its own player's view."""
    v = np.array([0.2, -0.4, 0.6], np.float32)  # each from its player to move's view
    to_play = np.array([0, 1, 0], np.int8)
    g2 = 0.5 * 0.6 + 0.5 * 1.0  # player 0 to move, outcome +1 for them
    g1 = 0.5 * -0.4 + 0.5 * -g2  # player 1's view
    g0 = 0.5 * 0.2 + 0.5 * -g1
    np.testing.assert_allclose(lambda_returns(v, to_play, 1.0, 0.5), [g0, g1, g2], rtol=1e-6)
    np.testing.assert_allclose(lambda_returns(v, to_play, 1.0, 0.0), v)  # the search's own value
    np.testing.assert_allclose(lambda_returns(v, to_play, -1.0, 1.0), [-1, 1, -1])  # the outcome
    # the sign flips only where the player to move changes (a drawn game: G at the end is 0)
    h2 = 0.5 * 0.6  # player 1's view
    h1 = 0.5 * -0.4 + 0.5 * -h2  # player 0's view
    h0 = 0.5 * 0.2 + 0.5 * h1  # player 0 again: no flip
    np.testing.assert_allclose(lambda_returns(v, np.array([0, 0, 1], np.int8), 0.0, 0.5), [h0, h1, h2],
                               rtol=1e-6)
    assert lambda_returns(v[:0], to_play[:0], 1.0, 0.5).shape == (0,)


def test_value_q_lambda_puts_later_search_values_into_the_target():
    """The same games as with lambda 0 (the target changes, not play); the targets are
    (1 - w) z + w G, G the lambda-return of the recorded root values."""
    game = make_game("tictactoe")
    kw = dict(games_in_parallel=4, resign_threshold=None, full_search_prob=1.0, value_q_weight=0.5)
    runs = {}
    for lam in (0.0, 0.8):
        worker = SelfPlayWorker(game, PlayerZeroLoses(), SearchConfig(simulations=8),
                                SelfPlayConfig(value_q_lambda=lam, **kw), seed=3)
        runs[lam] = play_games(worker, 4)[:4]
    for plain, td in zip(runs[0.0], runs[0.8]):
        assert plain.actions == td.actions
        z = td.outcomes
        g = lambda_returns(td.root_value, td.to_play, td.outcome, 0.8)
        np.testing.assert_allclose(td.value_targets, 0.5 * z + 0.5 * g, rtol=1e-6)
        assert not np.allclose(td.value_targets, plain.value_targets)
    with pytest.raises(ValueError, match="value_q_lambda"):
        SelfPlayConfig(value_q_lambda=-0.1, value_q_weight=0.5)
    with pytest.raises(ValueError, match="needs value_q_weight"):
        SelfPlayConfig(value_q_lambda=0.8)


def test_random_openings_start_games_from_unrecorded_random_moves():
    game = make_game("connect4")
    cfg = SelfPlayConfig(games_in_parallel=8, full_search_prob=1.0, resign_threshold=None,
                         temperature_moves=0, random_opening_moves=6, random_opening_fraction=0.5)
    worker = SelfPlayWorker(game, UniformEvaluator(), SearchConfig(simulations=8), cfg, seed=3)
    records = play_games(worker, 40)
    starts = [int(r.move_number[0]) for r in records]
    # Half the games start at move 0, the rest after 1..6 random moves (none recorded).
    assert 0 in starts and max(starts) <= 6 and sum(s > 0 for s in starts) >= 8
    assert worker.random_moves_played >= sum(starts)
    for r in records:
        T = len(r.to_play)
        assert len(r.actions) == r.move_number[0] + T  # random moves, then one recorded per move
        assert np.array_equal(r.move_number, r.move_number[0] + np.arange(T))
        s = game.new_states(1)
        for t, a in enumerate(r.actions):
            if t >= r.move_number[0]:
                assert s.legal_mask()[0].tolist() == r.legal[t - r.move_number[0]].tolist()
            s.apply(np.array([a], np.int32))
        assert s.terminal()[0] and s.outcome()[0] == r.outcome


def test_random_openings_never_pass_or_end_the_game():
    game = make_game("tictactoe")
    # Up to 9 random moves on a 9-square board: the moves that would end the game are taken back.
    cfg = SelfPlayConfig(games_in_parallel=16, full_search_prob=1.0, resign_threshold=None,
                         random_opening_moves=9, random_opening_fraction=1.0)
    worker = SelfPlayWorker(game, UniformEvaluator(), SearchConfig(simulations=4), cfg, seed=0)
    records = play_games(worker, 30)
    assert all(len(r.to_play) >= 1 for r in records)  # every game reached a searched, recorded move
    go = make_game("go9x9")
    cfg = SelfPlayConfig(games_in_parallel=4, random_opening_moves=20, random_opening_fraction=1.0)
    worker = SelfPlayWorker(go, UniformEvaluator(), SearchConfig(simulations=4), cfg, seed=0)
    nums = worker.states.num_moves()
    assert np.all(nums >= 1) and np.all(nums <= 20) and not worker.states.terminal().any()
    assert all(go.spec.pass_action not in t.actions for t in worker.traj)


def test_random_opening_config_is_checked():
    with pytest.raises(ValueError, match="random_opening_moves"):
        SelfPlayConfig(random_opening_moves=-1)
    with pytest.raises(ValueError, match="random_opening_fraction"):
        SelfPlayConfig(random_opening_fraction=1.5)
