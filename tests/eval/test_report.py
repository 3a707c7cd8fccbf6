"""azero report: the page, its plots and links, rendered in a real headless browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from azero.cli import main
from azero.eval.compare import run_compare
from azero.eval.report import build_report, checkpoint_step, player_kind
from azero.eval.tournament import run_tournament
from azero.games.sgf import write_sgf
from evalutil import save_tiny


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A small but complete run directory: metrics, checkpoints, SGF samples, a tournament, a compare."""
    run = tmp_path_factory.mktemp("run")
    for step in (10, 20):
        save_tiny(run / "checkpoints", "tictactoe", step, seed=step)
    (run / "logs").mkdir()
    rng = np.random.default_rng(0)
    lines = [json.dumps({"step": s, "positions": 50 * s, "games": s, "time": s / 2, "loss": 3 - s / 20 + rng.random() / 5,
                         "policy_loss": 2 - s / 30, "value_loss": 1 - s / 60}) for s in range(0, 25)]
    (run / "logs" / "metrics.jsonl").write_text("\n".join(lines) + '\n{"step": 25, "lo')  # killed mid-write
    (run / "sgf").mkdir()
    for k in range(3):
        (run / "sgf" / f"game_{k:08d}.sgf").write_text(write_sgf(9, 7.5, [40, 41, 81, 81], result="W+7.5"))
    ck = run / "checkpoints"
    run_tournament(run / "eval" / "t1", game_name="tictactoe", games_per_pair=2, log=lambda s: None,
                   players=["random", f"raw:{ck}/ckpt_000000010.safetensors", f"raw:{run}", f"mcts:{run}@2"])
    run_compare(str(run), "tictactoe", [0, 1, 2], games=2, algorithms=["puct"], out_dir=run / "eval" / "cmp",
                log=lambda s: None)
    return run


def test_page_has_every_section(run_dir):
    assert main(["report", str(run_dir)]) == 0
    page = (run_dir / "report.html").read_text()
    imgs = re.findall(r'<img src="([^"]+)"', page)
    assert len(imgs) == 4  # losses, Elo bars, Elo over training, raw-vs-search
    for src in imgs:
        png = run_dir / src
        assert png.read_bytes()[:4] == b"\x89PNG", src
    for k in range(3):  # sample games linked relatively
        assert f'href="sgf/game_{k:08d}.sgf"' in page
    assert "<code>random</code>" in page and "12 games" in page
    assert 'class="missing"' in page  # only the image-check line
    assert page.count('class="missing"') == 1


def test_missing_sections_say_why(tmp_path):
    (tmp_path / "config.yaml").write_text("game:\n  name: tictactoe\n")  # a run that has just started
    path = build_report(tmp_path, out=tmp_path / "out" / "r.html")
    page = path.read_text()
    assert "no loss records" in page and "no tournament results" in page and "no compare.json" in page
    assert "no SGF files" in page and (tmp_path / "out" / "r_files").is_dir()
    with pytest.raises(FileNotFoundError):
        build_report(tmp_path / "nope")
    (tmp_path / "not-a-run").mkdir()
    with pytest.raises(FileNotFoundError, match="not a run directory"):
        build_report(tmp_path / "not-a-run")
    assert not (tmp_path / "not-a-run" / "report.html").exists()


def test_training_axis_from_checkpoint_names():
    pins = {"runs/a": "/x/runs/a/checkpoints/ckpt_000000300.safetensors"}
    assert checkpoint_step("mcts:runs/a@64", pins) == 300
    assert checkpoint_step("raw:r/ckpt_000000042.safetensors", {}) == 42
    assert checkpoint_step("random", {}) is None and checkpoint_step("raw:runs/b", {}) is None
    assert player_kind("mcts:runs/a@64:gumbel") == "mcts:CKPT@64:gumbel" and player_kind("random") == "random"


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def test_page_renders_in_headless_chromium(run_dir, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install -y chromium); the rendering check needs a real browser")
    page = build_report(run_dir, out=tmp_path / "site" / "index.html")
    base = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1200,2000"]
    url = page.resolve().as_uri()
    shot = tmp_path / "out.png"
    r = subprocess.run(base + [f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", url],
                       capture_output=True, text=True, timeout=120)
    assert shot.exists(), r.stderr[-2000:]
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)[..., :3]  # [H, W, 3] in [0, 1]
    assert pixels.shape[:2] == (2000, 1200)
    not_white = (pixels < 0.9).any(axis=2).mean()
    assert not_white > 0.02, f"screenshot nearly blank ({not_white:.4f} of pixels drawn)"
    assert len(np.unique(pixels.reshape(-1, 3).round(2), axis=0)) > 50  # plots, not just text on white

    # The page's own check: every <img class="plot"> loaded (naturalWidth > 0).
    r = subprocess.run(base + [f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=10000",
                               "--dump-dom", url], capture_output=True, text=True, timeout=120)
    m = re.search(r'id="image-check"[^>]*data-loaded="(\d+)" data-total="(\d+)"', r.stdout)
    assert m, "the image check did not run: " + r.stdout[-1000:] + r.stderr[-1000:]
    assert int(m.group(1)) == int(m.group(2)) == 4


def _png_width(path: Path) -> int:
    return int.from_bytes(path.read_bytes()[16:20], "big")


def test_elo_progress_has_a_wall_clock_axis_continued_across_resumes(tmp_path):
    from azero.eval.elo import fit_elo
    from azero.eval.report import plot_elo_progress

    a, b = "raw:r/ckpt_000000010.safetensors", "raw:r/ckpt_000000030.safetensors"
    table = fit_elo([(a, "random", 1.0), (b, a, 1.0), (b, "random", 0.5)] * 3, anchor="random")
    # A resumed run: the logger's time restarts at 0 after step 20.
    resumed = [{"step": s, "positions": 10 * s, "time": float(s if s <= 20 else s - 20)} for s in range(0, 40, 5)]
    no_time = [{k: v for k, v in r.items() if k != "time"} for r in resumed]
    assert plot_elo_progress(table, {}, resumed, tmp_path / "three.png")
    assert plot_elo_progress(table, {}, no_time, tmp_path / "two.png")
    assert plot_elo_progress(table, {}, [], tmp_path / "one.png")
    widths = [_png_width(tmp_path / f"{n}.png") for n in ("one", "two", "three")]
    assert widths[0] < widths[1] < widths[2]  # step; + positions; + wall clock
    from azero.runs.clock import at_step, clock_from_records

    assert at_step(clock_from_records(resumed), 30) == (30.0, 300)  # 20 s before the resume + 10 after
    assert not plot_elo_progress(fit_elo([("random", "gnugo:1", 0.0)]), {}, resumed, tmp_path / "none.png")
