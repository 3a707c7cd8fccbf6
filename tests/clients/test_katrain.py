"""A real client drives azero: KaTrain's own engine wrapper (katrain.core.engine.KataGoEngine), headless,
runs `azero analyze` in place of KataGo through a short game and reads the analyses with its own
GameNode code (candidate moves, points lost, ownership, policy). Skips when KaTrain is not installed
(`pip install -e ".[clients]"`; the README's test command installs it)."""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
import time

import pytest

# Kivy reads these at import: no command-line parsing, no console or file logs, its home out of ~.
for key, value in {"KIVY_NO_ARGS": "1", "KIVY_NO_CONSOLELOG": "1", "KIVY_NO_FILELOG": "1"}.items():
    os.environ.setdefault(key, value)
os.environ.setdefault("KIVY_HOME", tempfile.mkdtemp(prefix="kivy-"))

engine_module = pytest.importorskip("katrain.core.engine", reason="KaTrain is not installed (extra: clients)")
from katrain.core.constants import OUTPUT_ERROR  # noqa: E402
from katrain.core.game_node import GameNode  # noqa: E402
from pysgf import Move  # noqa: E402

GAME = ["E5", "C3", "G7", "C7", "D4", "F3"]


class Host:
    """What KataGoEngine asks of the KaTrain app: a log, and popups (recorded, never shown)."""

    def __init__(self):
        self.logs: list[tuple[int, str]] = []
        self.popups: list[tuple] = []

    def log(self, message, level):
        self.logs.append((level, str(message)))

    def __call__(self, *args):
        self.popups.append(args)


def test_katrain_analyses_a_game_through_azero(headed_checkpoint):
    # KaTrain runs a custom command through the shell and stops it with SIGTERM: `exec` makes azero
    # the process that gets it (a shell left in between would keep azero and its pipes alive).
    command = "exec " + " ".join(shlex.quote(x) for x in [sys.executable, "-m", "azero.cli", "analyze", "--game", "go9x9",
                                                "--checkpoint", str(headed_checkpoint), "--device", "cpu"])
    config = {"altcommand": command, "max_visits": 24, "fast_visits": 8, "max_time": 60.0,
              "wide_root_noise": 0.04, "_enable_ownership": True}
    host = Host()
    engine = engine_module.KataGoEngine(host, config)
    try:
        nodes = [GameNode(properties={"SZ": 9, "KM": 7.5, "RU": "chinese"})]
        for gtp in GAME:
            nodes.append(nodes[-1].play(Move.from_gtp(gtp, player=nodes[-1].next_player)))
        for node in nodes:
            node.analyze(engine)
        deadline = time.monotonic() + 180
        while not all(n.analysis_complete for n in nodes) and time.monotonic() < deadline:
            time.sleep(0.1)
        errors = [m for level, m in host.logs if level == OUTPUT_ERROR]
        assert all(n.analysis_complete for n in nodes), (errors, host.logs[-10:])
        assert not errors and not host.popups
    finally:
        engine.shutdown(finish=False)
    for node in nodes:
        assert node.root_visits >= 24
        assert len(node.ownership) == 81 and len(node.policy) == 82
        assert isinstance(node.score, float)
        candidates = node.candidate_moves  # KaTrain's own reading: points lost per move, by order
        assert candidates and candidates[0]["order"] == 0
        assert all("pointsLost" in c and "winrateLost" in c for c in candidates)
        played = {m.gtp() for n in node.nodes_from_root for m in n.moves}
        assert not played & {c["move"] for c in candidates}  # never suggests an occupied point
