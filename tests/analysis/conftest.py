"""Fixtures of the analysis tests: engines over the tiny headed network (tests/conftest.py) or the
uniform evaluator that write their answers to a list."""

from __future__ import annotations

import json

import pytest

from azero.analysis.engine import AnalysisEngine
from azero.analysis.katago import Limits


@pytest.fixture(scope="session")
def headed_evaluator(headed_checkpoint):
    from azero.agents.checkpoints import load_evaluator

    return load_evaluator(headed_checkpoint, precision="f32", backend="torch")


class Collected:
    """An engine plus the decoded lines it wrote."""

    def __init__(self, evaluator, features: str, **kw):
        self.lines: list[str] = []
        limits = Limits(9, features, kw.pop("default_visits", 16), kw.pop("max_visits", 64), kw.pop("report_as", "BLACK"))
        self.engine = AnalysisEngine(evaluator, limits, write=self.lines.append, **kw)

    def ask(self, *queries) -> list[dict]:
        """Submit the queries (dicts or raw lines), search until done, return what was written since."""
        start = len(self.lines)
        for q in queries:
            self.engine.submit(q if isinstance(q, str) else json.dumps(q))
        self.engine.drain()
        return [json.loads(line) for line in self.lines[start:]]


@pytest.fixture
def engine_on(headed_evaluator):
    """engine_on(**kw): a Collected engine on the headed network (kw: AnalysisEngine / Limits settings)."""
    made = []

    def make(evaluator=None, features="extended", **kw) -> Collected:
        c = Collected(evaluator if evaluator is not None else headed_evaluator.evaluator, features, **kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.engine.shutdown()


def query(qid="q", moves=(), **fields) -> dict:
    """A well-formed query on the 9x9 board (fields override)."""
    return {"id": qid, "moves": [list(m) for m in moves], "rules": "tromp-taylor", "komi": 7.5,
            "boardXSize": 9, "boardYSize": 9, **fields}
