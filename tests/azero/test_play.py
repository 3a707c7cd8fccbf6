"""`azero play`: a human at the terminal, driven here through stdin."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from azero.agents.mcts import MctsPlayer
from azero.games import make_game
from azero.play import HumanGame, run_play
from azero.search.config import play_config
from azero.search.evaluators import RandomRolloutEvaluator


def session(game_name: str, lines: list[str], *, human: int = 0, sims: int = 16):
    game = make_game(game_name)
    agent = MctsPlayer(game.spec, RandomRolloutEvaluator(seed=0), play_config(sims, seed=0))
    out = io.StringIO()
    h = HumanGame(game, agent, human=human, simulations=sims, inp=io.StringIO("".join(l + "\n" for l in lines)),
                  out=out)
    assert h.run() == 0
    return h, out.getvalue()


def test_tictactoe_moves_bad_input_undo_and_quit():
    h, text = session("tictactoe", ["4", "4", "xyz", "9", "", "undo", "0", "quit"])
    assert "You are X, azero is O" in text
    assert "Illegal move 4: cell 4 (row 1, column 1) is occupied" in text
    assert text.count("Not a move") == 2  # 'xyz' and '9'
    assert "Took back" in text
    # After undo and '0': X on 0 and azero's one reply; the centre is free again.
    assert len(h.moves) == 2 and h.moves[0] == 0 and 4 not in h.moves[:1]
    assert text.rstrip().endswith("Game abandoned.")
    assert text.count("azero plays") == 2


def test_undo_before_moving_and_end_of_input():
    # azero moves first; an undo before the human's first move has nothing to take back.
    h, text = session("connect4", ["undo", "4"], human=1)
    assert "You are O, azero is X" in text
    assert "Nothing to undo: you have not moved yet." in text
    # Then column 4 (action 3) and azero's reply; the input ends: the game is left, not crashed.
    assert len(h.moves) == 3 and h.moves[1] == 3 and text.rstrip().endswith("Game abandoned.")


def test_a_game_played_to_the_end():
    # The human tries every cell in order; taken ones are refused, and the game ends with a result.
    h, text = session("tictactoe", [str(c) for c in range(9)] * 2)
    assert "Game over after" in text and ("You win" in text or "azero wins" in text or "Draw" in text)
    assert h.states.terminal()[0]


def test_play_cli_go_through_stdin():
    script = "D4\nD4\nJ10\nundo\nE5\npass\nquit\n"
    r = subprocess.run([sys.executable, "-m", "azero.cli", "play", "--game", "go9x9", "--sims", "8",
                        "--color", "black"], input=script, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "You are Black (X)" in out
    assert "Illegal move D4: the point is occupied" in out
    assert "Not a move" in out and "off the 9x9 board" in out
    assert "Took back" in out and out.count("azero plays") == 3  # replies to D4, E5, pass
    assert out.rstrip().endswith("Game abandoned.")
    last_board = out[out.rindex("Took back"):]
    assert " 5 . . . . X" in last_board  # E5 was played after the undo


def test_run_play_refuses_a_network_for_another_game(tiny_checkpoint):
    with pytest.raises(ValueError, match="does not play connect4"):
        run_play(game="connect4", checkpoint=str(tiny_checkpoint), inp=io.StringIO(""), out=io.StringIO())
    out = io.StringIO()
    assert run_play(game="go9x9", checkpoint=str(tiny_checkpoint), simulations=4, device="cpu",
                    inp=io.StringIO("E5\nquit\n"), out=out) == 0
    assert out.getvalue().count("azero plays") == 1


def test_search_settings_reach_the_player_and_bad_ones_are_named(monkeypatch):
    import azero.play

    configs = []

    class Recording(MctsPlayer):
        def __init__(self, spec, evaluator, config, **kw):
            configs.append(config)
            super().__init__(spec, evaluator, config, **kw)

    monkeypatch.setattr(azero.play, "MctsPlayer", Recording)
    out = io.StringIO()
    assert run_play(game="connect4", checkpoint="none", simulations=8, search=["graph=true", "c_init=2.0"],
                    inp=io.StringIO("4\nquit\n"), out=out) == 0
    assert configs[0].graph and configs[0].c_init == 2.0 and out.getvalue().count("azero plays") == 1
    with pytest.raises(ValueError, match="graph_stop=True needs graph=True"):
        run_play(game="connect4", checkpoint="none", search=["graph_stop=true"], inp=io.StringIO(""),
                 out=io.StringIO())


def test_human_player_in_a_match():
    from azero.agents.human import HumanPlayer, HumanQuit
    from matches import play_match
    from azero.agents.simple import RandomPlayer

    game = make_game("tictactoe")
    # Cells in order: taken ones are refused, 'undo' is not a move here, and the game ends.
    out = io.StringIO()
    human = HumanPlayer(game, name="me", inp=io.StringIO("undo\n" + "".join(f"{c}\n" for c in range(9))), out=out)
    result = play_match(game, human, RandomPlayer(seed=0), games=1)
    text = out.getvalue()
    assert result.games == 1 and "game 0, your move (me)" in text and "Not a move" in text
    assert result.moves[0][0] == 0  # the human moved first with cell 0
    quitter = HumanPlayer(game, inp=io.StringIO("quit\n"), out=io.StringIO())
    with pytest.raises(HumanQuit):
        play_match(game, quitter, RandomPlayer(seed=0), games=1)


@pytest.mark.parametrize("game_name, human, result", [("go9x9", 0, "W+R"), ("go9x9", 1, "B+R"),
                                                      ("connect4", 0, None)])
def test_resign_ends_the_game_as_a_loss(game_name, human, result):
    h, text = session(game_name, ["resign"], human=human, sims=4)
    record = f" ({result})" if result else ""
    assert f"You resign after {len(h.moves)} moves: azero wins{record}." in text
    assert "Game abandoned" not in text
