import pytest

from azero.games import UnknownGameError, available_games, make_game
from azero.games.config import GameConfig, game_from_config


def test_unknown_game_lists_available():
    with pytest.raises(UnknownGameError) as e:
        make_game("chess960")
    msg = str(e.value)
    assert "chess960" in msg
    for entry in available_games():
        assert entry.name in msg


def test_unknown_parameter_is_named():
    with pytest.raises(ValueError, match="board_size"):
        make_game("connect4", board_size=9)


def test_every_registered_game_builds_with_defaults():
    for entry in available_games():
        game = make_game(entry.name)
        spec = game.spec
        states = game.new_states(2)
        assert len(states) == 2
        assert states.legal_mask().shape == (2, spec.num_actions)
        assert states.encode().shape == (2, *spec.obs_shape)


def test_go_parameters_reach_the_game():
    game = make_game("go", board_size=13, komi=6.5)
    assert game.spec.num_actions == 13 * 13 + 1
    assert game.spec.params["komi"] == 6.5
    assert make_game("go9x9").spec.name == "go9x9"


def test_openspiel_shorthand_and_config():
    a = make_game("openspiel:tic_tac_toe")
    b = game_from_config(GameConfig(name="openspiel", load="tic_tac_toe"))
    assert a.spec.name == b.spec.name == "openspiel:tic_tac_toe"
    assert a.spec.num_actions == 9
