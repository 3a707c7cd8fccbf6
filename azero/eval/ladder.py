"""`azero ladder`: one Go player against GNU Go's levels, with intervals, more games where it is close.

    azero ladder --player mcts:CKPT@800 [--levels 1,5,10] [--games 40] [--max-games 160] --out DIR

Each level is a gauntlet tournament in DIR/gnugo-LEVEL (azero tournament: GNU Go 3.8 over GTP,
Chinese rules, --capture-all-dead, Tromp-Taylor scoring cross-checked with GNU Go's final_score,
colours alternating, every game saved as SGF, resumable). A level whose 95% Wilson interval of
the score still contains 50% after --games games gets --step more, up to --max-games, so the
answer to "does it beat level L" is a yes or a no wherever the games allow. DIR/ladder.json and
DIR/ladder.txt hold the summary: per level the games, wins, draws and losses, the score with its
interval, wins with each colour, and the Elo difference to that level with its interval.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Callable, Sequence

from azero.eval.stats import wilson_interval

MAX_ELO = 800.0
"""Elo differences are clipped here: a score of 0 or 1 has no finite difference."""


def elo_difference(score: float) -> float:
    """400 log10(s / (1 - s)), clipped to +-MAX_ELO."""
    if score <= 0.0:
        return -MAX_ELO
    if score >= 1.0:
        return MAX_ELO
    return max(-MAX_ELO, min(MAX_ELO, 400.0 * math.log10(score / (1.0 - score))))


def level_summary(records: Sequence[dict], player: str, level: int) -> dict:
    """The player's record against one GNU Go level from a tournament's results."""
    wins = draws = losses = 0
    by_colour = {"black": [0, 0], "white": [0, 0]}  # [wins, games] with that colour
    for r in records:
        if player not in r["pair"]:
            continue
        score = float(r["a_score"]) if r["pair"][0] == player else 1.0 - float(r["a_score"])
        colour = "black" if r["first"] == player else "white"
        by_colour[colour][1] += 1
        if score == 1.0:
            wins += 1
            by_colour[colour][0] += 1
        elif score == 0.0:
            losses += 1
        else:
            draws += 1
    n = wins + draws + losses
    score = (wins + 0.5 * draws) / n if n else 0.0
    low, high = wilson_interval(score, n)
    return {"level": level, "games": n, "wins": wins, "draws": draws, "losses": losses,
            "score": round(score, 4), "low": round(low, 4), "high": round(high, 4),
            "wins_as_black": f"{by_colour['black'][0]}/{by_colour['black'][1]}",
            "wins_as_white": f"{by_colour['white'][0]}/{by_colour['white'][1]}",
            "elo": round(elo_difference(score), 1), "elo_low": round(elo_difference(low), 1),
            "elo_high": round(elo_difference(high), 1)}


def format_ladder(doc: dict) -> str:
    lines = [f"{doc['player']} against GNU Go 3.8 (Chinese rules, Tromp-Taylor, 95% Wilson intervals)"]
    for s in doc["levels"]:
        verdict = ("wins" if s["low"] > 0.5 else "loses" if s["high"] < 0.5 else "even (interval holds 50%)")
        lines.append(f"  level {s['level']:>2}: {s['wins']}-{s['draws']}-{s['losses']} of {s['games']}, score "
                     f"{100 * s['score']:.1f}% [{100 * s['low']:.1f}, {100 * s['high']:.1f}], Elo {s['elo']:+.0f} "
                     f"[{s['elo_low']:+.0f}, {s['elo_high']:+.0f}], as black {s['wins_as_black']}, as white "
                     f"{s['wins_as_white']}: {verdict}")
    lines.append(f"  {doc['seconds'] / 3600:.2f} h wall, {doc['cpu_seconds'] / 3600:.2f} CPU h (this process; GNU Go's "
                 f"own processes not counted)")
    return "\n".join(lines)


def run_ladder(player: str, *, out_dir: str | Path, levels: Sequence[int] = (1, 5, 10), games: int = 40,
               max_games: int = 160, step: int = 20, parallel: int = 4, seed: int = 0, opening_moves: int = 2,
               device: str = "auto", threads: int | None = 1, precision: str = "auto", backend: str = "auto",
               log: Callable[[str], None] | None = None) -> dict:
    from azero.eval.tournament import read_results, run_tournament

    log = log or (lambda line: print(line, flush=True))
    if games < 2 or games % 2 or step < 2 or step % 2:
        raise ValueError(f"--games and --step must be even and >= 2 (colours alternate), got {games} and {step}")
    if max_games < games:
        raise ValueError(f"--max-games ({max_games}) must be at least --games ({games})")
    bad = [lv for lv in levels if not 0 <= lv <= 10]
    if not levels or bad:
        raise ValueError(f"GNU Go levels are 0..10, got {list(levels)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t0, c0 = time.perf_counter(), time.process_time()
    summaries = []
    for level in levels:
        tdir, n = out / f"gnugo-{level}", games
        while True:
            run_tournament(tdir, game_name="go9x9", players=[f"gnugo:{level}"], gauntlet=player, games_per_pair=n,
                           seed=seed, parallel=parallel, opening_moves=opening_moves, device=device,
                           threads=threads, precision=precision, backend=backend, log=log)
            summary = level_summary(read_results(tdir / "results.jsonl").records, player, level)
            if summary["low"] <= 0.5 <= summary["high"] and n < max_games:
                n = min(max_games, n + step)
                log(f"level {level}: {100 * summary['score']:.1f}% [{100 * summary['low']:.1f}, "
                    f"{100 * summary['high']:.1f}] holds 50%: {n} games")
                continue
            break
        summaries.append(summary)
    doc = {"player": player, "levels": summaries, "seconds": round(time.perf_counter() - t0, 1),
           "cpu_seconds": round(time.process_time() - c0, 1)}
    previous = out / "ladder.json"
    if previous.is_file():  # a resumed ladder: the clock adds up
        try:
            old = json.loads(previous.read_text())
            if old.get("player") == player:
                doc["seconds"] += old.get("seconds", 0.0)
                doc["cpu_seconds"] += old.get("cpu_seconds", 0.0)
        except ValueError:
            pass
    previous.write_text(json.dumps(doc, indent=1) + "\n")
    (out / "ladder.txt").write_text(format_ladder(doc) + "\n")
    return doc
