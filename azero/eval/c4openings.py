"""Connect four from every short opening, against a reference opponent, leaving out the openings
the perfect solver says are already lost for the agent's side.

    azero c4-openings --checkpoint shipped --sims 800 --opponent openspiel-mcts:1000 --plies 2

Every sequence of `plies` moves (7 x 7 = 49 for two) is played from both sides, `games` times
each (the opponent's random rollouts make repeats differ). Before a game, the solver values the
opening position for the agent's side: a lost one is not played but listed, since no agent can
win it against perfect play; the agent's win rate and score (draws half) on the rest carry 95%
Wilson intervals. Openings are written in the project's notation, the columns 1-7 ("44": both
players in the middle column).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
from pathlib import Path
from typing import Callable

from azero.eval.arena import play_games
from azero.eval.stats import wilson_interval
from azero.games.c4solver import Solver, actions_to_moves, solve


@dataclasses.dataclass
class OpeningResult:
    opening: str
    agent_first: bool
    value: int
    """Solved value of the opening for the agent's side: +1 won, 0 drawn, -1 lost with perfect play."""
    scores: list[float] = dataclasses.field(default_factory=list)
    """The agent's score of each game played from it (1 win, 0.5 draw, 0 loss)."""


def openings(plies: int) -> list[list[int]]:
    """Every sequence of `plies` columns (0-based actions); none can end a game below 7 plies."""
    if not 0 <= plies <= 6:
        raise ValueError(f"plies must be in [0, 6] (a shorter opening cannot end the game), got {plies}")
    return [list(seq) for seq in itertools.product(range(7), repeat=plies)]


def mirror(moves: str) -> str:
    """The left-right mirror of an opening ('12' -> '76'): same value (the board is symmetric)."""
    return "".join(str(8 - int(c)) for c in moves)


def solve_openings(plies: int, *, log: Callable[[str], None] = print, progress: str | Path | None = None,
                   tt_entries: int | None = None) -> dict[str, int]:
    """{opening: solved value for the player to move} of every opening; mirrors solved once. Slow:
    the solver has no opening book, and a 2-move position takes from seconds to minutes.

    progress: a JSON file that gets every value the moment it is solved and is read first, so a
    killed solve resumes where it stopped. tt_entries: a Solver with its own transposition table
    of that size (near the empty board a larger table saves re-searches) instead of the thread's.
    """
    solve_one = Solver(tt_entries).solve if tt_entries else solve
    values: dict[str, int] = {}
    if progress is not None and Path(progress).is_file():
        try:
            doc = json.loads(Path(progress).read_text())
            values = {k: int(v) for k, v in doc["values"].items()}
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"{progress}: not a progress file of solve_openings ({type(e).__name__}: {e}); "
                             f"remove it to solve afresh") from e
        if doc.get("plies") != plies or not all(len(k) == plies and v in (-1, 0, 1) for k, v in values.items()):
            raise ValueError(f"{progress}: holds values that are not {plies}-move openings; remove it to solve afresh")
        log(f"{progress}: {len(values)} opening(s) solved before, resuming")
    todo = [actions_to_moves(seq) for seq in openings(plies)]
    for k, moves in enumerate(todo):
        if moves in values:
            continue
        if mirror(moves) in values:
            values[moves] = values[mirror(moves)]
            continue
        t0 = time.perf_counter()
        values[moves] = int(solve_one(moves))
        if progress is not None:
            write({"plies": plies, "values": values}, progress)
        log(f"solved {moves or 'the start'}: {values[moves]:+d} for the mover ({time.perf_counter() - t0:.0f} s; "
            f"{k + 1}/{len(todo)})")
    return values


def table_file(plies: int) -> Path:
    """The solved table shipped with azero for `plies` (experiments/c4_openings.py writes it)."""
    return Path(__file__).with_name(f"c4_openings_{plies}.json")


def opening_values(plies: int, *, cache_dir: str | Path | None = None,
                   log: Callable[[str], None] = print) -> dict[str, int]:
    """{opening: value for the mover}: from the shipped table, else the cache, else solved (and cached)."""
    want = {actions_to_moves(seq) for seq in openings(plies)}
    cache = Path(cache_dir or Path.home() / ".cache" / "azero" / "c4openings") / f"plies{plies}.json"
    for path in (table_file(plies), cache):
        if path.is_file():
            doc = json.loads(path.read_text())
            values = {k: int(v) for k, v in doc.get("values", {}).items()}
            if set(values) == want and all(v in (-1, 0, 1) for v in values.values()):
                return values
            log(f"{path}: not a complete table of {plies}-move openings; solving afresh")
    log(f"solving the {len(want)} {plies}-move openings (mirrors once): minutes to hours; cached in {cache}")
    values = solve_openings(plies, log=log)
    write({"plies": plies, "values": values, "view": "player to move"}, cache)
    return values


def classify(plies: int, *, log: Callable[[str], None] = print) -> list[OpeningResult]:
    """Each (opening, agent side) with the solved value for the agent (the table: mover's view)."""
    table = opening_values(plies, log=log)
    out = []
    for seq in openings(plies):
        moves = actions_to_moves(seq)
        v = table[moves]  # for the player to move: the first player when plies is even
        mover_first = plies % 2 == 0
        for agent_first in (True, False):
            out.append(OpeningResult(moves, agent_first, v if agent_first == mover_first else -v))
    return out


def run_openings(game, agent, opponent, *, plies: int = 2, games: int = 1, parallel: int = 98,
                 log: Callable[[str], None] = print) -> dict:
    """Play the agent against the opponent from every opening not lost for the agent (module docstring)."""
    if games < 1 or parallel < 1:
        raise ValueError(f"games and parallel must be >= 1, got {games}, {parallel}")
    results = classify(plies, log=log)
    todo = [(k, r) for k, r in enumerate(results) if r.value >= 0 for _ in range(games)]
    log(f"{len(results)} (opening, side) pairs; {sum(r.value < 0 for r in results)} lost for the agent's side "
        f"are left out; {len(todo)} games to play")
    done = 0
    for start in range(0, len(todo), parallel):
        chunk = todo[start: start + parallel]
        # play_games puts A first in even-numbered games: pick each game's index by the agent's side.
        indices = [2 * (start + j) + (0 if r.agent_first else 1) for j, (_, r) in enumerate(chunk)]
        seqs = [[int(c) - 1 for c in r.opening] for _, r in chunk]
        records = play_games(game, agent, opponent, indices, openings=seqs)
        by_index = {rec.index: rec for rec in records}
        for idx, (k, r) in zip(indices, chunk):
            results[k].scores.append(float(by_index[idx].a_score))
        done += len(chunk)
        log(f"{done}/{len(todo)} games")
    return summarise(results, plies=plies, games=games, agent=agent.name, opponent=opponent.name)


def summarise(results: list[OpeningResult], **info) -> dict:
    played = [s for r in results for s in r.scores]
    n = len(played)
    wins, draws = sum(s == 1.0 for s in played), sum(s == 0.5 for s in played)
    losses = n - wins - draws
    win_rate = wins / n if n else 0.0
    score = (wins + 0.5 * draws) / n if n else 0.0
    excluded = [r for r in results if r.value < 0]
    return {**info, "games_played": n, "wins": wins, "draws": draws, "losses": losses,
            "win_rate": win_rate, "win_rate_ci": list(wilson_interval(win_rate, n)),
            "score": score, "score_ci": list(wilson_interval(score, n)),
            "excluded": {"count": len(excluded),
                         "agent_first": [r.opening for r in excluded if r.agent_first],
                         "agent_second": [r.opening for r in excluded if not r.agent_first]},
            "lost_games": [{"opening": r.opening, "agent_first": r.agent_first, "value": r.value}
                           for r in results for s in r.scores if s == 0.0],
            "openings": [dataclasses.asdict(r) for r in results]}


def format_summary(doc: dict) -> str:
    ex = doc["excluded"]
    lines = [f"{doc['agent']} vs {doc['opponent']} from every {doc['plies']}-move opening, both sides, "
             f"{doc['games']} game(s) each:",
             f"  {doc['wins']} wins, {doc['draws']} draws, {doc['losses']} losses in {doc['games_played']} games: "
             f"wins {100 * doc['win_rate']:.1f}% [{100 * doc['win_rate_ci'][0]:.1f}, {100 * doc['win_rate_ci'][1]:.1f}], "
             f"score {100 * doc['score']:.1f}% [{100 * doc['score_ci'][0]:.1f}, {100 * doc['score_ci'][1]:.1f}]",
             f"  left out, lost for the agent under perfect play: {ex['count']} "
             f"(as first player: {' '.join(ex['agent_first']) or 'none'}; "
             f"as second player: {' '.join(ex['agent_second']) or 'none'})"]
    if doc["lost_games"]:
        lines.append("  games lost: " + ", ".join(
            f"{g['opening']} ({'first' if g['agent_first'] else 'second'}, solved {'won' if g['value'] > 0 else 'drawn'})"
            for g in doc["lost_games"]))
    return "\n".join(lines)


def write(doc: dict, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(path)
    return path

