"""One figure for any strength measure over a run: against self-play positions and wall clock.

Both learning curves (connect-four solver accuracy, Elo from a tournament) are read the
same way, so they share this layout: two panels with a shared y axis, error bars for the
95% intervals, and fixed references (random play, a raw network) as dotted lines with
their interval as a shaded band.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

X_AXES = (("positions", "self-play positions"), ("hours", "wall clock (hours)"))


@dataclass
class CurvePoint:
    positions: float | None
    hours: float | None
    y: float
    low: float | None = None
    high: float | None = None


@dataclass
class Series:
    label: str
    points: list[CurvePoint] = field(default_factory=list)


@dataclass
class Reference:
    label: str
    y: float
    low: float | None = None
    high: float | None = None


def plot_over_training(series: Sequence[Series], path: str | Path, *, ylabel: str, title: str,
                       references: Sequence[Reference] = (), legend_loc: str = "lower right") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, (key, xlabel) in zip(axes, X_AXES):
        for s in series:
            pts = [p for p in s.points if getattr(p, key) is not None]
            if not pts:
                continue
            err = [[p.y - (p.low if p.low is not None else p.y) for p in pts],
                   [(p.high if p.high is not None else p.y) - p.y for p in pts]]
            ax.errorbar([getattr(p, key) for p in pts], [p.y for p in pts], yerr=err, marker="o", ms=3,
                        capsize=2, label=s.label)
        for i, ref in enumerate(references):
            color = "grey" if len(references) == 1 else f"C{i + len(series)}"
            ax.axhline(ref.y, color=color, ls=":", label=ref.label)
            if ref.low is not None and ref.high is not None:
                ax.axhspan(ref.low, ref.high, color=color, alpha=0.08)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(ylabel)
    axes[0].legend(loc=legend_loc, fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
