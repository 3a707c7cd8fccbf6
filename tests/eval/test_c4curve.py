"""The connect-four learning curve: every checkpoint scored, placed on the run's clock."""

import json

from azero.cli import main
from azero.runs.clock import at_step, run_clock
from evalutil import save_tiny


def write_metrics(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"cut sho')


def test_clock_continues_across_resumes(tmp_path):
    m = tmp_path / "metrics.jsonl"
    write_metrics(m, [{"time": 1.0, "step": 0, "positions": 0}, {"time": 50.0, "step": 10, "positions": 500},
                      {"time": 2.0, "step": 10, "positions": 500},  # resumed: the logger's clock restarted
                      {"time": 30.0, "step": 20, "positions": 900}])
    clock = run_clock(m)
    assert [c[1] for c in clock] == [1.0, 50.0, 52.0, 80.0]
    assert at_step(clock, 15) == (80.0, 900) and at_step(clock, 21) == (None, None)


def test_curve_scores_every_checkpoint(tmp_path, capsys):
    run = tmp_path / "run"
    save_tiny(run / "checkpoints", "connect4", 5, seed=5)
    save_tiny(run / "checkpoints", "connect4", 9, seed=6)
    write_metrics(run / "logs" / "metrics.jsonl", [{"time": 10.0, "step": 5, "positions": 100},
                                                   {"time": 20.0, "step": 9, "positions": 300}])
    rc = main(["c4-curve", str(run), "--sims", "4", "--positions", "4", "--depths", "20", "--out",
               str(tmp_path / "curve"), "--cache-dir", str(tmp_path / "cache")])
    assert rc == 0
    doc = json.loads((tmp_path / "curve" / "curve.json").read_text())
    assert [p["step"] for p in doc["points"]] == [5, 9]
    assert [(p["seconds"], p["positions"]) for p in doc["points"]] == [(10.0, 100), (20.0, 300)]
    assert set(doc["points"][0]["agents"]) == {"random", "raw", "puct@4"}
    assert (tmp_path / "curve" / "curve.png").stat().st_size > 0
    assert "step      9" in capsys.readouterr().out


def test_curve_without_checkpoints_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "checkpoints").mkdir()
    assert main(["c4-curve", str(tmp_path)]) == 2
    assert "no checkpoints" in capsys.readouterr().err


def test_curve_passes_device_and_precision_to_each_scoring(tmp_path, monkeypatch):
    # A GPU evaluation must be able to keep float32 (the default on CUDA is bf16), as c4-accuracy can.
    import azero.eval.c4accuracy as c4accuracy

    seen = []
    real = c4accuracy.run_c4_accuracy

    def spy(**kwargs):
        seen.append((kwargs["device"], kwargs["precision"], kwargs["backend"]))
        return real(**kwargs)

    monkeypatch.setattr(c4accuracy, "run_c4_accuracy", spy)
    run = tmp_path / "run"
    save_tiny(run / "checkpoints", "connect4", 5, seed=5)
    rc = main(["c4-curve", str(run), "--sims", "2", "--positions", "2", "--depths", "20", "--out",
               str(tmp_path / "curve"), "--cache-dir", str(tmp_path / "cache"), "--device", "cpu",
               "--precision", "f32", "--backend", "torch"])
    assert rc == 0
    assert seen == [("cpu", "f32", "torch")]
