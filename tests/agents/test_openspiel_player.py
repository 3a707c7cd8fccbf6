"""The openspiel-mcts player spec: OpenSpiel's C++ MCTSBot playing azero games through their OpenSpiel twins."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from matches import play_match  # noqa: E402
from azero.agents.openspiel_player import HistoryMismatchError, OpenSpielMctsPlayer  # noqa: E402
from azero.agents.factory import PlayerFactory, make_player  # noqa: E402
from azero.agents.spec import ACCEPTED_FORMS, parse_player_spec  # noqa: E402
from azero.games import NO_ACTION, GameSpec, make_game  # noqa: E402
from azero.games.go import GoGame  # noqa: E402
from azero.games.openspiel_twin import (OPENSPIEL_NAMES, NoOpenSpielTwinError, go_action_perm,  # noqa: E402
                                        openspiel_twin)

# ---------------------------------------------------------------------- spec parsing


def test_parse_openspiel_mcts_specs():
    s = parse_player_spec("openspiel-mcts:1000")
    assert (s.kind, s.simulations, s.rollouts, s.uct_c, s.name) == ("openspiel-mcts", 1000, 1, 2.0,
                                                                       "openspiel-mcts:1000")
    assert not s.uses_network
    s = parse_player_spec(" openspiel-mcts:50:uct_c=1.4:rollouts=3 ")
    assert (s.simulations, s.rollouts, s.uct_c, s.text) == (50, 3, 1.4, "openspiel-mcts:50:uct_c=1.4:rollouts=3")


    assert "openspiel-mcts:SIMS[:rollouts=R][:uct_c=C]" in ACCEPTED_FORMS


def test_game_without_twin_is_a_clear_error():
    spec = GameSpec(name="chess960", num_actions=4, obs_shape=(1, 2, 2), board_shape=(2, 2), max_moves=4)

    class NoTwin:
        pass

    game = NoTwin()
    game.spec = spec
    with pytest.raises(NoOpenSpielTwinError, match="'chess960' has no OpenSpiel twin; games with one: connect4"):
        openspiel_twin(game)
    with pytest.raises(ValueError, match=r"player spec 'openspiel-mcts:10': OpenSpiel MCTS plays only games with "
                                         r"an OpenSpiel twin: game 'chess960'"):
        PlayerFactory(game).build("openspiel-mcts:10")


# ---------------------------------------------------------------------- the twins


def test_one_mapping_shared_with_the_benchmarks():
    from azero.bench import games as bench_games
    from azero.bench import mcts as bench_mcts

    assert bench_games.OPENSPIEL_NAMES is OPENSPIEL_NAMES is bench_mcts.OPENSPIEL_NAMES
    assert OPENSPIEL_NAMES == {"go9x9": "go(board_size=9,komi=7.5,max_game_length=162)",
                               "connect4": "connect_four", "tictactoe": "tic_tac_toe"}
    for name, load in OPENSPIEL_NAMES.items():
        assert openspiel_twin(make_game(name)).load == load
    # Go's string follows the game's parameters; komi is always a float (OpenSpiel refuses 'komi=6').
    twin = openspiel_twin(GoGame(7, komi=6, max_moves=60))
    assert twin.load == "go(board_size=7,komi=6.0,max_game_length=60)"
    assert pyspiel.load_game(twin.load).num_distinct_actions() == 50
    assert openspiel_twin(make_game("openspiel:hex(board_size=5)")).load == "hex(board_size=5)"


def test_go_action_perm_flips_rows():
    perm = go_action_perm(9)
    game = make_game("go9x9")
    s = pyspiel.load_game(OPENSPIEL_NAMES["go9x9"]).new_initial_state()
    for vertex in ("A9", "J9", "A1", "E5", "C7", "pass"):
        a = game.str_to_action(vertex)
        assert s.action_to_string(int(perm[a])).split()[-1].upper() == vertex.upper()
    np.testing.assert_array_equal(perm[perm], np.arange(82))  # its own inverse


@pytest.mark.parametrize("game", [make_game("connect4"), make_game("tictactoe"), GoGame(5, komi=0.5),
                                  make_game("go9x9")], ids=lambda g: g.spec.name)
def test_random_games_replayed_into_pyspiel_agree(game):
    """azero's random games, replayed move by move into the twin: same legal sets (Go: OpenSpiel may add
    only superko repeats), same player to move, same end and outcome."""
    twin = openspiel_twin(game)
    osg = pyspiel.load_game(twin.load)
    rng = np.random.default_rng(7)
    games = 12
    states = game.new_states(games)
    oss = [osg.new_initial_state() for _ in range(games)]
    superko = 0
    while True:
        term = states.terminal()
        legal = states.legal_mask()
        to_play = states.to_play()
        actions = np.full(games, NO_ACTION, np.int32)
        for b in range(games):
            assert oss[b].is_terminal() == term[b]
            if term[b]:
                continue
            assert oss[b].current_player() == to_play[b]
            os_legal = np.zeros(game.spec.num_actions, bool)
            os_legal[[twin.from_openspiel(a) for a in oss[b].legal_actions()]] = True
            assert not (legal[b] & ~os_legal).any()
            extra = np.flatnonzero(os_legal & ~legal[b])
            if extra.size:
                assert twin.superko
                superko += 1
            actions[b] = rng.choice(np.flatnonzero(legal[b]))
            oss[b].apply_action(twin.to_openspiel(actions[b]))
        if term.all():
            break
        states.apply(actions)
    outcome = states.outcome()
    for b in range(games):
        assert np.sign(oss[b].returns()[0]) == outcome[b]


# ---------------------------------------------------------------------- play


def test_connect4_beats_random():
    game = make_game("connect4")
    a = make_player("openspiel-mcts:50", game, seed=1)
    b = make_player("random", game, seed=2)
    r = play_match(game, a, b, games=8, seed=0)
    assert r.wins >= 7, (r.wins, r.draws, r.losses)
    assert a.name == "openspiel-mcts:50"


def test_tictactoe_never_loses_to_random():
    game = make_game("tictactoe")
    a = make_player("openspiel-mcts:1000", game, seed=3)
    b = make_player("random", game, seed=4)
    r = play_match(game, a, b, games=6, seed=0)
    assert r.losses == 0 and r.wins >= 3, (r.wins, r.draws, r.losses)


def test_seeded_and_deterministic():
    game = make_game("connect4")

    def moves(seed):
        a = make_player("openspiel-mcts:20", game, seed=seed)
        b = make_player("random", game, seed=9)
        return play_match(game, a, b, games=4, seed=0).moves

    first = moves(5)
    assert moves(5) == first
    assert moves(6) != first


def test_best_allowed_is_mctsbot_choice():
    """With every move allowed, the filtered root choice used for Go superko is exactly MCTSBot's step()."""
    game = make_game("connect4")
    p = OpenSpielMctsPlayer(game, 100, seed=11)
    q = OpenSpielMctsPlayer(game, 100, seed=11)
    p.start(1)
    q.start(1)
    allowed = np.ones(game.spec.num_actions, bool)
    for move in (3, 3, 2, 4, 0):
        assert p._best_allowed(p._games[0], allowed) == q._games[0].bot.step(q._games[0].state)
        p.observe(np.array([0]), np.array([move]))
        q.observe(np.array([0]), np.array([move]))
    assert p.superko_avoided == 0


def test_go_superko_move_is_never_played():
    # 3x3 (tests/games/test_go_openspiel.py): black A2 would capture A1 and repeat an earlier position:
    # legal in OpenSpiel (it ends the game as a draw there), forbidden by azero.
    game = GoGame(3, komi=0.5)
    p = make_player("openspiel-mcts:1000", game, seed=0)
    p.start(1)
    states = game.new_states(1)
    for vertex in ["A2", "B3", "B1", "B2", "A3", "A1"]:
        a = np.array([game.str_to_action(vertex)], np.int32)
        states.apply(a)
        p.observe(np.array([0]), a)
    a2 = game.str_to_action("A2")
    assert not states.legal_mask()[0, a2]
    for _ in range(3):  # different searches (the bot's random stream moves on)
        action = int(p.act(np.array([0]), states)[0])
        assert action != a2 and states.legal_mask()[0, action]
    assert p.superko_avoided > 0  # at 1000 simulations the bot's favourite is that drawing repeat


def test_go_match_runs():
    game = GoGame(5, komi=0.5)
    a = make_player("openspiel-mcts:30", game, seed=1)
    b = make_player("random", game, seed=2)
    r = play_match(game, a, b, games=2, seed=0)
    assert r.games == 2


# ---------------------------------------------------------------------- history sync


def test_out_of_sync_histories_raise():
    game = make_game("connect4")
    p = make_player("openspiel-mcts:10", game, seed=0)
    p.start(2)
    states = game.new_states(2)
    played = np.array([3, 3], np.int32)
    states.apply(played)
    p.observe(np.array([0]), played[:1])  # slot 1 misses its move
    assert 0 <= p.act(np.array([0]), states.take(np.array([0])))[0] < 7
    with pytest.raises(HistoryMismatchError, match="slot 1 after 0 moves.*player 1 to move, OpenSpiel player 0"):
        p.act(np.array([1]), states.take(np.array([1])))

    # Same player to move, different positions: the legal sets differ (a full column).
    p.start(1)
    states = game.new_states(1)
    for _ in range(6):
        states.apply(np.array([0], np.int32))
    for _ in range(6):
        p.observe(np.array([0]), np.array([1], np.int32))
    with pytest.raises(HistoryMismatchError, match=r"legal only in azero: \[1\], only in OpenSpiel: \[0\].*out of sync"):
        p.act(np.array([0]), states)
    # A move OpenSpiel's position refuses is refused at observe().
    with pytest.raises(HistoryMismatchError, match="move 1 is not legal"):
        p.observe(np.array([0]), np.array([1], np.int32))


def test_finish_starts_a_fresh_game_in_the_slot():
    game = make_game("tictactoe")
    p = make_player("openspiel-mcts:10", game, seed=0)
    p.start(1)
    p.observe(np.array([0]), np.array([4], np.int32))
    p.finish(np.array([0]))
    states = game.new_states(1)
    assert 0 <= p.act(np.array([0]), states)[0] < 9  # the empty board again, no mismatch


def test_tournament_with_openspiel_mcts(tmp_path):
    from azero.eval.tournament import run_tournament

    rep = run_tournament(tmp_path / "t", game_name="tictactoe", players=["random", "openspiel-mcts:200"],
                         games_per_pair=4, parallel=2, log=lambda s: None)
    assert rep.played == 4
    assert rep.table.rating("openspiel-mcts:200") > rep.table.rating("random")
