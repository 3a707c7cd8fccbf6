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


def test_export_keeps_the_network_and_drops_the_training_state(tmp_path):
    import json

    import torch

    from azero.games import make_game
    from azero.models.export import main as export_main
    from azero.train.checkpoint import load_checkpoint, network_from_checkpoint, save_checkpoint
    from azero.train.network import NetworkConfig, PolicyValueNet

    torch.manual_seed(0)
    net = PolicyValueNet(make_game("connect4").spec, NetworkConfig.tiny())
    from azero.train.checkpoint import model_tensors, network_metadata

    run = tmp_path / "run"
    (run / "logs").mkdir(parents=True)
    (run / "config.yaml").write_text("game:\n  name: connect4\nseed: 3\n")
    (run / "state.json").write_text(json.dumps({"games_total": 40}))
    # A resumed run: the logger's clock restarts after step 10.
    (run / "logs" / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in (
        {"step": 10, "time": 3600.0, "positions": 100}, {"step": 12, "time": 10.0, "positions": 120},
        {"step": 20, "time": 1800.0, "positions": 200})) + "\n")
    tensors = dict(model_tensors(net), **{"optim/0/momentum_buffer": torch.ones(3)})
    ckpt = save_checkpoint(run / "checkpoints", step=20, tensors=tensors,
                           metadata={"network": network_metadata(net), "optimizer": {"x": 1}})
    strength = tmp_path / "s.json"
    strength.write_text(json.dumps({"vs_random": "10-0"}))
    assert export_main([str(ckpt), "--game", "connect4", "--out", str(tmp_path / "m"), "--strength", str(strength),
                        "--command", "azero selfplay --game connect4"]) == 0
    shipped = load_checkpoint(tmp_path / "m" / "connect4.safetensors")
    assert not any(k.startswith("optim/") for k in shipped.tensors) and "optimizer" not in shipped.metadata
    x = torch.randn(2, *make_game("connect4").spec.obs_shape)
    a, b = network_from_checkpoint(ckpt), network_from_checkpoint(tmp_path / "m" / "connect4.safetensors")
    for u, v in zip(a(x), b(x)):
        assert torch.equal(u, v)
    card = json.loads((tmp_path / "m" / "connect4.json").read_text())
    assert card["trained"]["wall_clock_hours"] == 1.5 and card["trained"]["selfplay_positions"] == 200
    assert card["config"]["seed"] == 3 and card["strength"] == {"vs_random": "10-0"} and card["step"] == 20
    assert card["command"] == "azero selfplay --game connect4"


def test_gtp_checkpoint_shipped_names_the_shipped_file_or_fails_clearly(tmp_path, monkeypatch):
    from azero.gtp.options import gtp_checkpoint

    monkeypatch.setattr(models, "MODELS_DIR", tmp_path)
    assert gtp_checkpoint("go9x9", None) is None and gtp_checkpoint("go9x9", "x.safetensors") == "x.safetensors"
    with pytest.raises(ValueError, match="no network is shipped for 'go9x9'"):
        gtp_checkpoint("go9x9", "shipped")
    (tmp_path / "go9x9.safetensors").write_bytes(b"x")
    assert gtp_checkpoint("go9x9", "shipped") == str(tmp_path / "go9x9.safetensors")
