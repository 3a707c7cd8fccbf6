"""Fixtures of the GTP tests: engines with cheap evaluators (tiny networks and GNU Go: tests/conftest.py)."""

from __future__ import annotations

import re

import pytest

from azero.agents.checkpoints import LoadedEvaluator
from azero.gtp.engine import GtpEngine
from azero.search.evaluators import UniformEvaluator

# One response: '=' or '?', the echoed id, a space, a first line (may be empty), further non-empty
# lines, and the empty line that ends it.
RESPONSE = re.compile(r"\A([=?])([0-9]*) ([^\n]*)((?:\n[^\n]+)*)\n\n\Z")


@pytest.fixture
def make_engine():
    """GtpEngine factory with a uniform evaluator (value 0) and a few simulations: fast and deterministic."""

    def make(**kw) -> GtpEngine:
        kw.setdefault("simulations", 4)
        return GtpEngine(LoadedEvaluator(UniformEvaluator(), "uniform (test)"), **kw)

    return make


@pytest.fixture
def ask():
    """ask(engine, line) -> (ok, id, text), asserting the response is well-formed."""

    def run(engine: GtpEngine, line: str):
        response = engine.handle(line)
        assert response is not None, f"no response to {line!r}"
        m = RESPONSE.match(response)
        assert m, f"malformed response {response!r} to {line!r}"
        return m.group(1) == "=", m.group(2), (m.group(3) + m.group(4)).strip()

    return run

