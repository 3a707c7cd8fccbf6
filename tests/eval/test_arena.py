"""The arena: alternating colours, paired random openings, deterministic games, game files, score checks."""

from __future__ import annotations

import numpy as np
import pytest

from azero.eval.arena import (ArenaSummary, game_text, opening_moves_for, parse_engine_score, play_arena, play_games,
                              write_game_file)
from azero.agents.factory import PlayerFactory
from azero.agents.simple import RandomPlayer
from azero.games import make_game
from azero.games.sgf import read_sgf


class Recorder(RandomPlayer):
    """A random player that logs the protocol calls it receives."""

    def __init__(self, seed, name):
        super().__init__(seed=seed, name=name)
        self.calls = []

    def start(self, n):
        self.calls.append(("start", n))

    def observe(self, slots, actions):
        self.calls.append(("observe", actions.tolist()))

    def finish(self, slots):
        self.calls.append(("finish", sorted(np.asarray(slots).tolist())))


def replay(game, moves):
    s = game.new_states(1)
    for a in moves:
        s.apply(np.array([a], np.int32))
    return s


def test_colours_alternate_and_openings_are_paired_and_diverse():
    game = make_game("connect4")
    a, b = Recorder(1, "A"), Recorder(2, "B")
    games = play_games(game, a, b, range(16), seed=5, opening_moves=3)
    assert [g.index for g in games] == list(range(16))
    for g in games:
        assert g.a_first == (g.index % 2 == 0)
        assert (g.first, g.second) == (("A", "B") if g.a_first else ("B", "A"))
        assert g.opening == 3
        assert g.moves[:3] == opening_moves_for(game, g.index, seed=5, count=3)
        s = replay(game, g.moves)  # the record replays to a finished game with the recorded outcome
        assert s.terminal()[0] and float(s.outcome()[0]) == g.outcome
        assert g.a_score == ((g.outcome + 1) / 2 if g.a_first else (1 - g.outcome) / 2)
    openings = [tuple(g.moves[:3]) for g in games]
    for k in range(0, 16, 2):  # one opening, both colours
        assert openings[k] == openings[k + 1]
    assert len(set(openings[::2])) >= 6  # 8 pairs, 343 possible openings: (nearly) all different
    # Protocol: start(n), every move observed by both players, every game finished exactly once.
    for p in (a, b):
        assert p.calls[0] == ("start", 16)
        finished = [s for c in p.calls if c[0] == "finish" for s in c[1]]
        assert sorted(finished) == list(range(16))
        observed = sum(1 for c in p.calls if c[0] == "observe" for x in c[1] if x != -1)
        assert observed == sum(len(g.moves) for g in games)
    s = ArenaSummary.of(games)
    assert s.games == 16 and s.wins + s.draws + s.losses == 16


def test_games_are_deterministic_for_seeded_players(ttt_run):
    game = make_game("tictactoe")
    factory = PlayerFactory(game)

    def run(seed):
        a = factory.build(f"mcts:{ttt_run}@8:gumbel", seed=seed)
        b = factory.build("random", seed=seed + 1)
        return [g.moves for g in play_arena(game, a, b, games=12, parallel=5, seed=seed, opening_moves=1)]

    first = run(3)
    assert first == run(3)
    assert first != run(4)


def test_on_game_sees_each_game_when_it_ends():
    game = make_game("tictactoe")
    seen = []
    games = play_games(game, RandomPlayer(1, "x"), RandomPlayer(2, "y"), [4, 5, 6, 7], seed=0,
                       on_game=lambda g: seen.append((g.index, len(g.moves))))
    assert sorted(seen) == sorted((g.index, len(g.moves)) for g in games)
    # games end in order of their length: the callback runs as each one finishes
    assert [n for _, n in seen] == sorted(n for _, n in seen)


class ScoringRandom(RandomPlayer):
    """A random player offering final_score like a GTP engine; `lie` flips the winner it reports."""

    def __init__(self, seed, name, lie=False):
        super().__init__(seed=seed, name=name)
        self.lie = lie
        self.states = {}
        self.asked = []
        self.finished = set()

    def start(self, n):
        self.moves = [[] for _ in range(n)]

    def observe(self, slots, actions):
        for s, a in zip(slots.tolist(), actions.tolist()):
            if a != -1:
                self.moves[s].append(a)

    def finish(self, slots):
        self.finished.update(np.asarray(slots).tolist())

    def final_score(self, slot):
        assert slot not in self.finished  # asked before the game is released
        self.asked.append(slot)
        s = make_game("go", board_size=5).new_states(1)
        s.apply_paths(np.array([self.moves[slot]], np.int32))
        score = float(s.score()[0])
        if self.lie:
            score = -score if score else 1.0
        return f"B+{score:g}" if score > 0 else f"W+{-score:g}" if score < 0 else "0"


def test_go_games_scored_by_tromp_taylor_and_cross_checked(tmp_path):
    game = make_game("go", board_size=5)
    honest = ScoringRandom(1, "honest")
    liar = ScoringRandom(2, "liar", lie=True)
    games = play_games(game, honest, liar, range(4), seed=1, opening_moves=2)
    for g in games:
        s = replay(game, g.moves)
        assert g.score == pytest.approx(float(s.score()[0]))
        assert g.result == (f"B+{g.score:g}" if g.score > 0 else f"W+{-g.score:g}" if g.score < 0 else "0")
        checks = {c["player"]: c for c in g.score_checks}
        assert checks["honest"]["agrees"] is True and checks["honest"]["margin_difference"] == 0
        assert checks["liar"]["agrees"] is False  # reported, not hidden
        assert g.disagreement
    assert sorted(honest.asked) == [0, 1, 2, 3]
    # SGF: names, result and komi, moves that replay
    path = write_game_file(game, games[1], tmp_path / "g1")
    rec = read_sgf(path.read_text())
    assert path.suffix == ".sgf"
    assert (rec.black, rec.white, rec.result, rec.komi) == ("liar", "honest", games[1].result, 7.5)
    assert rec.moves == games[1].moves


def test_move_list_files_for_other_games(tmp_path):
    game = make_game("connect4")
    g = play_games(game, RandomPlayer(1, "p"), RandomPlayer(2, "q"), [0], seed=0)[0]
    path = write_game_file(game, g, tmp_path / "sub" / "0000")
    assert path.name == "0000.txt"
    fields = dict(line.split(": ", 1) for line in path.read_text().splitlines() if not line.startswith("#"))
    assert fields["first"] == "p" and fields["second"] == "q" and fields["result"] == g.result
    assert [game.str_to_action(m) for m in fields["moves"].split()] == g.moves
    assert game_text(game, g) == path.read_text()


def test_parse_engine_score():
    assert parse_engine_score("B+3.5") == (3.5, "B+3.5")
    assert parse_engine_score("W+12") == (-12.0, "W+12")
    assert parse_engine_score("0")[0] == 0.0
    assert parse_engine_score("W+R")[0] == -np.inf
    assert parse_engine_score(-2.5)[0] == -2.5
    assert parse_engine_score("??")[0] is None and parse_engine_score(None)[0] is None


def test_a_player_that_cannot_score_does_not_lose_the_game():
    class Broken(ScoringRandom):
        def final_score(self, slot):
            raise RuntimeError("engine died")

    game = make_game("go", board_size=3)
    g = play_games(game, Broken(1, "b"), RandomPlayer(2, "r"), [0], seed=0)[0]
    assert g.score_checks[0]["error"].startswith("RuntimeError") and not g.disagreement
