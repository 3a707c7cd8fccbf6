"""Shipped networks: found by game, used by default, loadable, and described by their record."""

import pytest

import azero.models as models
from azero.models import NO_NETWORK, resolve_checkpoint, shipped_card, shipped_checkpoint, shipped_games


def test_resolve_prefers_the_given_checkpoint_then_the_shipped_one(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "MODELS_DIR", tmp_path)
    assert resolve_checkpoint("connect4", None) is None
    (tmp_path / "connect4.safetensors").write_bytes(b"x")
    assert resolve_checkpoint("connect4", None) == str(tmp_path / "connect4.safetensors")
    assert resolve_checkpoint("connect4", "mine.safetensors") == "mine.safetensors"
    assert resolve_checkpoint("connect4", NO_NETWORK) is None
    assert resolve_checkpoint("go9x9", None) is None
    assert shipped_games() == ["connect4"]


@pytest.mark.parametrize("game", shipped_games() or ["(none shipped)"])
def test_every_shipped_network_loads_and_fits_its_game(game):
    if game == "(none shipped)":
        pytest.skip("no network is shipped")
    from azero.games import make_game
    from azero.gtp.agent import load_evaluator

    loaded = load_evaluator(str(shipped_checkpoint(game)), device="cpu")
    assert loaded.fits(make_game(game).spec)
    card = shipped_card(game)
    assert card is not None, f"azero/models/{game}.json is missing"
    for key in ("command", "config", "strength", "trained"):
        assert key in card, f"azero/models/{game}.json lacks {key!r}"
