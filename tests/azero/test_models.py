"""Shipped networks: found by game, used by default, loadable, and described by their record."""

import pytest

import azero.models as models
from azero.agents.checkpoints import NO_NETWORK, resolve_checkpoint
from azero.models import shipped_card, shipped_checkpoint, shipped_games


def test_resolve_prefers_the_given_checkpoint_then_the_shipped_one(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "MODELS_DIR", tmp_path)
    assert resolve_checkpoint(None, "connect4") is None
    (tmp_path / "connect4.safetensors").write_bytes(b"x")
    assert resolve_checkpoint(None, "connect4") == tmp_path / "connect4.safetensors"
    assert resolve_checkpoint("shipped", "connect4") == tmp_path / "connect4.safetensors"
    (tmp_path / "elsewhere").mkdir()
    mine = tmp_path / "elsewhere" / "mine.safetensors"
    mine.write_bytes(b"x")
    assert resolve_checkpoint(str(mine), "connect4") == mine
    assert resolve_checkpoint(NO_NETWORK, "connect4") is None
    assert resolve_checkpoint(None, "go9x9") is None
    assert shipped_games() == ["connect4"]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        resolve_checkpoint(str(tmp_path / "nope.safetensors"), "connect4")


@pytest.mark.parametrize("game", shipped_games() or ["(none shipped)"])
def test_every_shipped_network_loads_and_fits_its_game(game):
    if game == "(none shipped)":
        pytest.skip("no network is shipped")
    from azero.agents.checkpoints import checkpoint_planes, game_for, load_evaluator

    path = shipped_checkpoint(game)
    loaded = load_evaluator(str(path), device="cpu")
    assert loaded.fits(game_for(game, [checkpoint_planes(path)]).spec)  # its game, with its feature set
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


def test_shipped_names_the_shipped_file_or_fails_clearly(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "MODELS_DIR", tmp_path)
    with pytest.raises(ValueError, match="no network is shipped for 'go9x9'"):
        resolve_checkpoint("shipped", "go9x9")
    (tmp_path / "go9x9.safetensors").write_bytes(b"x")
    assert resolve_checkpoint("shipped", "go9x9") == tmp_path / "go9x9.safetensors"
    assert resolve_checkpoint(None, "go") == tmp_path / "go9x9.safetensors"  # 'go' is 9x9 by default


def test_export_records_the_clock_and_the_warm_start_line(tmp_path):
    """A run warm-started from a shipped network: the record names it, with its record, and the CPU
    hours add up along the line."""
    import json

    import torch

    from azero.games import make_game
    from azero.models.export import export_network
    from azero.train.checkpoint import model_tensors, network_metadata, save_checkpoint
    from azero.train.network import NetworkConfig, PolicyValueNet

    torch.manual_seed(0)
    net = PolicyValueNet(make_game("connect4").spec, NetworkConfig.tiny())
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "connect4.json").write_text(json.dumps({"step": 500, "trained": {"total_cpu_hours": 2.5}}))
    run = tmp_path / "run"
    (run / "logs").mkdir(parents=True)
    (run / "config.yaml").write_text("game:\n  name: connect4\n")
    (run / "state.json").write_text(json.dumps({
        "games_total": 4, "clock": {"wall_s": 3600.0, "cpu_s": 5400.0, "starts": 3},
        "warm_start": {"from": str(shipped / "connect4.safetensors"), "step": 500, "fresh": [], "widened": []}}))
    ckpt = save_checkpoint(run / "checkpoints", step=7, tensors=model_tensors(net),
                           metadata={"network": network_metadata(net)})
    _, card_path = export_network(ckpt, "connect4", out_dir=tmp_path / "out")
    card = json.loads(card_path.read_text())
    assert card["trained"]["run_wall_hours"] == 1.0 and card["trained"]["run_cpu_hours"] == 1.5
    assert card["trained"]["run_starts"] == 3 and card["trained"]["total_cpu_hours"] == 4.0
    assert card["warm_start"]["step"] == 500 and card["warm_start"]["record"]["step"] == 500
