"""Real 9x9 games against GNU Go 3.8 (level 1) through GTP; skipped when gnugo is not installed."""

from __future__ import annotations

import sys

import pytest

from engine_match import play_vs_engine

from azero.agents.gtp_player import GtpPlayer, gnugo_player
from azero.agents.mcts import MctsPlayer
from azero.games.go import GoGame
from azero.games.sgf import read_sgf
from azero.agents.checkpoints import load_evaluator
from azero.games.go_notation import parse_result
from azero.search.config import SearchConfig


def check_report(report, game: GoGame, games: int) -> None:
    """What every match against GNU Go must satisfy, whoever plays it."""
    assert report.match.games == games and len(report.games) == games
    for g in report.games:
        states = game.new_states(1)
        for a in g.moves:
            states.apply([a])
        assert states.terminal()[0], f"game {g.index} did not finish"
        # Both scorers were asked; they agree, or the report says where they do not.
        assert g.engine_score is not None and g.engine_value is not None
        line = report.summary().split("\n")[1 + g.index]
        if g.score_agrees:
            assert "same score" in line
        else:
            assert ("DIFFERENT WINNER" in line) == (g in report.disagreements())
            assert g.tt_result in line and g.engine_score in line
        # The SGF written is a faithful record: azero's reader gives back the same game.
        record = read_sgf(open(g.sgf_path).read())
        assert record.moves == g.moves and record.board_size == 9 and record.komi == game.komi
        assert record.result == g.tt_result
        names = (record.black, record.white) if g.player_colour == 0 else (record.white, record.black)
        assert names == (report.player, report.engine)


def test_tiny_network_vs_gnugo_level1(gnugo, tiny_checkpoint, tmp_path):
    game = GoGame(9, 7.5)
    loaded = load_evaluator(str(tiny_checkpoint), device="cpu")
    player = MctsPlayer(game.spec, loaded.evaluator, SearchConfig(simulations=8), name="azero-tiny-8")
    engine = gnugo_player(1, binary=gnugo)
    try:
        report = play_vs_engine(game, player, engine, games=2, sgf_dir=tmp_path / "sgf")
    finally:
        engine.close()
    print(report.summary())
    check_report(report, game, 2)
    assert report.engine == "gnugo-L1" and not engine.replaced_moves and not engine.resigned
    # An untrained network with 8 simulations loses to GNU Go, and by Tromp-Taylor GNU Go's count agrees
    # on who won (--capture-all-dead leaves no dead stones for the two scorers to disagree about).
    assert report.match.losses == 2
    assert all(g.winner_agrees for g in report.games)


def test_azero_gtp_engine_vs_gnugo_both_through_gtp(gnugo, tmp_path):
    """azero's own GTP engine (subprocess, the shipped network) against GNU Go: both sides speak GTP."""
    game = GoGame(9, 7.5)
    azero = GtpPlayer([sys.executable, "-m", "azero.gtp", "--sims", "16", "--quiet"], name="azero-gtp",
                      max_engines=1, query_final_score=True)
    engine = gnugo_player(1, binary=gnugo, max_engines=1)
    try:
        report = play_vs_engine(game, azero, engine, games=2, sgf_dir=tmp_path)
    finally:
        azero.close()
        engine.close()
    print(report.summary())
    check_report(report, game, 2)
    # azero's engine scores its own board by Tromp-Taylor: exactly the match's score.
    for g in report.games:
        assert parse_result(azero.final_scores[g.index]) == pytest.approx(g.tt_score)
