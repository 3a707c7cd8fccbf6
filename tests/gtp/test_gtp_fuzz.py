"""Fuzzing GtpEngine with thousands of random lines: it never raises, every response is well-formed
with the right id, and its board always equals an independent shadow board kept from the successful
play / genmove / undo / clear_board / boardsize commands alone."""

from __future__ import annotations

import random
import re

import pytest
from gtpboard import showboard

# The same well-formedness rule as the conftest's `ask` fixture (one response, id echoed).
RESPONSE = re.compile(r"\A([=?])([0-9]*) ([^\n]*)((?:\n[^\n]+)*)\n\n\Z")

LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
NAMES = ["protocol_version", "name", "version", "known_command", "list_commands", "quit", "boardsize",
         "clear_board", "komi", "play", "genmove", "reg_genmove", "kgs-genmove_cleanup", "undo", "final_score",
         "final_status_list", "showboard", "time_settings", "time_left", "loadsgf", "fixed_handicap",
         "lz-analyze", "kata-analyze", "lz-genmove_analyze", "kata-genmove_analyze",
         "Play", "genmove_black", "", "==", "?", "12abc"]
COLOURS = ["b", "w", "black", "white", "B", "WHITE", "Black", "x", "bw", "", "1", "ｂ"]


class ShadowBoard:
    """A minimal Go board that shares no code with azero: stones, captures, nothing else.

    It trusts the engine on legality (replays only accepted moves) but checks that each accepted
    move lands on an empty point and does not leave its own group without liberties.
    """

    def __init__(self, n: int = 9):
        self.n = n
        self.moves: list[tuple[int, int | None]] = []

    def board(self) -> list[list[int]]:
        n = self.n
        b = [[0] * n for _ in range(n)]
        for colour, point in self.moves:
            if point is None:
                continue
            r, c = point
            assert b[r][c] == 0, f"engine accepted a move on the occupied point {point}"
            me, opp = colour + 1, 2 - colour
            b[r][c] = me
            for nr, nc in self._nbrs(r, c):
                if b[nr][nc] == opp:
                    group, libs = self._group(b, nr, nc)
                    if not libs:
                        for gr, gc in group:
                            b[gr][gc] = 0
            assert self._group(b, r, c)[1], f"engine accepted suicide at {point}"
        return b

    def _nbrs(self, r, c):
        return [(r + dr, c + dc) for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
                if 0 <= r + dr < self.n and 0 <= c + dc < self.n]

    def _group(self, b, r, c):
        colour, seen, libs, stack = b[r][c], {(r, c)}, set(), [(r, c)]
        while stack:
            p = stack.pop()
            for q in self._nbrs(*p):
                v = b[q[0]][q[1]]
                if v == 0:
                    libs.add(q)
                elif v == colour and q not in seen:
                    seen.add(q)
                    stack.append(q)
        return seen, libs

    def to_play(self) -> int:
        return 1 - self.moves[-1][0] if self.moves else 0

    def point(self, vertex: str) -> tuple[int, int] | None:
        if vertex.lower() == "pass":
            return None
        col, row = LETTERS.index(vertex[0].upper()), int(vertex[1:])
        return (self.n - row, col)


def expected_id(line: str) -> tuple[bool, str]:
    """(responds, id) by the spec's preprocessing, written independently of azero.gtp.protocol."""
    kept = "".join(" " if ch == "\t" else ch for ch in line if ch in "\t\n" or not (ord(ch) < 32 or ord(ch) == 127))
    kept = kept.split("#")[0].strip()
    if not kept:
        return False, ""
    first = kept.split(" ")[0]
    return True, (first if first and all("0" <= ch <= "9" for ch in first) else "")


def random_garbage(rng: random.Random) -> str:
    pools = [
        lambda: chr(rng.randint(32, 126)),
        lambda: chr(rng.randint(0, 31)),
        lambda: chr(rng.choice([0x7F, 0xA0, 0x2028, 0x3000, 0xFEFF])),
        lambda: chr(rng.randint(0x80, 0x2FFF)),
        lambda: rng.choice(["#", "\t", " ", "=", "?", "\r"]),
    ]
    return "".join(rng.choice(pools)() for _ in range(rng.randint(0, 40)))


def random_vertex(rng: random.Random, n: int) -> str:
    roll = rng.random()
    if roll < 0.75:
        v = f"{LETTERS[rng.randrange(n)]}{rng.randint(1, n)}"
        return v.lower() if rng.random() < 0.2 else v
    if roll < 0.85:
        return rng.choice(["pass", "PASS", "Pass"])
    return rng.choice(["Z26", "A0", f"{LETTERS[min(n, 24)]}{n + 1}", "I5", "resign", "D", "44", "", "D-4",
                       "D４", "d4d4", random_garbage(rng)[:4]])


def random_line(rng: random.Random, n: int) -> str:
    roll = rng.random()
    if roll < 0.35:
        line = f"play {rng.choice(COLOURS)} {random_vertex(rng, n)}"
    elif roll < 0.43:
        line = f"{rng.choice(['genmove', 'reg_genmove', 'kgs-genmove_cleanup'])} {rng.choice(COLOURS)}"
    elif roll < 0.51:
        line = "undo"
    elif roll < 0.54:
        line = "clear_board"
    elif roll < 0.58:
        line = f"boardsize {rng.choice([2, 3, 5, 7, 9, 9, 9, 13, 19, 20, 0, 'x', '', '9.5', '-1'])}"
    elif roll < 0.61:
        line = f"komi {rng.choice(['6.5', '0', '-2', 'x', 'nan', '1e9', '7.5 1', ''])}"
    elif roll < 0.68:
        line = rng.choice(["showboard", "final_score", "final_status_list alive", "final_status_list dead",
                           "list_commands", "known_command play", "name", "version", "protocol_version",
                           "time_settings 30 5 1", "time_settings 0 1 0", "time_left b 20 0",
                           "time_left w 1 1", "quit",
                           # clocks and integers too large for floats' products and for int()
                           "time_settings 1e308 0 0", "time_left b 1e308 0", "time_left w 1e308 1",
                           "time_settings 1e308 1e308 1", f"boardsize {'9' * 5000}",
                           f"time_settings 1 1 {'7' * 5000}", f"time_left b 10 {'1' * 4400}",
                           "time_settings 600 30 5"])
    elif roll < 0.71:
        line = rng.choice(["lz-analyze", "lz-analyze b 1", "lz-analyze 5", "kata-analyze w 1 ownership true",
                           "kata-analyze b 0 maxmoves 2 pvVisits true", "lz-genmove_analyze b 1",
                           "kata-genmove_analyze w 1 ownership true", "lz-analyze b 1 ownership true",
                           "kata-analyze b x", "lz-genmove_analyze", "kata-analyze b 10 maxmoves -1",
                           f"lz-analyze b {'9' * 5000}", "kata-analyze white interval 3"])
    elif roll < 0.83:
        line = random_garbage(rng)
    else:
        args = " ".join(random_garbage(rng)[:6] for _ in range(rng.randint(0, 3)))
        line = f"{rng.choice(NAMES)} {args}"
    if rng.random() < 0.2:
        line = f"{rng.choice([0, 1, 7, 42, 10 ** 12])} {line}"
    if rng.random() < 0.05:
        line += " # " + random_garbage(rng)
    return line


def engine_rows(engine, ask) -> tuple[list[list[int]], int]:
    """showboard as rows of 0 / 1 / 2 (empty, black, white) and the colour to move."""
    rows, text = showboard(engine, ask)
    return [[".XO".index(ch) for ch in row] for row in rows], 0 if "Black to move" in text else 1


@pytest.mark.parametrize("seed, algorithm", [(0, "puct"), (1, "gumbel")])
def test_random_lines_keep_the_engine_consistent(make_engine, ask, seed, algorithm):
    rng = random.Random(seed)
    engine = make_engine(simulations=2, algorithm=algorithm)
    shadow = ShadowBoard(9)
    counts = {"ok": 0, "fail": 0, "ignored": 0, "moves": 0}
    for step in range(5000):  # x 2 seeds: 10,000 lines
        line = random_line(rng, shadow.n)
        responds, ident = expected_id(line)
        response = engine.handle(line)  # must never raise
        if not responds:
            assert response is None, (line, response)
            counts["ignored"] += 1
            continue
        m = RESPONSE.match(response or "")
        assert m, f"step {step}: malformed response {response!r} to {line!r}"
        assert m.group(2) == ident, f"step {step}: id {m.group(2)!r} for {line!r}"
        ok, text = m.group(1) == "=", (m.group(3) + m.group(4)).strip()
        assert "internal error" not in text, f"step {step}: {line!r} -> {text}"
        counts["ok" if ok else "fail"] += 1
        if ok:
            tokens = [t for t in expected_line_tokens(line)]
            name, args = tokens[0], tokens[1:]
            colour = {"b": 0, "black": 0, "w": 1, "white": 1}.get(args[0].lower()) if args else None
            if name == "play":
                shadow.moves.append((colour, shadow.point(args[1])))
                counts["moves"] += 1
            elif name in ("genmove", "kgs-genmove_cleanup"):
                shadow.moves.append((colour, shadow.point(text)))
                counts["moves"] += 1
            elif name in ("lz-genmove_analyze", "kata-genmove_analyze"):
                last = text.split("\n")[-1].split()
                assert last[0] == "play", f"step {step}: {line!r} -> {text!r}"
                shadow.moves.append((colour, shadow.point(last[1])))
                counts["moves"] += 1
            elif name == "undo":
                shadow.moves.pop()
            elif name == "clear_board":
                shadow.moves = []
            elif name == "boardsize":
                shadow = ShadowBoard(int(args[0]))
        elif expected_line_tokens(line) == ["undo"]:
            assert not shadow.moves  # a well-formed undo fails only with nothing to take back
        rows, to_play = engine_rows(engine, ask)
        assert rows == shadow.board(), f"step {step}: board differs after {line!r}"
        assert to_play == shadow.to_play(), f"step {step}: player to move differs after {line!r}"
    # The mix really exercised the engine: many accepted moves, failures and ignored lines.
    assert counts["moves"] > 300 and counts["fail"] > 500 and counts["ok"] > 800 and counts["ignored"] > 20


def expected_line_tokens(line: str) -> list[str]:
    kept = "".join(" " if ch == "\t" else ch for ch in line if ch in "\t\n" or not (ord(ch) < 32 or ord(ch) == 127))
    tokens = [t for t in kept.split("#")[0].strip().split(" ") if t]
    if tokens and all("0" <= ch <= "9" for ch in tokens[0]):
        tokens = tokens[1:]
    return tokens

