"""`azero analyze --game go9x9`: a KataGo-compatible JSON analysis engine over azero's batched MCTS.

    azero analyze --game go9x9 [--checkpoint CKPT] [--sims 500] [--max-visits 5000] [--rows 64]

One query per stdin line, one answer per analysed turn on stdout (formats in katago.py). As in
KataGo the protocol is asynchronous: queries are read while others are searched, answers come
when they are done, and `{"action": "terminate", "terminateId": ...}` ends queries early with the
visits they have. At the end of input the engine finishes every query, then exits.

The batch is the point: every turn of every query waiting is a row of one search (up to --rows of
them), so each batch step evaluates one leaf of every row in one network call, and --workers
parts of the rows do so in parallel threads (one OpenVINO stream each). A
60-turn game in one query is searched as 60 rows at once; `azero bench analysis` measures that
against the same turns sent one query at a time. Rows are refilled as soon as one finishes
(highest priority first, then first come), and rows of one komi share a search (komi is part of
the game a tree's positions belong to).

Bad input never stops the stream: a line that is not JSON, or a query with a bad field, gets
`{"id", "error", "field"}` (the id recovered from the raw text where possible); fields azero
ignores get `{"id", "warning", "field"}` and the query goes on.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import itertools
import json
import re
import sys
import threading
import time
from typing import IO, Callable

import numpy as np

from azero.analysis.growing import ParallelSearch
from azero.analysis.katago import Limits, Query, QueryError, Turn, answer, no_results, parse_query

CHUNK = 16
"""Simulations per row between two looks at the queue (terminations, partial reports, free rows)."""
MAX_SEARCHES = 2
"""Searches kept (one per komi); the least recently used goes first."""
_ID = re.compile(r'"id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def default_workers() -> int:
    """Parallel parts of the rows: one per core, at most 2 (beyond that the batches get small)."""
    import os

    return max(1, min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def _version() -> str:
    try:
        return importlib.metadata.version("azero")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@dataclasses.dataclass
class Job:
    """One turn of one query, waiting or in a row."""

    query: Query
    turn: Turn
    priority: int
    seq: int
    row: int | None = None
    ownership: np.ndarray | None = None
    started: float = 0.0
    reported: float = 0.0
    terminated: bool = False


class AnalysisEngine:
    """Queries in (`submit`, any thread), answers out (`write`); `work` runs the searches (one thread)."""

    def __init__(self, evaluator, limits: Limits, *, rows: int = 64, workers: int = 1, seed: int = 0,
                 write: Callable[[str], None], now: Callable[[], float] = time.monotonic, chunk: int = CHUNK):
        if rows < 1:
            raise ValueError(f"rows must be >= 1, got {rows}")
        self.evaluator = evaluator
        self.limits = limits
        self.rows = rows
        self.workers = workers
        self.seed = seed
        self.chunk = chunk
        self._write = write
        self.now = now
        self._lock = threading.Condition()
        self._out_lock = threading.Lock()
        self._pending: list[Job] = []
        self._running: dict[int, Job] = {}
        self._searches: dict[float, ParallelSearch] = {}
        self._komi: float | None = None  # the komi of the rows now in the search
        self._seq = itertools.count()
        self._closed = False
        self.positions_done = 0
        self.has_score = bool(getattr(evaluator, "has_score", False))
        self.has_ownership = self._probe_ownership()

    def _probe_ownership(self) -> bool:
        """Whether the evaluator predicts ownership (a network's method exists even without the head)."""
        owner = getattr(self.evaluator, "ownership", None)
        if owner is None:
            return False
        return owner(self._game(self.limits.network_komi).new_states(1).encode()) is not None

    # ------------------------------------------------------------------ output
    def emit(self, obj: dict) -> None:
        line = json.dumps(obj, separators=(",", ":"))
        with self._out_lock:
            self._write(line + "\n")

    def _error(self, qid, message: str, field: str | None) -> None:
        obj = {"id": qid, "error": message}
        if field is not None:
            obj["field"] = field
        self.emit(obj)

    # ------------------------------------------------------------------ input
    def submit(self, line: str) -> None:
        """Take one input line: a query, an action or garbage (answered with an error)."""
        text = line.strip()
        if not text:
            return
        try:
            obj = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as e:
            m = _ID.search(text)
            why = f"{e.msg} at column {e.colno}" if isinstance(e, json.JSONDecodeError) else "nested too deeply"
            self._error(json.loads(f'"{m.group(1)}"') if m else None, f"could not parse the line as JSON: {why}",
                        None)
            return
        qid = obj.get("id") if isinstance(obj, dict) else None
        if isinstance(obj, dict) and "action" in obj:
            self._action(obj)
            return
        try:
            query = parse_query(obj, self.limits)
        except QueryError as e:
            self._error(qid, str(e), e.field)
            return
        for message, field in query.warnings:
            self.emit({"id": query.id, "warning": message, "field": field})
        self._warn_missing_heads(query)
        with self._lock:
            for turn, priority in zip(query.turns, query.priorities):
                self._pending.append(Job(query, turn, priority, next(self._seq)))
            self._pending.sort(key=lambda j: (-j.priority, j.seq))
            self._lock.notify_all()

    def _warn_missing_heads(self, query: Query) -> None:
        if not self.has_score:
            self.emit({"id": query.id, "warning": "the network has no score head: scoreLead and scoreMean are "
                                                  "left out", "field": "scoreLead"})
        if query.include_ownership and not self.has_ownership:
            self.emit({"id": query.id, "warning": "the network has no ownership head: ownership is left out",
                       "field": "includeOwnership"})

    def _action(self, obj: dict) -> None:
        qid, action = obj.get("id"), obj["action"]
        if not isinstance(qid, str):
            self._error(qid, f"id must be a string, got {qid!r}", "id")
        elif action == "query_version":
            self.emit({**obj, "version": _version(), "git_hash": "<omitted>"})
        elif action == "clear_cache":
            self.emit(obj)  # azero keeps no evaluation cache between queries
        elif action in ("terminate", "terminate_all"):
            target, turns = obj.get("terminateId"), obj.get("turnNumbers")
            if action == "terminate" and not isinstance(target, str):
                self._error(qid, f"terminateId must be a string, got {target!r}", "terminateId")
                return
            if turns is not None and (not isinstance(turns, list)
                                      or not all(isinstance(t, int) and not isinstance(t, bool) for t in turns)):
                self._error(qid, f"turnNumbers must be a list of integers, got {turns!r}", "turnNumbers")
                return
            with self._lock:
                for job in itertools.chain(self._pending, self._running.values()):
                    if ((action == "terminate_all" or job.query.id == target)
                            and (turns is None or job.turn.number in turns)):
                        job.terminated = True
                self._lock.notify_all()
            self.emit(obj)
        else:
            self._error(qid, f"unknown action {action!r} (query_version, clear_cache, terminate, terminate_all)",
                        "action")

    def close(self) -> None:
        """End of input: `work` returns once every query is answered."""
        with self._lock:
            self._closed = True
            self._lock.notify_all()

    # ------------------------------------------------------------------ searching
    def busy(self) -> bool:
        with self._lock:
            return bool(self._pending or self._running)

    def work(self) -> None:
        """Search until input is closed and every query is answered."""
        while True:
            with self._lock:
                while not (self._pending or self._running or self._closed):
                    self._lock.wait()
                if self._closed and not (self._pending or self._running):
                    return
            self.step()

    def drain(self) -> None:
        """Search until nothing is waiting (callers that submit from the same thread)."""
        while self.busy():
            self.step()

    def shutdown(self) -> None:
        """Stop the worker threads of every search."""
        for search in self._searches.values():
            search.close()
        self._searches.clear()

    def _search(self, komi: float) -> ParallelSearch:
        search = self._searches.pop(komi, None)
        if search is None:
            search = ParallelSearch(self._game(komi), self.evaluator, rows=self.rows,
                                    max_visits=self.limits.max_visits, workers=self.workers, seed=self.seed)
            while len(self._searches) >= MAX_SEARCHES:
                self._searches.pop(next(iter(self._searches))).close()
        self._searches[komi] = search  # most recently used last
        return search

    def _game(self, komi: float):
        from azero.gtp.board import GtpBoard

        return GtpBoard(self.limits.board_size, komi, self.limits.features).game

    def step(self) -> None:
        """One look at the queue, then CHUNK simulations for every row that needs them."""
        with self._lock:
            for job in [j for j in self._pending if j.terminated]:
                self._pending.remove(job)
                self.emit(no_results(job.query, job.turn))
            if not self._running:
                self._komi = self._pending[0].query.komi if self._pending else None
            if self._komi is None:
                return
            search = self._search(self._komi)
            loaded = self._fill(search)
        self._load_ownership(loaded)
        if any(not j.terminated for j in self._running.values()):
            search.grow(self.chunk)
        self._report(search)

    def _fill(self, search: ParallelSearch) -> list[Job]:
        """Waiting jobs of this komi into free rows, unless an older job of another komi waits (it
        would starve); called with the lock held."""
        free = [r for r in range(self.rows) if r not in self._running]
        loaded = []
        oldest_other = min((j.seq for j in self._pending if j.query.komi != self._komi), default=None)
        for job in list(self._pending):
            if not free:
                break
            if job.query.komi != self._komi or (oldest_other is not None and job.seq > oldest_other):
                continue
            self._pending.remove(job)
            job.row = free.pop(0)
            search.load(job.row, job.turn.position, job.query.max_visits)
            job.started = job.reported = self.now()
            self._running[job.row] = job
            loaded.append(job)
        return loaded

    def _load_ownership(self, jobs: list[Job]) -> None:
        """The network's ownership of the new rows that asked for it, in one batch."""
        want = [j for j in jobs if j.query.include_ownership]
        if not self.has_ownership or not want:
            return
        views = self.evaluator.ownership(np.concatenate([j.turn.position.encode() for j in want]))
        if views is None:
            return
        for job, view in zip(want, views):
            job.ownership = np.asarray(view, np.float32)

    def _report(self, search: ParallelSearch) -> None:
        remaining = search.remaining()
        now = self.now()
        n = self.limits.board_size
        for row, job in sorted(self._running.items()):
            late = job.query.max_time is not None and now - job.started >= job.query.max_time
            done = job.terminated or late or remaining[row] == 0
            if done:
                if search.visits()[row] == 0:
                    self.emit(no_results(job.query, job.turn))
                else:
                    self.emit(answer(job.query, job.turn, search, row, during=False, ownership=job.ownership, n=n))
                self.positions_done += 1
                search.clear(row)
                with self._lock:
                    del self._running[row]
            elif job.query.report_every is not None and now - job.reported >= job.query.report_every:
                job.reported = now
                self.emit(answer(job.query, job.turn, search, row, during=True, ownership=job.ownership, n=n))


def serve(engine: AnalysisEngine, inp: IO[str]) -> None:
    """Read queries from `inp` in a thread while the searches run in this one; returns at end of input
    once every query is answered."""

    def read() -> None:
        try:
            for raw in inp:
                if isinstance(raw, bytes):
                    raw = raw.decode("utf-8", errors="replace")
                engine.submit(raw)
        finally:
            engine.close()

    reader = threading.Thread(target=read, name="analysis-input", daemon=True)
    reader.start()
    engine.work()
    reader.join(timeout=1.0)


def run(*, checkpoint, game_name: str, visits: int, max_visits: int, rows: int, workers: int, report_as: str, seed: int,
        device: str, threads: int | None, precision: str, backend: str, stdin=None, stdout=None, stderr=None) -> int:
    """`azero analyze` for Go: serve KataGo-format queries on stdin/stdout."""
    from azero.agents.checkpoints import checkpoint_planes, game_for, load_evaluator, resolve_checkpoint
    from azero.games.go import features_for
    from azero.games.go_notation import board_size_of

    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    if not 1 <= visits <= max_visits:
        raise ValueError(f"--sims (the default maxVisits) must be in [1, --max-visits={max_visits}], got {visits}")
    if report_as.upper() not in ("BLACK", "WHITE", "SIDETOMOVE"):
        raise ValueError(f"--report-as must be BLACK, WHITE or SIDETOMOVE, got {report_as!r}")
    path = resolve_checkpoint(checkpoint, game_name)
    game = game_for(game_name, [] if path is None else [checkpoint_planes(path)])
    loaded = load_evaluator(path, game=game, device=device, threads=threads, precision=precision,
                            backend=backend, no_network="uniform", seed=seed, streams=workers)
    size = board_size_of(game_name) or game.board_size
    features = features_for(game.spec.obs_shape)
    print(f"azero analyze: {size}x{size} Go, {loaded.description}; default maxVisits {visits}, at most "
          f"{max_visits}, {rows} positions per batch in {workers} parallel parts; reading KataGo-format queries from stdin", file=stderr,
          flush=True)

    def write(text: str) -> None:
        stdout.write(text)
        stdout.flush()

    engine = AnalysisEngine(loaded.evaluator, Limits(size, features, visits, max_visits, report_as.upper(),
                                                     float(game.komi)), rows=rows, workers=workers, seed=seed,
                            write=write)
    try:
        serve(engine, stdin)
    except KeyboardInterrupt:
        pass
    except BrokenPipeError:
        pass
    finally:
        engine.shutdown()
    return 0
