# cython: language_level=3, wraparound=False, cdivision=True
"""Batched tic-tac-toe on 9-bit bitboards: B positions in one contiguous C array.

Cell (r, c) (r = 0 top, c = 0 left) is bit and action r * 3 + c of each
player's uint16. A player has won iff one of the 8 line masks is a subset of
their stones. The batch machinery is games/_bitboard_states.pxi's (shared with
connect four); what is tic-tac-toe's own lives here.

Observations: float32 [3, 3, 3]: own marks, opponent marks, all ones iff player 0 (X)
is to move. See azero.games.base for the interface and its conventions.
"""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint16_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy

from leaf_api cimport LEAF_API_VERSION, LeafApi, leaf_api_capsule

import numpy as np

from azero.games import base as _base

cdef enum:
    SIZE = 3
    NUM_CELLS = 9       # = NUM_ACTIONS = MAX_MOVES
    NUM_ACTIONS = NUM_CELLS
    NUM_PLANES = 3
    MAX_PLANES = NUM_PLANES     # no richer feature set
    FULL = 0x1FF        # all nine cells
    NO_ACTION = -1      # C copy of azero.games.base.NO_ACTION for nogil code (checked below)

assert NO_ACTION == _base.NO_ACTION

# Values of TTTState.status.
cdef enum:
    ONGOING = 0
    WON_P0 = 1
    WON_P1 = 2
    DRAWN = 3

OBS_SHAPE = (NUM_PLANES, SIZE, SIZE)
cdef const char* ENGINE = b"TicTacToeStates"  # the leaf API engine name
GAME = "tic-tac-toe"

# The 8 winning lines: three rows, three columns, two diagonals.
cdef uint16_t LINES[8]
LINES[:] = [0x007, 0x038, 0x1C0, 0x049, 0x092, 0x124, 0x111, 0x054]


ctypedef struct TTTState:
    uint16_t stones[2]  # stones of player 0 (X) and player 1 (O); bit r * 3 + c
    int8_t to_play      # player to move next (also after the game ended)
    int8_t num_moves    # stones on the board, 0..9
    int8_t status       # ONGOING / WON_P0 / WON_P1 / DRAWN; all-zero bytes = initial position

ctypedef TTTState State


cdef inline bint has_line(uint16_t b) noexcept nogil:
    cdef int i
    for i in range(8):
        if (b & LINES[i]) == LINES[i]:
            return True
    return False


cdef inline bint is_legal(const TTTState* s, int32_t cell) noexcept nogil:
    if cell < 0 or cell >= NUM_CELLS or s.status != ONGOING:
        return False
    return not ((s.stones[0] | s.stones[1]) >> cell) & 1


cdef inline uint16_t legal_cells(const TTTState* s) noexcept nogil:
    """Bit i set iff cell i is playable (0 when the game is over)."""
    if s.status != ONGOING:
        return 0
    return ~(s.stones[0] | s.stones[1]) & FULL


cdef inline void play(TTTState* s, int32_t cell) noexcept nogil:
    """Mark `cell` for the player to move; the caller guarantees legality."""
    cdef int p = s.to_play
    s.stones[p] |= <uint16_t>(1 << cell)
    s.num_moves += 1
    s.to_play = 1 - p
    if has_line(s.stones[p]):
        s.status = WON_P0 if p == 0 else WON_P1
    elif s.num_moves == NUM_CELLS:
        s.status = DRAWN


cdef inline float playout(TTTState* s, uint64_t rng) noexcept nogil:
    cdef int32_t cells[NUM_CELLS]
    cdef int n, i
    cdef uint16_t bits
    while s.status == ONGOING:
        bits = legal_cells(s)
        n = 0
        for i in range(NUM_CELLS):
            if (bits >> i) & 1:
                cells[n] = i
                n += 1
        # Multiply-shift maps 32 random bits to [0, n); bias is below n / 2**32.
        play(s, cells[((next_u64(&rng) >> 32) * <uint64_t>n) >> 32])
    return outcome_of(s)


cdef inline void legal_row(const TTTState* s, uint8_t* out) noexcept nogil:
    """out[i] = whether cell i is playable (all 0 once the game is over)."""
    cdef uint16_t bits = legal_cells(s)
    cdef int i
    for i in range(NUM_CELLS):
        out[i] = (bits >> i) & 1


cdef inline void encode_row(const TTTState* s, float* planes, int num_planes) noexcept nogil:
    """One observation: 3 planes of 3 x 3 (num_planes is always 3); cell i = r * 3 + c is also its
    offset in a plane."""
    cdef int i
    cdef uint16_t own = s.stones[s.to_play]
    cdef uint16_t opp = s.stones[1 - s.to_play]
    cdef float colour = 1.0 if s.to_play == 0 else 0.0
    for i in range(NUM_CELLS):
        planes[i] = (own >> i) & 1
        planes[NUM_CELLS + i] = (opp >> i) & 1
        planes[2 * NUM_CELLS + i] = colour


cdef str occupied(int32_t action):
    return f"cell {action} (row {action // SIZE}, column {action % SIZE}) is occupied"


cdef inline int8_t cell(const TTTState* s, int r, int c) noexcept nogil:
    """board(): 0 empty, 1 player 0 (X), 2 player 1 (O) at row r (0 = top), column c."""
    cdef int i = r * SIZE + c
    return ((s.stones[0] >> i) & 1) + 2 * ((s.stones[1] >> i) & 1)


include "_bitboard_states.pxi"


cdef class TicTacToeStates(BitboardStates):
    """A batch of tic-tac-toe positions (implements azero.games.base.States).

    Construct through TicTacToeGame.new_states(batch).
    """

    def render(self, index):
        """The board (X = player 0, O = player 1) beside the action numbers, and who is to move or won."""
        grid = self.board(index)
        lines = [" ".join(".XO"[v] for v in row) + "   " + " ".join(str(r * SIZE + c) for c in range(SIZE))
                 for r, row in enumerate(grid)]
        lines.append(self._status_line(<Py_ssize_t>index))
        return "\n".join(lines)
