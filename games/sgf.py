"""SGF (FF[4]) records of Go games, read and written with sgfmill.

Coordinates: our Go action for the point in row r, column c is r*N + c with
r = 0 the TOP row (SGF's 'a' row, the row GTP calls N) and c = 0 the left
column; pass is N*N. sgfmill numbers rows from the BOTTOM, so our r is
N - 1 - sgfmill_row. On 9x9: SGF 'aa' = action 0 (A9), 'ia' = 8 (J9),
'ai' = 72 (A1).

What is read: GM (must be 1, Go), FF (1..4), SZ (square, 2..19; 19 when
absent), KM (0.0 when absent; both defaults are the SGF standard's), RU, RE, PB, PW, DT and the moves of the
main line (first child at every branch; other variations are ignored). Passes
may be written B[] or, on boards up to 19x19, B[tt]. Anything azero cannot
replay faithfully is refused with SgfError rather than guessed at: setup
stones (AB/AW/AE, e.g. handicap placement), a node with both B and W, moves
that do not alternate starting with Black, and points off the board.

What is written: FF[4] GM[1] CA[UTF-8] SZ KM RU, and PB/PW/RE/DT when given;
passes as B[tt] / W[tt] (sgfmill's choice, read back by every SGF reader for
boards up to 19x19).
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import operator
from typing import Sequence

import numpy as np
from sgfmill import sgf

MIN_SIZE, MAX_SIZE = 2, 19


class SgfError(ValueError):
    """Malformed SGF, or SGF content azero does not support; the message names the problem."""


@dataclasses.dataclass
class SgfRecord:
    """One Go game as read from SGF, moves in azero's action convention."""

    board_size: int
    komi: float
    moves: list[int]
    """Actions r*N + c (r = 0 top row), pass = N*N; Black plays moves[0], then alternating."""
    result: str | None = None
    """RE as written, e.g. 'B+R', 'W+3.5', '0' / 'Draw'; None when absent."""
    black: str = ""
    white: str = ""
    rules: str = ""
    date: str | None = None


def _to_action(point: tuple[int, int] | None, n: int) -> int:
    if point is None:
        return n * n
    row, col = point
    return (n - 1 - row) * n + col


def _to_point(action: int, n: int) -> tuple[int, int] | None:
    if action == n * n:
        return None
    r, c = divmod(action, n)
    return (n - 1 - r, c)


def write_sgf(
    board_size: int,
    komi: float,
    moves: Sequence[int],
    *,
    result: str | None = None,
    black: str = "",
    white: str = "",
    rules: str = "Chinese",
    date: str | datetime.date | None = None,
) -> str:
    """SGF text of a game whose moves (Black first, alternating) are Go actions r*N + c / pass N*N."""
    n = int(board_size)
    if not MIN_SIZE <= n <= MAX_SIZE:
        raise SgfError(f"board size {board_size} out of range [{MIN_SIZE}, {MAX_SIZE}]")
    if not math.isfinite(float(komi)):
        raise SgfError(f"komi must be a finite number, got {komi!r}")
    game = sgf.Sgf_game(size=n)  # sets FF[4] GM[1] CA[UTF-8] SZ
    root = game.get_root()
    root.set("KM", float(komi))
    if rules:
        root.set("RU", rules)
    if black:
        root.set("PB", black)
    if white:
        root.set("PW", white)
    if result is not None:
        root.set("RE", result)
    if date is not None:
        root.set("DT", date.isoformat() if isinstance(date, datetime.date) else str(date))
    for k, a in enumerate(moves):
        try:
            a = operator.index(a)  # ints and numpy integers; floats and strings are refused
        except TypeError:
            raise SgfError(f"move {k}: action must be an integer, got {a!r}") from None
        if not 0 <= a <= n * n:
            raise SgfError(f"move {k}: action {a} out of range [0, {n * n}] for a {n}x{n} board")
        game.extend_main_sequence().set_move("b" if k % 2 == 0 else "w", _to_point(a, n))
    return game.serialise().decode("utf-8")


def _int_property(root, name: str) -> int | None:
    if not root.has_property(name):
        return None
    raw = root.get_raw(name)
    try:
        return int(raw)
    except ValueError:
        raise SgfError(f"{name}[{raw.decode(errors='replace')}] is not an integer") from None


def _check_legal(moves: list[int], n: int, komi: float) -> None:
    """Replay the moves through azero's rules; SgfError naming the first illegal one (an occupied
    point, suicide, a positional superko repetition). Two passes end a game under these rules, so
    moves that a record has after two passes (play resumed to settle a dispute) are not checked."""
    from azero.games.go import GoGame

    game = GoGame(n, komi, max_moves=len(moves) + 1)
    states = game.new_states(1)
    for i, action in enumerate(moves):
        if states.terminal()[0]:
            return
        if not states.legal_mask()[0, action]:
            who = "Black" if i % 2 == 0 else "White"
            raise SgfError(f"move {i + 1} ({who} {game.action_to_str(action)}) is illegal: an occupied point, "
                           "suicide or a repeated position")
        states.apply(np.array([action], dtype=np.int32))


def read_sgf(text: str | bytes) -> SgfRecord:
    """Parse one SGF Go game (main line only); raises SgfError on anything malformed or unsupported.

    A str is taken as already-decoded text; bytes are decoded by the file's CA
    property (ISO-8859-1 when absent), as SGF specifies.
    """
    try:
        if isinstance(text, str):
            game = sgf.Sgf_game.from_bytes(text.encode("utf-8"), override_encoding="UTF-8")
        else:
            game = sgf.Sgf_game.from_bytes(bytes(text))
    except ValueError as e:
        raise SgfError(f"cannot parse SGF: {e or 'malformed data'}") from None
    root = game.get_root()

    gm = _int_property(root, "GM")
    if gm is not None and gm != 1:
        raise SgfError(f"GM[{gm}] is not a Go game (Go is GM[1])")
    ff = _int_property(root, "FF")
    if ff is not None and not 1 <= ff <= 4:
        raise SgfError(f"unsupported SGF version FF[{ff}] (expected 1..4)")
    n = game.get_size()  # sgfmill has already refused non-square and non-numeric SZ
    if not MIN_SIZE <= n <= MAX_SIZE:
        raise SgfError(f"board size SZ[{n}] out of range [{MIN_SIZE}, {MAX_SIZE}]")
    try:
        komi = game.get_komi()  # 0.0 when KM is absent
    except ValueError:
        raise SgfError(f"KM[{root.get_raw('KM').decode(errors='replace')}] is not a number") from None

    def text_prop(name: str) -> str | None:
        if not root.has_property(name):
            return None
        try:
            return root.get(name)
        except ValueError as e:  # UnicodeDecodeError: bytes that are not in the declared charset
            raise SgfError(f"{name}[...] is not valid text in the file's encoding ({e})") from None

    moves: list[int] = []
    for k, node in enumerate(game.get_main_sequence()):
        if node.has_setup_stones():
            raise SgfError(f"node {k}: setup stones (AB/AW/AE) are not supported")
        if node.has_property("B") and node.has_property("W"):
            raise SgfError(f"node {k}: has both a B and a W move")
        colour, raw = node.get_raw_move()
        if colour is None:
            continue  # comment / markup-only node
        expected = "b" if len(moves) % 2 == 0 else "w"
        if colour != expected:
            raise SgfError(
                f"node {k}: move {len(moves)} is by {'Black' if colour == 'b' else 'White'}, "
                f"expected {'Black' if expected == 'b' else 'White'} (moves must alternate, Black first)"
            )
        try:
            _, point = node.get_move()
        except ValueError:
            raise SgfError(
                f"node {k}: move {colour.upper()}[{raw.decode(errors='replace')}] is not a point "
                f"on a {n}x{n} board"
            ) from None
        moves.append(_to_action(point, n))
    _check_legal(moves, n, float(komi))

    return SgfRecord(
        board_size=n,
        komi=float(komi),
        moves=moves,
        result=text_prop("RE"),
        black=text_prop("PB") or "",
        white=text_prop("PW") or "",
        rules=text_prop("RU") or "",
        date=text_prop("DT"),
    )
