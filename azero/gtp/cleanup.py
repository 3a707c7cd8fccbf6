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
Chains, liberties and empty regions' owners come from the engine
(GoStates.chains, GoStates.ownership); the rule itself is a few lines of Python
per legal move, negligible next to the search.
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


def cleanup_moves(root, colour: int, legal: np.ndarray) -> CleanupMoves:
    """Captures and useful moves for `colour` (0 Black, 1 White) in the position `root` (GoStates of
    batch 1); `legal` is its bool [N*N + 1] legal mask under azero's rules (superko included)."""
    board = root.board(0)
    n = board.shape[0]
    flat = board.reshape(-1)
    chain, liberties = root.chains(0)
    owner = root.ownership()[0]  # 0 on an empty point: its region reaches both colours, or none
    nbrs = _neighbours(n)
    me, opp = colour + 1, 2 - colour
    useful = np.zeros(n * n + 1, dtype=bool)
    captures: list[tuple[int, int]] = []
    for p in range(n * n):
        if not legal[p]:
            continue
        captured: set[int] = set()
        own_libs = np.zeros(n * n, dtype=bool)
        for q in nbrs[p]:
            if flat[q] == EMPTY:
                own_libs[q] = True
            elif flat[q] == opp and liberties[q].sum() == 1 and liberties[q, p]:
                captured.add(int(chain[q]))
            elif flat[q] == me:
                own_libs |= liberties[q]
        if captured:
            captures.append((p, int(np.isin(chain, list(captured)).sum())))
            continue
        own_libs[p] = False
        if owner[p] == 0 and own_libs.sum() >= 2:
            useful[p] = True
    captures.sort(key=lambda ac: (-ac[1], ac[0]))
    return CleanupMoves(captures, useful)
