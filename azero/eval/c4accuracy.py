"""Connect-four move accuracy against a perfect solver: does the agent keep the game-theoretic value?

A test position is the result of `depth` uniformly random moves from the start
(seeded, non-terminal, deduplicated up to mirror symmetry), solved by
azero.games.c4solver. Only positions where the choice matters are kept: those
in which some legal move keeps the position's value (win stays win, draw stays
draw) and some other does not; lost positions never qualify, since every move
keeps a loss. An agent's move is correct iff it keeps the value, and

    accuracy = correct moves / test positions,   95% Wilson score interval,

per depth and over all depths, separately for each agent: random moves (the
baseline; its exact expectation, the mean share of value-keeping legal moves,
is reported too), the raw network (argmax of the policy) and network + search
at each simulation budget (PUCT or Gumbel, no root noise).

Test sets are expensive to solve at shallow depths (1-3 s per 8-stone
position on a slow CPU core, so 1000 of them take tens of minutes; depth 12 and
deeper take seconds) and cheap to store, so each (seed, depth, count) set is
cached as a JSON file and reused by later runs. The candidate stream depends
only on (seed, depth), so the set for one depth is the same whatever other
depths a run asks for.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Callable, Iterator, Sequence

import numpy as np

from azero.agents.player import Player
from azero.agents.simple import RandomPlayer, RawNetworkPlayer
from azero.eval.stats import wilson_interval
from azero.games.base import NO_ACTION, States
from azero.games.c4solver import actions_to_moves, thread_solver
from azero.games.connect4 import Connect4Game

TESTSET_FORMAT = "azero-c4-testset-1"
REPORT_FORMAT = "azero-c4-accuracy-1"
WIDTH = 7
HEIGHT = 6
GEN_BATCH = 64
"""Playouts drawn per batch; fixed, so the candidate stream depends on (seed, depth) only."""
MAX_BARREN_BATCHES = 200
"""The candidate stream of a depth ends after this many batches in a row brought no new position
(tiny depths run out of distinct positions: depth 1 has only 4 up to mirroring)."""


@dataclasses.dataclass(frozen=True)
class TestSet:
    """Solved test positions of one depth, all of them positions where the choice matters."""

    seed: int
    depth: int
    moves: tuple[str, ...]
    """[N] the positions as column sequences ('4453', 1-based columns)."""
    value: np.ndarray
    """int8 [N]: the position's value for the player to move (+1 win or 0 draw)."""
    keeps: np.ndarray
    """bool [N, 7]: the columns whose move keeps the value (False for full columns)."""
    candidates: int
    """Distinct non-terminal positions solved to find these N (the rest: the choice did not matter);
    -1 when the set is a prefix of a larger cached one (not recorded)."""
    exhausted: bool = False
    """True when the depth ran out of distinct positions before N reached the requested count."""

    def __len__(self) -> int:
        return len(self.moves)

    def to_json(self, count: int) -> dict:
        return {"format": TESTSET_FORMAT, "seed": self.seed, "depth": self.depth, "count": count,
                "candidates": self.candidates, "exhausted": self.exhausted,
                "positions": [[m, int(v), "".join("1" if k else "0" for k in ks)]
                              for m, v, ks in zip(self.moves, self.value, self.keeps)]}

    @staticmethod
    def from_json(doc: dict) -> "TestSet":
        rows = doc["positions"]
        keeps = np.array([[ch == "1" for ch in ks] for _, _, ks in rows], dtype=bool).reshape(len(rows), WIDTH)
        return TestSet(seed=int(doc["seed"]), depth=int(doc["depth"]), moves=tuple(m for m, _, _ in rows),
                       value=np.array([v for _, v, _ in rows], dtype=np.int8), keeps=keeps,
                       candidates=int(doc["candidates"]), exhausted=bool(doc["exhausted"]))


# ---------------------------------------------------------------------- test positions


def _canonical(board: np.ndarray) -> bytes:
    # A position and its mirror image test the same knowledge: count them once.
    return min(board.tobytes(), np.ascontiguousarray(board[:, ::-1]).tobytes())


def candidate_positions(seed: int, depth: int) -> Iterator[str]:
    """Distinct (up to mirroring) non-terminal positions after `depth` uniformly random moves, in a
    stream fixed by (seed, depth); ends when MAX_BARREN_BATCHES batches in a row found nothing new."""
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    if not 0 < depth < WIDTH * HEIGHT:
        raise ValueError(f"depth must lie in [1, {WIDTH * HEIGHT - 1}], got {depth}")
    game = Connect4Game()
    rng = np.random.default_rng([seed, depth])
    seen: set[bytes] = set()
    barren = 0
    while barren < MAX_BARREN_BATCHES:
        states = game.new_states(GEN_BATCH)
        paths = np.empty((GEN_BATCH, depth), np.int32)
        for ply in range(depth):
            legal = states.legal_mask()     # all False once a game is over: it stays over
            # argmax of uniform noise over the legal columns is a uniform legal column
            actions = np.where(legal, rng.random(legal.shape), -1.0).argmax(axis=1).astype(np.int32)
            actions[~legal.any(axis=1)] = NO_ACTION
            states.apply(actions)
            paths[:, ply] = actions
        complete = ~states.terminal() & (paths != NO_ACTION).all(axis=1)
        fresh = 0
        for b in np.flatnonzero(complete):
            key = _canonical(states.board(int(b)))
            if key not in seen:
                seen.add(key)
                fresh += 1
                yield actions_to_moves(paths[b])
        barren = 0 if fresh else barren + 1


def _solve_one(moves: str) -> tuple[int, np.ndarray]:
    # Runs on a pool thread: each thread has its own Solver (its own transposition table).
    return thread_solver().optimal_moves(moves)


def _legal_columns(moves: str) -> np.ndarray:
    counts = np.bincount([int(ch) - 1 for ch in moves], minlength=WIDTH)
    return counts < HEIGHT


def build_test_set(seed: int, depth: int, count: int, *, workers: int = 2,
                   log: Callable[[str], None] | None = None, start: TestSet | None = None) -> TestSet:
    """The first `count` candidates of (seed, depth) where the choice matters, solved.

    Candidates are solved `workers` at a time on threads (the solver releases the GIL); which
    positions are kept depends only on the stream order, never on the threads. `start`, a smaller
    set of the same (seed, depth) that records how many candidates it took, is extended rather
    than solved again.
    """
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    stream = candidate_positions(seed, depth)
    moves_out: list[str] = []
    values: list[int] = []
    keeps_out: list[np.ndarray] = []
    candidates = 0
    if start is not None and (start.seed, start.depth) == (seed, depth) and start.candidates >= 0 \
            and not start.exhausted and len(start) < count:
        moves_out, values, keeps_out = list(start.moves), [int(v) for v in start.value], list(start.keeps)
        candidates = start.candidates
        next(itertools.islice(stream, candidates, candidates), None)  # skip what start already solved
    started = last_log = time.monotonic()
    exhausted = False
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="c4solve") as pool:
        while len(moves_out) < count:
            # Small chunks: little solved in vain past the count, and regular progress lines.
            chunk = list(itertools.islice(stream, min(count - len(moves_out), 8 * max(1, workers))))
            if not chunk:
                exhausted = True
                break
            for moves, (value, keeps) in zip(chunk, pool.map(_solve_one, chunk)):
                candidates += 1
                if (keeps != _legal_columns(moves)).any():
                    moves_out.append(moves)
                    values.append(value)
                    keeps_out.append(keeps)
                    if len(moves_out) == count:
                        break
            now = time.monotonic()
            if log is not None and (now - last_log > 10 or len(moves_out) == count):
                last_log = now
                log(f"depth {depth}: solved {candidates} positions, kept {len(moves_out)}/{count} "
                    f"({now - started:.0f}s)")
    keeps_arr = np.array(keeps_out, dtype=bool).reshape(len(keeps_out), WIDTH)
    return TestSet(seed=seed, depth=depth, moves=tuple(moves_out), value=np.array(values, np.int8),
                   keeps=keeps_arr, candidates=candidates, exhausted=exhausted)


SHIPPED_DIR = Path(__file__).with_name("c4_testsets")
"""Test sets shipped with azero (experiments/c4_testsets.py writes them): seed 0, 1,000 positions per
depth 8/12/16/20, so a new machine scores a network at once instead of solving for half an hour."""


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "azero" / "c4accuracy"


def cache_file(cache_dir: str | os.PathLike, seed: int, depth: int, count: int) -> Path:
    return Path(cache_dir) / f"c4_testset_seed{seed}_depth{depth}_n{count}.json"


def load_test_set(seed: int, depth: int, count: int, *, cache_dir: str | os.PathLike | None = None,
                  workers: int = 2, log: Callable[[str], None] | None = None,
                  shipped_dir: str | os.PathLike | None = SHIPPED_DIR) -> tuple[TestSet, Path | None]:
    """The (seed, depth, count) test set: the shipped one (or a prefix of a larger shipped one), else
    from the cache, else built and then cached (cache_dir None: not cached)."""
    if shipped_dir is not None and Path(shipped_dir).is_dir():
        found = _read_set(cache_file(shipped_dir, seed, depth, count), seed, depth, count) \
            or _cached_prefix(Path(shipped_dir), seed, depth, count)
        if found is not None:
            return found
    path = cache_file(cache_dir, seed, depth, count) if cache_dir is not None else None
    if path is not None and path.is_file():
        found = _read_set(path, seed, depth, count)
        if found is not None:
            return found
        if log is not None:
            log(f"depth {depth}: ignoring unusable cache file {path}")
    if path is not None:
        larger = _cached_prefix(Path(cache_dir), seed, depth, count)
        if larger is not None:
            return larger
    test_set = build_test_set(seed, depth, count, workers=workers, log=log,
                              start=None if path is None else _smaller_set(Path(cache_dir), seed, depth, count))
    if path is not None:
        from azero.train.atomic import write_atomic

        path.parent.mkdir(parents=True, exist_ok=True)
        blob = json.dumps(test_set.to_json(count), separators=(",", ":")).encode()
        write_atomic(path, lambda f: f.write(blob))
    return test_set, path


def _read_set(path: Path, seed: int, depth: int, count: int) -> tuple[TestSet, Path] | None:
    """The test set stored in `path` if it is exactly (seed, depth, count); None if absent, unreadable
    or another set (a damaged or foreign file is never trusted)."""
    try:
        doc = json.loads(path.read_text())
        if (doc.get("format"), doc.get("seed"), doc.get("depth"), doc.get("count")) == \
                (TESTSET_FORMAT, seed, depth, count):
            return TestSet.from_json(doc), path
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


def _smaller_set(cache_dir: Path, seed: int, depth: int, count: int) -> TestSet | None:
    """The largest stored set of (seed, depth) below `count` that records its candidates, to extend."""
    best = None
    for f in cache_dir.glob(f"c4_testset_seed{seed}_depth{depth}_n*.json"):
        n = f.stem.rsplit("_n", 1)[-1]
        if n.isdigit() and int(n) < count:
            found = _read_set(f, seed, depth, int(n))
            if found is not None and found[0].candidates >= 0 and (best is None or len(found[0]) > len(best)):
                best = found[0]
    return best


def _cached_prefix(cache_dir: Path, seed: int, depth: int, count: int) -> tuple[TestSet, Path] | None:
    """The first `count` positions of a larger stored set of (seed, depth) in `cache_dir`, if one exists.

    The candidate stream depends only on (seed, depth), so they are exactly the set of
    `count`. Its `candidates` is -1: how many candidates that prefix needed was not recorded.
    """
    sizes = []
    for f in cache_dir.glob(f"c4_testset_seed{seed}_depth{depth}_n*.json"):
        n = f.stem.rsplit("_n", 1)[-1]
        if n.isdigit() and int(n) > count:
            sizes.append(int(n))
    for n in sorted(sizes):
        path = cache_file(cache_dir, seed, depth, n)
        found = _read_set(path, seed, depth, n)
        if found is None:
            continue
        full = found[0]
        if len(full) < count and not full.exhausted:
            continue
        k = min(count, len(full))
        return TestSet(seed=seed, depth=depth, moves=full.moves[:k], value=full.value[:k], keeps=full.keeps[:k],
                       candidates=-1, exhausted=full.exhausted and k == len(full)), path
    return None


# ---------------------------------------------------------------------- agents


class SolverPlayer(Player):
    """Perfect play: the most central column among those that keep the solved value."""

    name = "solver"

    def act(self, slots, states: States) -> np.ndarray:
        order = np.argsort(np.abs(np.arange(WIDTH) - WIDTH // 2), kind="stable")  # 3, 2, 4, 1, 5, 0, 6
        out = np.empty(len(states), np.int32)
        for b in range(len(states)):
            _, keeps = thread_solver().optimal_moves(states.board(b))
            out[b] = order[np.flatnonzero(keeps[order])[0]]
        return out


def test_states(moves: Sequence[str], game: Connect4Game | None = None) -> States:
    """Connect4States holding the positions `moves` (column sequences), one row each; `game` picks
    the feature set they encode (None: basic)."""
    game = game if game is not None else Connect4Game()
    states = game.new_states(len(moves))
    length = max((len(m) for m in moves), default=0)
    paths = np.full((len(moves), max(length, 1)), NO_ACTION, np.int32)
    for i, m in enumerate(moves):
        paths[i, :len(m)] = [int(ch) - 1 for ch in m]
    states.apply_paths(paths)
    return states


def choose_moves(player: Player, moves: Sequence[str], *, batch: int = 64,
                 game: Connect4Game | None = None) -> np.ndarray:
    """int32 [N]: the player's move (0-based column) in each position, asked `batch` positions at a
    time, as states of `game` (its feature set: the richest any agent's network reads)."""
    out = np.empty(len(moves), np.int32)
    for start in range(0, len(moves), batch):
        chunk = moves[start:start + batch]
        slots = np.arange(len(chunk), dtype=np.int64)
        player.start(len(chunk))
        out[start:start + len(chunk)] = player.act(slots, test_states(chunk, game))
        player.finish(slots)
    return out


# ---------------------------------------------------------------------- scoring


def _tally(correct: np.ndarray) -> dict:
    # accuracy None (JSON null) when there is nothing to score, e.g. no drawn test positions
    n = int(correct.size)
    k = int(correct.sum())
    lo, hi = wilson_interval(k / n if n else 0.0, n)
    return {"n": n, "correct": k, "accuracy": k / n if n else None, "ci95": [lo, hi]}


def expected_random(test_set: TestSet) -> np.ndarray:
    """float64 [N]: the chance that a uniformly random legal move keeps the value, per position."""
    legal = np.array([_legal_columns(m) for m in test_set.moves], dtype=bool).reshape(len(test_set), WIDTH)
    return test_set.keeps.sum(axis=1) / np.maximum(legal.sum(axis=1), 1)


def evaluate_agents(agents: Sequence[Player], test_sets: Sequence[TestSet], *, batch: int = 64,
                    log: Callable[[str], None] | None = None, game: Connect4Game | None = None) -> list[dict]:
    """One record per agent: accuracy per depth (and per position value) and over all depths; the
    positions are states of `game` (None: basic features)."""
    records = []
    for agent in agents:
        started = time.monotonic()
        by_depth, parts, values = {}, [], []
        for ts in test_sets:
            chosen = choose_moves(agent, list(ts.moves), batch=batch, game=game)
            correct = ts.keeps[np.arange(len(ts)), chosen]
            by_depth[str(ts.depth)] = _tally(correct)
            parts.append(correct)
            values.append(ts.value)
        correct = np.concatenate(parts) if parts else np.zeros(0, bool)
        value = np.concatenate(values) if values else np.zeros(0, np.int8)
        records.append({"name": agent.name, "by_depth": by_depth, "overall": _tally(correct),
                        "by_value": {"win": _tally(correct[value == 1]), "draw": _tally(correct[value == 0])}})
        if log is not None:
            log(f"{agent.name}: {records[-1]['overall']['correct']}/{records[-1]['overall']['n']} correct "
                f"({time.monotonic() - started:.0f}s)")
    return records


def format_report(doc: dict) -> str:
    """The accuracy table: one block per depth plus 'all', one row per agent."""
    def pct(x: float | None) -> str:
        return "  n/a" if x is None else f"{100 * x:5.1f}%"

    # The agent column fits the longest name (specs such as mcts:shipped@800:graph=true run long).
    width = max([20] + [len(rec["name"]) for rec in doc["agents"]])
    lines = [f"connect four: moves that keep the solved value (win stays win, draw stays draw); seed {doc['seed']}",
             "test positions: random playouts of each depth where the choice matters; 95% Wilson intervals", "",
             f"{'depth':>5}  {'positions':>9}  {'agent':<{width}} {'accuracy':>8}  95% CI"]
    keys = [str(d) for d in doc["depths"]] + ["all"]
    for key in keys:
        first = True
        for rec in doc["agents"]:
            t = rec["overall"] if key == "all" else rec["by_depth"][key]
            lo, hi = t["ci95"]
            head = f"{key:>5}  {t['n']:>9}" if first else f"{'':>5}  {'':>9}"
            lines.append(f"{head}  {rec['name']:<{width}} {pct(t['accuracy']):>8}  [{pct(lo)}, {pct(hi)}]")
            first = False
    exp = doc["random_expected"]
    lines.append("")
    lines.append("random moves, expected accuracy: " + "  ".join(f"{k}: {pct(exp[k]).strip()}" for k in keys))
    return "\n".join(lines)


def run_c4_accuracy(*, checkpoint: str | None = None, simulations: Sequence[int] = (100, 400),
                    positions: int = 1000, depths: Sequence[int] = (8, 12, 16, 20), seed: int = 0,
                    algorithm: str = "puct", out: str | os.PathLike | None = None,
                    cache_dir: str | os.PathLike | None = None, cache: bool = True, workers: int | None = None,
                    batch: int = 64,
                    device: str = "auto", threads: int | None = 1, precision: str = "auto", backend: str = "auto",
                    extra_agents: Sequence[Player] = (), solver: bool = False, factory=None, game=None,
                    stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> dict:
    """Build (or load) the test sets, evaluate the agents, print the table, write JSON to `out`.

    Agents: random; with a network the raw network and network + search at each budget, without one
    search on a uniform evaluator (priors uniform, value 0); then `extra_agents`. `solver`: the searches
    use MCTS-Solver (SearchConfig.solver). `checkpoint` follows
    --checkpoint's convention (agents/checkpoints.py): None is the shipped network, 'none' no network.
    Test sets are cached in cache_dir (None: default_cache_dir()) unless cache is False; `workers`
    solver threads build missing ones (None: one per CPU core). `factory`: the PlayerFactory that
    built `extra_agents`, whose evaluator for the checkpoint is then shared rather than loaded again.
    `game`: the connect-four game whose feature set every agent's network can read (the factory's);
    None: the checkpoint's own (agents/checkpoints.game_for).
    """
    from azero.agents.mcts import MctsPlayer
    from azero.search.config import play_config

    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr

    def log(msg: str) -> None:
        print(f"azero c4-accuracy: {msg}", file=stderr, flush=True)

    depths = list(depths)
    if not depths:
        raise ValueError("at least one depth is needed")
    sims = sorted({int(s) for s in simulations if int(s) > 0})
    workers = workers or os.cpu_count() or 1
    cache_at = (cache_dir if cache_dir is not None else default_cache_dir()) if cache else None

    test_sets, cache_files = [], {}
    for d in depths:
        ts, path = load_test_set(seed, d, positions, cache_dir=cache_at, workers=workers, log=log)
        if ts.exhausted:
            log(f"depth {d}: only {len(ts)} distinct positions where the choice matters exist in this stream")
        test_sets.append(ts)
        cache_files[str(d)] = str(path) if path is not None else None

    from azero.agents.checkpoints import checkpoint_planes, game_for, load_evaluator, resolve_checkpoint

    agents: list[Player] = [RandomPlayer(seed=seed, name="random")]
    path = resolve_checkpoint(checkpoint, "connect4")
    if game is None:
        game = game_for("connect4", [] if path is None else [checkpoint_planes(path)])
    if path is not None and factory is not None:
        evaluator = factory.evaluator(str(path))
    else:
        evaluator = load_evaluator(path, game=game, device=device, threads=threads, precision=precision,
                                   backend=backend, no_network="uniform").evaluator
    if path is not None:
        if checkpoint is None:
            log(f"no --checkpoint: the shipped network {path}")
        agents.append(RawNetworkPlayer(evaluator, name="raw"))
        prefix = ""
    else:
        log("no network: searching with a uniform evaluator (priors uniform, value 0)")
        prefix = "uniform+"
    for s in sims:
        cfg = play_config(s, algorithm=algorithm, seed=seed, solver=solver)
        name = f"{prefix}{algorithm}{'+solver' if solver else ''}@{s}"
        agents.append(MctsPlayer(game.spec, evaluator, cfg, name=name))
    agents.extend(extra_agents)

    records = evaluate_agents(agents, test_sets, batch=batch, log=log, game=game)
    expected = {str(ts.depth): float(expected_random(ts).mean()) if len(ts) else None for ts in test_sets}
    every = np.concatenate([expected_random(ts) for ts in test_sets])
    expected["all"] = float(every.mean()) if every.size else None
    doc = {
        "format": REPORT_FORMAT, "seed": seed, "depths": depths, "positions_per_depth": positions,
        "checkpoint": None if path is None else str(path), "algorithm": algorithm, "solver": solver, "simulations": sims,
        "test_sets": {str(ts.depth): {"positions": len(ts), "wins": int((ts.value == 1).sum()),
                                      "draws": int((ts.value == 0).sum()), "candidates": ts.candidates,
                                      "exhausted": ts.exhausted, "cache": cache_files[str(ts.depth)]}
                      for ts in test_sets},
        "agents": records,
        "random_expected": expected,
    }
    print(format_report(doc), file=stdout, flush=True)
    if out is not None:
        from azero.train.atomic import write_atomic

        blob = (json.dumps(doc, indent=1) + "\n").encode()
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, lambda f: f.write(blob))
        log(f"wrote {out}")
    return doc
