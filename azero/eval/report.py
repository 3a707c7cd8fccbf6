"""A static HTML report of a training run: training curves, Elo, the raw-vs-search curve, sample games.

    azero report RUN_DIR [--out HTML] [--tournament DIR ...] [--compare JSON_OR_DIR ...] [--anchor NAME=VALUE]

Sources (each section is left out, with a line saying why, when its data is missing):

- training losses: RUN_DIR/logs/metrics.jsonl, records with loss / policy_loss / value_loss
  against the trainer step;
- Elo: tournaments given with --tournament, else every RUN_DIR/eval/**/results.jsonl
  (as written by `azero tournament --out RUN_DIR/eval/NAME`). Players whose checkpoint is
  a ckpt_<step> file (directly, or pinned in tournament.json for a run-directory spec)
  are placed on the training axis: Elo against step and against self-play positions (the
  `positions` counter of metrics.jsonl at that step), one curve per kind of player
  (e.g. `mcts:CKPT@200`); players without a checkpoint (random, GNU Go) are horizontal
  reference lines;
- the raw-vs-search curve: --compare, else every RUN_DIR/eval/**/compare.json;
- sample games: links to the newest SGF files in RUN_DIR/sgf.

The page is one HTML file with PNGs in a folder next to it (default
RUN_DIR/report.html and RUN_DIR/report_files/), linked relatively, so the pair can
be copied or opened from file://. A small inline script checks that every plot loaded
and says so at the bottom of the page (#image-check; also used by the tests).
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from pathlib import Path
from typing import Sequence

from azero.eval.elo import EloTable, fit_elo, plot_elo

_CKPT_STEP = re.compile(r"ckpt_(\d+)\.safetensors")
LOSS_KEYS = ("loss", "policy_loss", "value_loss")
MAX_SGF_LINKS = 20


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def read_jsonl(path: Path) -> list[dict]:
    """Records of a JSONL file; lines that do not parse (a run killed mid-write) are skipped."""
    out = []
    if not path.exists():
        return out
    for line in path.read_text(errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def plot_losses(metrics: Sequence[dict], path: Path) -> bool:
    """loss, policy_loss, value_loss against step (one panel each); False when there is nothing to plot."""
    series = {k: [(float(r["step"]), float(r[k])) for r in metrics
                  if r.get(k) is not None and r.get("step") is not None and math.isfinite(float(r[k]))]
              for k in LOSS_KEYS}
    if not any(series.values()):
        return False
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, key in zip(axes, LOSS_KEYS):
        pts = series[key]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color="tab:blue", lw=1.2)
        ax.set_title(key)
        ax.set_xlabel("training step")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def checkpoint_step(spec_text: str, pins: dict[str, str]) -> int | None:
    """The training step of a player's network: from a ckpt_<step> file in its spec or its pinned file."""
    from azero.agents.spec import parse_player_spec

    try:
        spec = parse_player_spec(spec_text)
    except ValueError:
        return None
    if not spec.uses_network:
        return None
    for text in (pins.get(spec.checkpoint, ""), spec.checkpoint):
        m = _CKPT_STEP.search(Path(text).name) if text else None
        if m:
            return int(m.group(1))
    return None


def player_kind(spec_text: str) -> str:
    """The spec with its checkpoint replaced by CKPT: players of one kind form one curve."""
    from azero.agents.spec import parse_player_spec

    try:
        spec = parse_player_spec(spec_text)
    except ValueError:
        return spec_text
    if not spec.uses_network:
        return spec_text
    return spec_text.replace(spec.checkpoint, "CKPT", 1)


def positions_at(metrics: Sequence[dict], step: int) -> float | None:
    """Self-play positions written by the time the trainer reached `step` (last record at or before it)."""
    best = None
    for r in metrics:
        s, p = r.get("step"), r.get("positions")
        if s is not None and p is not None and float(s) <= step:
            best = float(p)
    return best


def plot_elo_progress(table: EloTable, pins: dict[str, str], metrics: Sequence[dict], path: Path) -> bool:
    """Elo against training step, self-play positions and wall-clock hours (the run's clock, continued
    across resumes); False when no player maps to a step. Axes without data are left out."""
    from azero.runs.clock import at_step, clock_from_records

    points: dict[str, list[tuple[int, float, float, float]]] = {}
    references = []
    for r in table.rows:
        if math.isnan(r.rating):
            continue
        step = checkpoint_step(r.name, pins)
        if step is None:
            references.append(r)
        else:
            points.setdefault(player_kind(r.name), []).append((step, r.rating, r.low, r.high))
    if not points:
        return False
    clock = clock_from_records(metrics)

    def hours_at(step: int) -> float | None:
        seconds = at_step(clock, step)[0]
        return None if seconds is None else seconds / 3600

    axes_x = [("training step", float)]
    steps = [s for pts in points.values() for s, *_ in pts]
    if any(positions_at(metrics, s) is not None for s in steps):
        axes_x.append(("self-play positions", lambda s: positions_at(metrics, s)))
    if any(hours_at(s) is not None for s in steps):
        axes_x.append(("wall clock (hours)", hours_at))
    plt = _plt()
    fig, axes = plt.subplots(1, len(axes_x), figsize=(6.2 * len(axes_x), 4.2), squeeze=False)
    for ax, (label, x_of) in zip(axes[0], axes_x):
        for kind, pts in sorted(points.items()):
            pts.sort()
            xs = [x_of(s) for s, *_ in pts]
            keep = [k for k, x in enumerate(xs) if x is not None]
            if not keep:
                continue
            x = [xs[k] for k in keep]
            y = [pts[k][1] for k in keep]
            err = [[pts[k][1] - pts[k][2] for k in keep], [pts[k][3] - pts[k][1] for k in keep]]
            ax.errorbar(x, y, yerr=err, fmt="o-", capsize=3, label=kind)
        for r in references:
            line = ax.axhline(r.rating, ls="--", lw=1, alpha=0.7)
            ax.annotate(r.name, (0.01, r.rating), xycoords=("axes fraction", "data"), fontsize=8,
                        color=line.get_color(), va="bottom")
        ax.set_xlabel(label)
        ax.set_ylabel(f"Elo ({table.anchor} = {table.anchor_value:g}), 95% CI")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def _find(run_dir: Path, name: str) -> list[Path]:
    root = run_dir / "eval"
    return sorted(root.rglob(name)) if root.is_dir() else []


def _rel(target: Path, base: Path) -> str:
    return Path(os.path.relpath(target.resolve(), base.resolve())).as_posix()


def _img(src: str, alt: str) -> str:
    return f'<img src="{html.escape(src)}" alt="{html.escape(alt)}" class="plot">'


def _elo_table_html(table: EloTable) -> str:
    rows = ["<table><tr><th>#</th><th>player</th><th>Elo</th><th>95% CI</th><th>games</th><th>score</th></tr>"]
    for k, r in enumerate(table.rows, 1):
        if math.isnan(r.rating):
            elo, ci = "-", "not connected"
        else:
            elo = f"{r.rating:.0f}"
            ci = "anchor" if r.name == table.anchor else f"[{r.low:.0f}, {r.high:.0f}]"
        pct = f"{100 * r.score / r.games:.1f}%" if r.games else "-"
        rows.append(f"<tr><td>{k}</td><td><code>{html.escape(r.name)}</code></td><td>{elo}</td><td>{ci}</td>"
                    f"<td>{r.games}</td><td>{pct}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


_STYLE = """
body { font-family: sans-serif; max-width: 1250px; margin: 1em auto; color: #222; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 1.6em; }
img.plot { max-width: 100%; border: 1px solid #ddd; margin: .4em 0; }
table { border-collapse: collapse; font-size: .9em; } td, th { border: 1px solid #ccc; padding: .2em .6em; }
.missing { color: #888; font-style: italic; } code { font-size: .9em; }
"""

# Counts the plots that really loaded (naturalWidth > 0) once the page is loaded.
_IMAGE_CHECK = """
<p id="image-check" class="missing">checking plots...</p>
<script>
window.addEventListener("load", function () {
  var imgs = document.querySelectorAll("img.plot"), ok = 0;
  for (var i = 0; i < imgs.length; i++) { if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++; }
  var p = document.getElementById("image-check");
  p.setAttribute("data-loaded", ok); p.setAttribute("data-total", imgs.length);
  p.textContent = (ok === imgs.length ? "all " + ok + " plots loaded" : (imgs.length - ok) + " of " + imgs.length + " plots failed to load");
});
</script>
"""


def build_report(run_dir: str | Path, *, out: str | Path | None = None, tournaments: Sequence[str | Path] = (),
                 compares: Sequence[str | Path] = (), anchor: str | None = None, anchor_value: float = 0.0) -> Path:
    """Write the HTML report (and its PNGs); returns the HTML path."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir} is not a directory (expected a run directory)")
    if not (run_dir / "config.yaml").is_file() and not (run_dir / "logs" / "metrics.jsonl").is_file():
        raise FileNotFoundError(f"{run_dir} is not a run directory: it has neither config.yaml nor "
                                "logs/metrics.jsonl (see `azero selfplay --run-dir`)")
    out = Path(out) if out is not None else run_dir / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    files = out.parent / f"{out.stem}_files"
    files.mkdir(exist_ok=True)
    base = out.parent
    parts = [f"<h1>azero run report: {html.escape(str(run_dir))}</h1>"]

    # --- summary
    metrics = read_jsonl(run_dir / "logs" / "metrics.jsonl")
    game_name = None
    if (run_dir / "config.yaml").exists():
        try:
            from omegaconf import OmegaConf

            game_name = OmegaConf.select(OmegaConf.load(run_dir / "config.yaml"), "game.name")
        except Exception:  # a report must render even from a damaged config; the game name is cosmetic
            game_name = None
    summary = []
    if game_name:
        summary.append(f"game <b>{html.escape(str(game_name))}</b>")
    if metrics:
        last = metrics[-1]
        for key, label in (("step", "training step"), ("games", "self-play games"), ("positions", "positions"),
                           ("time", "seconds")):
            if last.get(key) is not None:
                summary.append(f"{label} {float(last[key]):,.0f}")
    parts.append(f"<p>{', '.join(summary) if summary else 'no training records'}</p>")

    # --- losses
    parts.append("<h2>Training losses</h2>")
    if plot_losses(metrics, files / "losses.png"):
        parts.append(_img(_rel(files / "losses.png", base), "loss, policy loss and value loss against step"))
    else:
        parts.append(f'<p class="missing">no loss records in {html.escape(str(run_dir / "logs" / "metrics.jsonl"))}</p>')

    # --- Elo
    parts.append("<h2>Elo</h2>")
    tdirs = [Path(t) for t in tournaments] or [p.parent for p in _find(run_dir, "results.jsonl")]
    if not tdirs:
        parts.append(f'<p class="missing">no tournament results (run <code>azero tournament --out '
                     f'{html.escape(str(run_dir / "eval" / "NAME"))} ...</code> or pass --tournament DIR)</p>')
    for k, tdir in enumerate(tdirs):
        from azero.eval.tournament import RESULTS, read_results, result_triples

        records = read_results(tdir / RESULTS, repair=False).records
        parts.append(f"<h3>{html.escape(str(tdir))}: {len(records)} games</h3>")
        if not records:
            parts.append('<p class="missing">no finished games yet</p>')
            continue
        meta = {}
        if (tdir / "tournament.json").exists():
            try:
                meta = json.loads((tdir / "tournament.json").read_text())
            except ValueError:
                meta = {}
        triples = result_triples(records)
        names = {n for a, b, _ in triples for n in (a, b)}
        table = fit_elo(triples, anchor=anchor if anchor in names else None, anchor_value=anchor_value)
        parts.append(_elo_table_html(table))
        plot_elo(table, files / f"elo_{k}.png")
        parts.append(_img(_rel(files / f"elo_{k}.png", base), "Elo ratings with 95% intervals"))
        if plot_elo_progress(table, meta.get("checkpoints", {}), metrics, files / f"elo_progress_{k}.png"):
            parts.append(_img(_rel(files / f"elo_progress_{k}.png", base), "Elo over training steps, positions and wall clock"))
        else:
            parts.append('<p class="missing">no player is a checkpoint of a known step: no Elo-over-training plot</p>')
        disagreements = sum(bool(r.get("disagreement")) for r in records)
        if disagreements:
            parts.append(f"<p><b>{disagreements}</b> game(s) where an engine's final_score disagreed with "
                         f"Tromp-Taylor scoring (see results.jsonl, field score_checks)</p>")

    # --- raw vs search
    parts.append("<h2>Raw network vs search</h2>")
    cjsons = []
    for c in compares:
        c = Path(c)
        cjsons.append(c / "compare.json" if c.is_dir() else c)
    if not compares:
        cjsons = _find(run_dir, "compare.json")
    if not cjsons:
        parts.append('<p class="missing">no compare.json (run <code>azero compare CKPT --out '
                     f'{html.escape(str(run_dir / "eval" / "compare"))}</code> or pass --compare)</p>')
    for k, cj in enumerate(cjsons):
        from azero.eval.compare import format_table, plot_compare

        try:
            doc = json.loads(cj.read_text())
        except (OSError, ValueError) as e:
            parts.append(f'<p class="missing">{html.escape(str(cj))}: unreadable ({html.escape(str(e))})</p>')
            continue
        plot_compare(doc, files / f"compare_{k}.png")
        parts.append(f"<h3>{html.escape(str(cj))}</h3>")
        parts.append(_img(_rel(files / f"compare_{k}.png", base), "score and Elo against simulations"))
        parts.append(f"<pre>{html.escape(format_table(doc))}</pre>")

    # --- games
    parts.append("<h2>Sample self-play games</h2>")
    sgfs = sorted((run_dir / "sgf").glob("*.sgf"))[-MAX_SGF_LINKS:] if (run_dir / "sgf").is_dir() else []
    if sgfs:
        parts.append(f"<p>the newest {len(sgfs)} SGF files of {html.escape(str(run_dir / 'sgf'))}</p><ul>")
        parts += [f'<li><a href="{html.escape(_rel(p, base))}">{html.escape(p.name)}</a></li>' for p in reversed(sgfs)]
        parts.append("</ul>")
    else:
        parts.append(f'<p class="missing">no SGF files in {html.escape(str(run_dir / "sgf"))} '
                     f'(SGF samples are written for Go runs)</p>')

    page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>azero report</title>"
            f"<style>{_STYLE}</style></head><body>\n" + "\n".join(parts) + _IMAGE_CHECK + "</body></html>\n")
    out.write_text(page, encoding="utf-8")
    return out
