"""kgs-genmove_cleanup: keep playing until the dead stones are off the board.

KGS sends kgs-genmove_cleanup after the players disagreed about which stones
are dead: from then on the board is scored as it stands (every stone alive),
as under Tromp-Taylor, so an engine must capture dead stones rather than
pass. azero's rule for the cleanup phase, in order:

1. Capture. If a legal move captures, play the one capturing most stones
   (lowest point on ties). Stones that can be taken at once are taken.
2. Fill what is still disputed. The useful moves are the legal moves on empty
   points whose empty region touches both colours (or no stone at all) --
   dame, and the liberties of dead stones sitting in our area -- that are not
   self-atari. Points in a region bordered by one colour only are already
   scored for that colour: filling our own gains nothing, playing into the
   opponent's only feeds it stones. The search (its budget as for genmove)
   chooses among the useful moves: most visits, then highest prior.
3. Pass when there is neither a capture nor a useful move. That is when every
   region belongs to one colour, or the only open points are self-atari for us
   (seki, or the opponent's living shape).

Filling the liberties of a dead group eventually puts it in atari, and rule 1
then removes it, so a dead group without two eyes never survives the cleanup.
Everything here is plain Python over an N x N board: a few milliseconds per
move on 19x19, negligible next to the search.
"""

from __future__ import annotations

import dataclasses

import numpy as np

EMPTY = 0


@dataclasses.dataclass
class CleanupMoves:
    """What the cleanup rule needs to know about one position."""

    captures: list[tuple[int, int]]
    """(action, stones captured) of every legal capturing move, most stones first, then lowest action."""
    useful: np.ndarray
    """bool [N*N + 1]: legal non-capturing moves in disputed regions that are not self-atari (pass False)."""


def _neighbours(n: int) -> list[list[int]]:
    nbrs = []
    for p in range(n * n):
        r, c = divmod(p, n)
        nbrs.append([q for q, ok in ((p - n, r > 0), (p + n, r < n - 1), (p - 1, c > 0), (p + 1, c < n - 1)) if ok])
    return nbrs


def _chains(flat: np.ndarray, nbrs: list[list[int]]) -> tuple[list[int], list[set[int]], list[list[int]]]:
    """Chain label per point (-1 for empty), liberties and stones per chain."""
    label = [-1] * len(flat)
    libs: list[set[int]] = []
    stones: list[list[int]] = []
    for p in range(len(flat)):
        if flat[p] == EMPTY or label[p] >= 0:
            continue
        k = len(libs)
        colour = flat[p]
        label[p] = k
        stack, members, lib = [p], [], set()
        while stack:
            q = stack.pop()
            members.append(q)
            for r in nbrs[q]:
                if flat[r] == EMPTY:
                    lib.add(r)
                elif flat[r] == colour and label[r] < 0:
                    label[r] = k
                    stack.append(r)
        libs.append(lib)
        stones.append(members)
    return label, libs, stones


def _region_borders(flat: np.ndarray, nbrs: list[list[int]]) -> list[int]:
    """Per point: bit mask of the colours (1 black, 2 white) bordering its empty region (0 for stones)."""
    border = [0] * len(flat)
    seen = [False] * len(flat)
    for p in range(len(flat)):
        if flat[p] != EMPTY or seen[p]:
            continue
        seen[p] = True
        stack, region, reach = [p], [], 0
        while stack:
            q = stack.pop()
            region.append(q)
            for r in nbrs[q]:
                if flat[r] == EMPTY:
                    if not seen[r]:
                        seen[r] = True
                        stack.append(r)
                else:
                    reach |= int(flat[r])
        for q in region:
            border[q] = reach
    return border


def cleanup_moves(board: np.ndarray, colour: int, legal: np.ndarray) -> CleanupMoves:
    """Captures and useful moves for `colour` (0 Black, 1 White) on `board` (int8 [N, N], 1 black, 2 white).

    `legal` is the bool [N*N + 1] legal mask of azero's rules (superko included).
    """
    n = board.shape[0]
    flat = board.reshape(-1)
    nbrs = _neighbours(n)
    label, libs, stones = _chains(flat, nbrs)
    border = _region_borders(flat, nbrs)
    me, opp = colour + 1, 2 - colour
    useful = np.zeros(n * n + 1, dtype=bool)
    captures: list[tuple[int, int]] = []
    for p in range(n * n):
        if not legal[p]:
            continue
        captured: set[int] = set()
        own_libs: set[int] = set()
        for q in nbrs[p]:
            if flat[q] == EMPTY:
                own_libs.add(q)
            elif flat[q] == opp and libs[label[q]] == {p}:
                captured.add(label[q])
            elif flat[q] == me:
                own_libs |= libs[label[q]]
        if captured:
            captures.append((p, sum(len(stones[k]) for k in captured)))
            continue
        own_libs.discard(p)
        disputed = border[p] in (0, 3)
        if disputed and len(own_libs) >= 2:
            useful[p] = True
    captures.sort(key=lambda ac: (-ac[1], ac[0]))
    return CleanupMoves(captures, useful)
