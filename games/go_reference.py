"""Slow, readable Go position knowledge: the reference twin of azero.games._go's C helpers.

Functions take a board int8 [N, N] (0 empty, 1 black, 2 white; row 0 the top, as
GoStates.board gives it) and return arrays of the same layout. They follow the
definitions in azero.games._go's module docstring one to one, with sets and
plain loops, so the native code can be checked against them on many positions:

- chains / liberties: groups of connected same-coloured stones and their real
  liberties (distinct empty neighbours);
- ownership: the Tromp-Taylor area of the position as it stands;
- pass_alive: Benson's unconditional life with KataGo's area convention;
- suicide: whether a move would be suicide (for the superko-ban plane, which is
  "illegal but not suicide" on an empty point);
- extended_planes: planes 10..18 of the "extended" observation, given the ko bans.
"""

from __future__ import annotations

import numpy as np

EMPTY, BLACK, WHITE = 0, 1, 2

Point = tuple[int, int]


def neighbours(n: int, p: Point) -> list[Point]:
    r, c = p
    return [(r + dr, c + dc) for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
            if 0 <= r + dr < n and 0 <= c + dc < n]


def components(board: np.ndarray, member) -> list[set[Point]]:
    """The 4-connected components of the points p with member(board[p])."""
    n = board.shape[0]
    seen: set[Point] = set()
    comps = []
    for r in range(n):
        for c in range(n):
            if (r, c) in seen or not member(board[r, c]):
                continue
            comp, todo = set(), [(r, c)]
            seen.add((r, c))
            while todo:
                p = todo.pop()
                comp.add(p)
                for q in neighbours(n, p):
                    if q not in seen and member(board[q]):
                        seen.add(q)
                        todo.append(q)
            comps.append(comp)
    return comps


def chains(board: np.ndarray, colour: int) -> list[set[Point]]:
    return components(board, lambda x: x == colour)


def chain_liberties(board: np.ndarray, chain: set[Point]) -> set[Point]:
    n = board.shape[0]
    return {q for p in chain for q in neighbours(n, p) if board[q] == EMPTY}


def liberties(board: np.ndarray) -> np.ndarray:
    """int [N, N]: real liberties of the chain of each stone, 0 on empty points."""
    out = np.zeros(board.shape, np.int64)
    for colour in (BLACK, WHITE):
        for ch in chains(board, colour):
            libs = len(chain_liberties(board, ch))
            for p in ch:
                out[p] = libs
    return out


def ownership(board: np.ndarray) -> np.ndarray:
    """int8 [N, N]: +1 black stone or empty region reaching only black, -1 likewise white, else 0."""
    n = board.shape[0]
    out = np.where(board == BLACK, 1, np.where(board == WHITE, -1, 0)).astype(np.int8)
    for region in components(board, lambda x: x == EMPTY):
        reach = {int(board[q]) for p in region for q in neighbours(n, p)} - {EMPTY}
        if len(reach) == 1:
            for p in region:
                out[p] = 1 if reach == {BLACK} else -1
    return out


def pass_alive_area(board: np.ndarray, colour: int) -> set[Point]:
    """Benson's pass-alive chains of `colour` and the territory they enclose (KataGo's rule:
    a region bordering colour, bordering only pass-alive chains, with at most one point
    that has no neighbour of that colour)."""
    n = board.shape[0]
    chs = chains(board, colour)
    chain_of = {p: i for i, ch in enumerate(chs) for p in ch}
    regions = components(board, lambda x: x != colour)

    def bordering(region):
        return {chain_of[q] for p in region for q in neighbours(n, p) if q in chain_of}

    def vital_to(region):
        empties = [p for p in region if board[p] == EMPTY]
        return {i for i in bordering(region)
                if all(any(chain_of.get(q) == i for q in neighbours(n, p)) for p in empties)}

    borders = [bordering(rg) for rg in regions]
    vital = [vital_to(rg) for rg in regions]
    alive = set(range(len(chs)))
    while True:
        counted = [k for k in range(len(regions)) if borders[k] <= alive]
        removed = {i for i in alive if sum(i in vital[k] for k in counted) < 2}
        if not removed:
            break
        alive -= removed
    area = {p for i in alive for p in chs[i]}
    for k, rg in enumerate(regions):
        internal = [p for p in rg if all(q not in chain_of for q in neighbours(n, p))]
        if borders[k] and borders[k] <= alive and len(internal) <= 1:
            area |= rg
    return area


def pass_alive(board: np.ndarray) -> np.ndarray:
    """int8 [N, N]: +1 Black's pass-alive area, -1 White's, 0 elsewhere."""
    out = np.zeros(board.shape, np.int8)
    for colour, sign in ((BLACK, 1), (WHITE, -1)):
        for p in pass_alive_area(board, colour):
            out[p] += sign
    return out


def suicide(board: np.ndarray, p: Point, colour: int) -> bool:
    """Whether `colour` playing on the empty point p would be suicide (captures nothing, no liberty)."""
    b = board.copy()
    b[p] = colour
    other = 3 - colour
    n = board.shape[0]
    for q in neighbours(n, p):
        if b[q] == other:
            ch = next(c for c in chains(b, other) if q in c)
            if not chain_liberties(b, ch):
                return False
    own = next(c for c in chains(b, colour) if p in c)
    return not chain_liberties(b, own)


def extended_planes(board: np.ndarray, to_play: int, ko_ban: np.ndarray) -> np.ndarray:
    """float32 [9, N, N]: planes 10..18 of the "extended" observation (own = to_play's stones,
    to_play 0 = Black); ko_ban is the superko-ban plane (bool [N, N]), given by the caller."""
    me, opp = 1 + to_play, 2 - to_play
    libs = liberties(board)
    out = np.zeros((9,) + board.shape, np.float32)
    for d, colour in enumerate((me, opp)):
        mine = board == colour
        out[3 * d + 0] = mine & (libs == 1)
        out[3 * d + 1] = mine & (libs == 2)
        out[3 * d + 2] = mine & (libs >= 3)
    out[6] = ko_ban
    pa = pass_alive(board)
    sign_me = 1 if me == BLACK else -1
    out[7] = pa == sign_me
    out[8] = pa == -sign_me
    return out
