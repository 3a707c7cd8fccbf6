# cython: language_level=3, wraparound=False, boundscheck=False, cdivision=True
"""A perfect connect-four solver: bitboard negamax, alpha-beta, transposition table.

Board layout is azero.games._connect4's, defined once in games/_c4_board.pxi: bit
`c * 7 + r` is column c (0 = left), row r (0 = bottom); the 7th bit of every column is an
always-empty sentinel, so shifts by 1, 6, 7 and 8 never carry a line from one column into the next.

A position is (current, mask, moves): the stones of the player to move, all
stones, and how many have been played. Its value is the usual exact score
(the one of J. Pons' connect-four solver write-up):

    score > 0   the player to move wins with their k-th stone, score = 22 - k
    score = 0   draw with perfect play
    score < 0   the opponent wins with their k-th stone, score = -(22 - k)

so a faster win scores higher; the sign is the game-theoretic value (win /
draw / loss). Scores lie in [-21, 21] and fit an int8.

The search (all `noexcept nogil`, no Python per node):

- negamax with alpha-beta; its precondition is that the player to move cannot
  win at once (the caller checks), so it only needs the opponent's threats;
- it considers only "non-losing" moves: a forced block when the opponent
  threatens one cell, none when they threaten two, and never a cell directly
  below an opponent's winning cell;
- moves are ordered by how many winning cells they create for the mover
  (threats), ties broken centre-first (the centre lies on the most lines);
- the score range of a node shrinks before it is searched: without an
  immediate win the mover can do no better than winning with their next
  stone, and after a non-losing move the opponent no better than with their
  second; a transposition table adds stored lower and upper bounds;
- the root value is found by null-window searches [v, v + 1] (each a yes/no
  question "is the score > v?"), bisecting the score range; win/draw/loss
  needs at most two of them (v = 0, then v = -1).

Transposition table: `size` entries (a prime >= 2**17), index = key % size,
each holding the low 32 bits of the key plus a lower and an upper bound. The
key `current + mask + bottom row` is unique and below 2**49 (per column: a 1
above the top stone, the mover's stones below it), so by the Chinese remainder
theorem (key % size, key % 2**32) identifies the key exactly: an entry whose
stored 32 bits match is that position, never a collision. Replacement is
always-replace. Results never depend on the table's content (only the node
count does), so every answer is deterministic.

Python API: Solver(tt_entries) with score / solve / move_values / move_scores /
optimal_moves, and parse_moves / parse_board; azero.games.c4solver documents
the notation and wraps one Solver per thread.
"""

from libc.stdint cimport int8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free

import numpy as np


cdef inline int popcount64(uint64_t x) noexcept nogil:
    # Winning-cell sets are sparse; clearing the lowest bit per step beats the portable
    # __builtin_popcountll, which compiles to a library call without -mpopcnt.
    cdef int n = 0
    while x:
        x &= x - 1
        n += 1
    return n

include "_c4_board.pxi"

cdef enum:
    NO_LOWER = -128      # table bound sentinels: "nothing known"
    NO_UPPER = 127
    MIN_TABLE = 131101   # smallest table size: a prime > 2**17, so the CRT argument above holds

# What child_values computes.
cdef enum:
    EXACT = 0
    WDL = 1
    OPTIMAL = 2


# Columns centre first: 3, 2, 4, 1, 5, 0, 6.
cdef int ORDER[WIDTH]
cdef int _i
for _i in range(WIDTH):
    ORDER[_i] = WIDTH // 2 + (1 - 2 * (_i % 2)) * ((_i + 1) // 2)


ctypedef struct Table:
    uint32_t* keys      # [size] low 32 bits of the key (0 in an unused entry, whose bounds say nothing)
    int8_t* lower       # [size] score >= lower (NO_LOWER: unknown)
    int8_t* upper       # [size] score <= upper (NO_UPPER: unknown)
    uint64_t size
    uint64_t nodes      # negamax calls since the solver was made


cdef inline uint64_t playable(uint64_t mask) noexcept nogil:
    # Adding a column's bottom bit to its run of stones lands on the first free cell.
    return (mask + BOTTOM) & BOARD


cdef inline bint can_win_now(uint64_t cur, uint64_t mask) noexcept nogil:
    return (winning_cells(cur, mask) & playable(mask)) != 0


cdef inline uint64_t nonlosing_moves(uint64_t cur, uint64_t mask) noexcept nogil:
    """Playable cells after which the opponent cannot win at once (0: every move loses)."""
    cdef uint64_t moves = playable(mask)
    cdef uint64_t opp_win = winning_cells(cur ^ mask, mask)
    cdef uint64_t forced = moves & opp_win
    if forced:
        if forced & (forced - 1):
            return 0            # two immediate threats: only one can be blocked
        moves = forced
    # Playing directly below an opponent's winning cell lets them play into it.
    return moves & ~(opp_win >> 1)


cdef inline void store(Table* t, uint64_t key, int lower, int upper) noexcept nogil:
    """Record lower <= score <= upper, tightening what is known when the entry already holds this key."""
    cdef uint64_t i = key % t.size
    cdef uint32_t k = <uint32_t>key
    if t.keys[i] != k:
        t.keys[i] = k
        t.lower[i] = NO_LOWER
        t.upper[i] = NO_UPPER
    if lower > t.lower[i]:
        t.lower[i] = <int8_t>lower
    if upper < t.upper[i]:
        t.upper[i] = <int8_t>upper


cdef int negamax(Table* t, uint64_t cur, uint64_t mask, int moves, int alpha, int beta) noexcept nogil:
    """Score of (cur, mask) if it lies in (alpha, beta); else a bound on the same side of the window.

    Precondition: the game is not over and the player to move cannot win with this move.
    Returns v with: v <= alpha implies score <= v; v >= beta implies score >= v.
    """
    cdef uint64_t nxt, key, i, m
    cdef uint64_t mv[WIDTH]
    cdef int sc[WIDTH]
    cdef int n = 0, j, k, s, lo, hi, alpha_in
    t.nodes += 1
    nxt = nonlosing_moves(cur, mask)
    if nxt == 0:
        return -(CELLS - moves) / 2          # the opponent wins with their next stone
    if moves >= CELLS - 2:
        return 0                             # two cells left, neither side can win on them
    lo = -(CELLS - 2 - moves) / 2            # the opponent wins with their second stone at best
    hi = (CELLS - 1 - moves) / 2             # we win with our second stone at best
    key = cur + mask + BOTTOM
    i = key % t.size
    if t.keys[i] == <uint32_t>key:
        if t.lower[i] > lo:
            lo = t.lower[i]
        if t.upper[i] < hi:
            hi = t.upper[i]
    if alpha < lo:
        alpha = lo
        if alpha >= beta:
            return alpha
    if beta > hi:
        beta = hi
        if alpha >= beta:
            return beta

    # Ordering by winning cells created (threats); the insertion sort is stable, so ties go
    # centre-first. (A remembered best move per table entry was tried: it saved no nodes.)
    for j in range(WIDTH):
        m = nxt & (COLUMN << (ORDER[j] * STRIDE))
        if m:
            s = popcount64(winning_cells(cur | m, mask | m))
            k = n
            while k > 0 and sc[k - 1] < s:
                mv[k] = mv[k - 1]
                sc[k] = sc[k - 1]
                k -= 1
            mv[k] = m
            sc[k] = s
            n += 1

    alpha_in = alpha
    for j in range(n):
        # The child's player to move is the opponent, whose stones are mask ^ cur.
        s = -negamax(t, cur ^ mask, mask | mv[j], moves + 1, -beta, -alpha)
        if s >= beta:
            store(t, key, s, NO_UPPER)
            return s
        if s > alpha:
            alpha = s
    # Every move scored <= alpha (fail low) or alpha is exact (raised by a move).
    store(t, key, alpha if alpha > alpha_in else NO_LOWER, alpha)
    return alpha


cdef int solve_score(Table* t, uint64_t cur, uint64_t mask, int moves) noexcept nogil:
    """Exact score of a position that is not over."""
    cdef int lo, hi, med, r
    if can_win_now(cur, mask):
        return (CELLS + 1 - moves) / 2
    lo = -(CELLS - moves) / 2
    hi = (CELLS + 1 - moves) / 2
    while lo < hi:
        med = lo + (hi - lo) / 2
        # Probe near 0 first: proving the sign is cheap compared with pinning a distant score.
        if med <= 0 and lo / 2 < med:
            med = lo / 2
        elif med >= 0 and hi / 2 > med:
            med = hi / 2
        r = negamax(t, cur, mask, moves, med, med + 1)
        if r <= med:
            hi = r
        else:
            lo = r
    return lo


cdef int solve_wdl(Table* t, uint64_t cur, uint64_t mask, int moves) noexcept nogil:
    """+1 / 0 / -1 for the player to move in a position that is not over."""
    if can_win_now(cur, mask):
        return 1
    if negamax(t, cur, mask, moves, 0, 1) > 0:
        return 1
    return -1 if negamax(t, cur, mask, moves, -1, 0) < 0 else 0


cdef bint move_above(Table* t, uint64_t cur, uint64_t mask, int moves, uint64_t m, int v) noexcept nogil:
    """Whether playing the cell m scores more than v (-1 or 0) for the player to move: one null window."""
    if winning_cells(cur, mask) & m:
        return True                          # wins at once
    if moves + 1 == CELLS:
        return 0 > v                         # the last cell, not winning: a draw
    cur ^= mask                              # the child: the opponent moves, cur = their stones
    mask |= m
    if can_win_now(cur, mask):
        return False                         # the opponent wins at once: score < 0 <= v + 1
    # Our score > v  <=>  the child's score < -v  <=>  its search in (-v - 1, -v) fails low.
    return negamax(t, cur, mask, moves + 1, -v - 1, -v) <= -v - 1


cdef int child_values(Table* t, uint64_t cur, uint64_t mask, int moves, int mode, int* out,
                      bint* legal) noexcept nogil:
    """out[c]: value of playing column c for the player to move, legal[c]: whether c is playable.

    mode EXACT: exact scores; returns 0. mode WDL: +1 / 0 / -1; returns the position's WDL
    value. mode OPTIMAL: out[c] = 1 if column c keeps the position's WDL value, else 0; returns
    that value.

    WDL asks one yes/no question per move where it can: the root value V bounds every move
    (no move beats V), so with V = -1 nothing is searched, with V = 0 "is it > -1?" settles a
    move, and with V = 1 "is it > 0?" settles the winning moves (the others need one more,
    which OPTIMAL skips).
    """
    cdef int c, root = 0
    cdef uint64_t m
    if mode != EXACT:
        root = solve_wdl(t, cur, mask, moves)
    for c in range(WIDTH):
        m = (mask + (<uint64_t>1 << (c * STRIDE))) & (COLUMN << (c * STRIDE))
        legal[c] = m != 0
        out[c] = 0
        if not legal[c]:
            continue
        if mode == EXACT:
            if winning_cells(cur, mask) & m:
                out[c] = (CELLS + 1 - moves) / 2
            elif moves + 1 < CELLS:
                out[c] = -solve_score(t, cur ^ mask, mask | m, moves + 1)
        elif mode == OPTIMAL:
            out[c] = root == -1 or move_above(t, cur, mask, moves, m, root - 1)
        elif root == -1:
            out[c] = -1
        elif root == 1 and move_above(t, cur, mask, moves, m, 0):
            out[c] = 1
        else:
            out[c] = 0 if move_above(t, cur, mask, moves, m, -1) else -1
    return root


cdef uint64_t _next_prime(uint64_t n):
    cdef uint64_t d
    if n <= 2:
        return 2
    n |= 1
    while True:
        d = 3
        while d * d <= n and n % d:
            d += 2
        if d * d > n:
            return n
        n += 2


def parse_moves(moves):
    """(current, mask, moves) after a column sequence: '4453' or [4, 4, 5, 3], columns 1..7.

    Spaces in a string are ignored. Raises ValueError naming the first bad move: not a
    column, a full column, or a move after the game was won; and for a finished game.
    """
    cdef uint64_t cur = 0, mask = 0, m
    cdef int n = 0, col
    if isinstance(moves, str):
        tokens = [ch for ch in moves if not ch.isspace()]
    else:
        tokens = list(moves)
    for k, tok in enumerate(tokens, 1):
        if isinstance(tok, str):
            if len(tok) != 1 or not "1" <= tok <= "7":
                raise ValueError(f"move {k} ({tok!r}): not a column 1..{WIDTH}")
            col = int(tok) - 1
        else:
            if isinstance(tok, bool) or not isinstance(tok, (int, np.integer)) or not 1 <= tok <= WIDTH:
                raise ValueError(f"move {k} ({tok!r}): not a column 1..{WIDTH}")
            col = int(tok) - 1
        if has_four(cur ^ mask):     # the player who just moved completed four
            raise ValueError(f"move {k} ({col + 1}): the game was already won after move {k - 1}")
        m = (mask + (<uint64_t>1 << (col * STRIDE))) & (COLUMN << (col * STRIDE))
        if m == 0:
            raise ValueError(f"move {k} ({col + 1}): column {col + 1} is full")
        cur ^= mask                  # the other player moves next: cur becomes the opponent's stones
        mask |= m
        n += 1
    if has_four(cur ^ mask):
        raise ValueError(f"the game is over after move {n} (won): nothing to solve")
    if n == CELLS:
        raise ValueError("the board is full (draw): nothing to solve")
    return cur, mask, n


def parse_board(board):
    """(current, mask, moves) of a board as Connect4States.board gives it.

    int [6, 7]: 0 empty, 1 the first player's stone, 2 the second's; row 0 is the top. The
    player to move follows from the stone counts. Raises ValueError for a board that no game
    reaches (floating stones, wrong counts) or that is finished (four in a row, or full).
    """
    arr = np.asarray(board)
    if arr.shape != (HEIGHT, WIDTH) or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"board: expected an integer array of shape ({HEIGHT}, {WIDTH}), got {arr.shape} {arr.dtype}")
    cdef uint64_t stones[2]
    cdef uint64_t cur, mask
    cdef int r, c, v, n0 = 0, n1 = 0
    cdef bint seen_empty
    stones[0] = stones[1] = 0
    for c in range(WIDTH):
        seen_empty = False
        for r in range(HEIGHT):              # bottom (array row HEIGHT - 1) upwards
            v = int(arr[HEIGHT - 1 - r, c])
            if v == 0:
                seen_empty = True
                continue
            if v not in (1, 2):
                raise ValueError(f"board: cell values must be 0, 1 or 2, got {v}")
            if seen_empty:
                raise ValueError(f"board: column {c + 1} has a stone above an empty cell")
            stones[v - 1] |= <uint64_t>1 << (c * STRIDE + r)
            if v == 1:
                n0 += 1
            else:
                n1 += 1
    if not (n0 == n1 or n0 == n1 + 1):
        raise ValueError(f"board: {n0} first-player and {n1} second-player stones; no game reaches that")
    if has_four(stones[0]) or has_four(stones[1]):
        raise ValueError("board: the game is over (four in a row): nothing to solve")
    if n0 + n1 == CELLS:
        raise ValueError("board: the board is full (draw): nothing to solve")
    mask = stones[0] | stones[1]
    cur = stones[0] if n0 == n1 else stones[1]
    return cur, mask, n0 + n1


def parse_position(position):
    """(current, mask, moves) of a column sequence (parse_moves) or a numpy board (parse_board)."""
    if isinstance(position, np.ndarray):
        return parse_board(position)
    return parse_moves(position)


cdef class Solver:
    """A solver with its own transposition table; reuse one object so later positions profit from it.

    Every method takes a position as a column sequence ('4453' or [4, 4, 5, 3], see
    parse_moves) or as a board array (see parse_board). One Solver must not be used from two
    threads at once; separate Solvers may run in parallel threads (the search releases the GIL).
    """

    cdef Table t

    def __cinit__(self, tt_entries=1 << 23):
        cdef uint64_t size = _next_prime(max(int(tt_entries), MIN_TABLE))
        self.t.size = size
        self.t.nodes = 0
        self.t.keys = <uint32_t*>calloc(size, sizeof(uint32_t))
        self.t.lower = <int8_t*>calloc(size, sizeof(int8_t))
        self.t.upper = <int8_t*>calloc(size, sizeof(int8_t))
        if self.t.keys == NULL or self.t.lower == NULL or self.t.upper == NULL:
            raise MemoryError(f"cannot allocate a transposition table of {size} entries")
        self.reset()

    def __dealloc__(self):
        free(self.t.keys)
        free(self.t.lower)
        free(self.t.upper)

    @property
    def tt_entries(self):
        """Entries of the transposition table (a prime)."""
        return self.t.size

    @property
    def nodes(self):
        """negamax nodes searched by this solver so far."""
        return self.t.nodes

    def reset(self):
        """Empty the transposition table (results never depend on it; node counts do)."""
        cdef uint64_t i
        with nogil:
            for i in range(self.t.size):
                self.t.keys[i] = 0
                self.t.lower[i] = NO_LOWER
                self.t.upper[i] = NO_UPPER

    def score(self, position):
        """Exact score of the position for the player to move (module docstring)."""
        cur, mask, n = parse_position(position)
        return self._score(cur, mask, n)

    def solve(self, position):
        """+1 win, 0 draw, -1 loss for the player to move (cheaper than score())."""
        cur, mask, n = parse_position(position)
        return self._wdl(cur, mask, n)

    def move_values(self, position):
        """float64 [7]: WDL value for the mover of playing each column (index 0 = column 1); NaN if full."""
        return self._children(position, WDL)[1]

    def move_scores(self, position):
        """float64 [7]: exact score for the mover of playing each column; NaN if full."""
        return self._children(position, EXACT)[1]

    def optimal_moves(self, position):
        """(value, keeps): the position's WDL value and bool [7], the columns that keep it.

        Cheaper than move_values in won positions: a move that does not win is not asked
        whether it draws or loses.
        """
        root, out = self._children(position, OPTIMAL)
        return root, out == 1

    cdef int _score(self, uint64_t cur, uint64_t mask, int n):
        cdef int r
        with nogil:
            r = solve_score(&self.t, cur, mask, n)
        return r

    cdef int _wdl(self, uint64_t cur, uint64_t mask, int n):
        cdef int r
        with nogil:
            r = solve_wdl(&self.t, cur, mask, n)
        return r

    cdef tuple _children(self, position, int mode):
        cdef uint64_t cur, mask
        cdef int n, c, root
        cdef int vals[WIDTH]
        cdef bint legal[WIDTH]
        cur, mask, n = parse_position(position)
        with nogil:
            root = child_values(&self.t, cur, mask, n, mode, vals, legal)
        out = np.full(WIDTH, np.nan)
        for c in range(WIDTH):
            if legal[c]:
                out[c] = vals[c]
        return root, out
