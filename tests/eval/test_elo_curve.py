import json

import pytest

from azero.cli import main
from azero.eval.elo_curve import EloCurveError, elo_curve


def _write(tmp_path):
    run = tmp_path / "run"
    (run / "logs").mkdir(parents=True)
    # Two segments: the second started after a resume, its clock from 0 again.
    records = [{"time": 100.0, "step": 100, "positions": 1000}, {"time": 200.0, "step": 200, "positions": 2000},
               {"time": 50.0, "step": 300, "positions": 3500}, {"time": 160.0, "step": 400, "positions": 5000}]
    (run / "logs" / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n{cut short")
    tour = tmp_path / "tour"
    tour.mkdir()
    players = [
        {"name": f"mcts:{run}/checkpoints/ckpt_000000400.safetensors@100", "elo": 500.0, "low": 400.0,
         "high": 600.0, "games": 10},
        {"name": f"mcts:{run}/checkpoints/ckpt_000000200.safetensors@100", "elo": 200.0, "low": 100.0,
         "high": 300.0, "games": 10},
        {"name": f"mcts:{run}/checkpoints/ckpt_000000400.safetensors@400:gumbel", "elo": 650.0, "low": 500.0,
         "high": 800.0, "games": 10},
        {"name": "random", "elo": 0.0, "low": None, "high": None, "games": 20},
        {"name": "gnugo:1", "elo": 900.0, "low": 800.0, "high": 1000.0, "games": 10},
    ]
    (tour / "elo.json").write_text(json.dumps({"anchor": "random", "players": players}))
    return run, tour


def test_checkpoints_are_placed_on_positions_and_the_continued_clock(tmp_path):
    run, tour = _write(tmp_path)
    curve = elo_curve(tour, run)
    pts = curve["curves"]["100"]
    assert [p["step"] for p in pts] == [200, 400]  # sorted by step
    assert [p["positions"] for p in pts] == [2000, 5000]
    assert pts[1]["hours"] == pytest.approx((200 + 160) / 3600)  # 200 s before the resume + 160 after
    assert [p["step"] for p in curve["curves"]["400"]] == [400]
    assert [r["name"] for r in curve["references"]] == ["random", "gnugo:1"]


def test_cli_writes_plot_and_json_and_names_bad_inputs(tmp_path, capsys):
    run, tour = _write(tmp_path)
    assert main(["elo-curve", str(tour), str(run), "--out", str(tmp_path / "c.png")]) == 0
    assert (tmp_path / "c.png").stat().st_size > 0
    assert json.loads((tmp_path / "c.json").read_text())["curves"]["100"][0]["elo"] == 200.0
    assert "gnugo:1" in capsys.readouterr().out
    assert main(["elo-curve", str(tmp_path / "nowhere"), str(run)]) == 2
    assert "nowhere/elo.json does not exist" in capsys.readouterr().err
    assert main(["elo-curve", str(tour), str(tmp_path / "norun")]) == 2
    assert "no training records" in capsys.readouterr().err
    (tour / "elo.json").write_text("[1, 2]")
    with pytest.raises(EloCurveError, match="not an azero Elo table"):
        elo_curve(tour, run)
    (tour / "elo.json").write_text(json.dumps({"anchor": "random", "players": [{"name": "random", "elo": 0}]}))
    with pytest.raises(EloCurveError, match="no player of the form"):
        elo_curve(tour, run)
