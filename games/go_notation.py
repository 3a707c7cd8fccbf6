"""Go's written forms, in one place: vertices, results and game names.

    vertex       'D4' / 'pass'  <->  action (row-major from the top-left, pass = n*n); GTP's
                 letters, which skip I (the one letter table is games/_go.pyx's COLUMNS)
    result       'B+3.5', 'W+0.5', '0' (a tie), 'B+R' (a resignation): GTP's final_score and
                 SGF's RE, from a black-minus-white score or a game's outcome
    game name    'go9x9', 'go13x13', 'go' (9x9): the names GoGame's spec carries

GTP, SGF, the arena, run records and the human game all read and write these
through this module, so a change of notation is one edit.
"""

from __future__ import annotations

import math
import re

from azero.games._go import COLUMNS, gtp_vertex
from azero.games.base import IllegalActionError

VERTEX = re.compile(r"([A-HJ-Za-hj-z])([0-9]{1,2})")
"""A GTP vertex: a letter A-Z without I and a row number. ASCII digits only: Python's \\d would also
accept other scripts' digits, which int() then reads happily."""

GO_NAME = re.compile(r"go(?:([0-9]+)x\1)?")
"""'go' or 'goNxN' (square boards only)."""


class MalformedVertex(IllegalActionError):
    """Text that is not a vertex at all (GTP: 'syntax error')."""


class OffBoardVertex(IllegalActionError):
    """A well-formed vertex outside this board (GTP: 'illegal move')."""


def vertex(action: int, n: int) -> str:
    """The vertex of `action` on an n x n board: 'A9' top-left on 9x9, 'J1' bottom-right, 'pass' = n*n."""
    return gtp_vertex(n, action)  # the engine's own, which its error messages use


def parse_vertex(text: str, n: int) -> int:
    """Inverse of vertex(), case-insensitive ('a9', 'PASS'). MalformedVertex for text that is no
    vertex, OffBoardVertex for a vertex outside the n x n board (both IllegalActionError)."""
    if not isinstance(text, str):
        raise MalformedVertex(f"expected a vertex like 'A{n}' or 'pass', got {text!r}")
    s = text.strip()
    if s.lower() == "pass":
        return n * n
    m = VERTEX.fullmatch(s)
    if m is None:
        raise MalformedVertex(f"malformed vertex {text!r}: expected a letter (no 'I') and a row, "
                              f"like 'A{n}', or 'pass'")
    letter, row = m.group(1).upper(), int(m.group(2))
    col = COLUMNS.find(letter)
    if not 0 <= col < n or not 1 <= row <= n:
        raise OffBoardVertex(f"vertex {text!r} is off the {n}x{n} board "
                             f"(columns A..{COLUMNS[n - 1]}, rows 1..{n})")
    return (n - row) * n + col


def score_string(score: float) -> str:
    """The result of a black-minus-white score (komi included): 'B+3.5', 'W+0.5', '0' for a tie."""
    if score == 0:
        return "0"
    return f"{'B' if score > 0 else 'W'}+{abs(score):g}"


def result_string(outcome: float, *, score: float | None = None, resigned: bool = False) -> str:
    """SGF RE of a finished game: `outcome` from Black's view (+1 / -1 / 0), its Tromp-Taylor `score`
    when it was counted, 'B+R' / 'W+R' when it ended by resignation, 'B+' / 'W+' when neither is known."""
    if outcome == 0:
        return "0"
    winner = "B" if outcome > 0 else "W"
    if resigned:
        return f"{winner}+R"
    if score is not None:
        return f"{winner}+{abs(score):g}"
    return f"{winner}+"


_RESULT = re.compile(r"([BW])\+(R|RESIGN|T|TIME|F|FORFEIT|[0-9]*\.?[0-9]+)?", re.IGNORECASE)


def parse_result(text: str, *, strict: bool = True) -> float | None:
    """Black's margin of a result: 'B+3.5' -> 3.5, 'W+2' -> -2.0, '0' / 'Draw' / 'Jigo' -> 0.0, a win
    without a count ('B+R', 'W+Resign', 'B+T', 'W+F', 'B+') -> +-inf.

    strict: ValueError for anything else (GTP answers azero must understand); not strict: None (an
    outside engine's free text, which a match records but does not need)."""
    t = str(text).strip()
    if t.lower() in ("0", "draw", "jigo"):
        return 0.0
    m = _RESULT.fullmatch(t)
    if m is None or (strict and m.group(2) is None):
        if strict:
            raise ValueError(f"not a Go result: {text!r}")
        return None
    sign = 1.0 if m.group(1).upper() == "B" else -1.0
    amount = m.group(2)
    if amount is None or not (amount[0].isdigit() or amount[0] == "."):
        return sign * math.inf
    return sign * float(amount)


def board_size_of(name: str) -> int | None:
    """The board size a Go game name stands for ('go9x9' -> 9, 'go13x13' -> 13, 'go' -> 9); None when
    `name` is no Go name."""
    m = GO_NAME.fullmatch(name)
    if m is None:
        return None
    return int(m.group(1) or 9)
