# cython: language_level=3, wraparound=False, cdivision=True
"""Batched connect four on bitboards: B positions in one contiguous C array.

The board layout and its constants are games/_c4_board.pxi's (shared with the solver,
azero.games._c4solver); the batch machinery is games/_bitboard_states.pxi's (shared with
tic-tac-toe). What is connect four's own lives here: dropping a stone, the legal columns, the
observation planes and the board printout.

Observations: float32 [3, 6, 7]: own stones, opponent stones, all ones iff player 0 is to move;
row 0 of a plane is the top row of the board (board row HEIGHT - 1). The "threats" feature set
(float32 [5, 6, 7], chosen by the spec's obs_shape) adds two planes: the empty cells where a disc of
the player to move, then of the opponent, would complete four in a row (winning_cells, playable
now or not). See azero.games.base for the interface and its conventions.
"""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy

from leaf_api cimport LEAF_API_VERSION, LeafApi, leaf_api_capsule

import numpy as np

from azero.games import base as _base

include "_c4_board.pxi"

cdef enum:
    NUM_ACTIONS = WIDTH             # one action per column
    NUM_CELLS = CELLS               # cells of one observation plane
    NUM_PLANES = 3                  # basic: own, opponent, colour
    MAX_PLANES = 5                  # threats: then own and opponent winning cells
    NO_ACTION = -1      # C copy of azero.games.base.NO_ACTION for nogil code (checked below)

assert NO_ACTION == _base.NO_ACTION

# Values of C4State.status.
cdef enum:
    ONGOING = 0
    WON_P0 = 1
    WON_P1 = 2
    DRAWN = 3

OBS_SHAPE = (NUM_PLANES, HEIGHT, WIDTH)
FEATURES = {"basic": NUM_PLANES, "threats": MAX_PLANES}
"""Observation feature sets by name: their plane counts (each begins with the basic planes)."""
cdef const char* ENGINE = b"Connect4States"   # the leaf API engine name
GAME = "connect-four"


ctypedef struct C4State:
    uint64_t stones[2]  # stones of player 0 and player 1 (layout above); sentinel bits always 0
    int8_t to_play      # player to move next (also after the game ended)
    int8_t num_moves    # stones on the board, 0..42
    int8_t status       # ONGOING / WON_P0 / WON_P1 / DRAWN; all-zero bytes = initial position

ctypedef C4State State


cdef inline bint is_legal(const C4State* s, int32_t col) noexcept nogil:
    if col < 0 or col >= WIDTH or s.status != ONGOING:
        return False
    return not ((s.stones[0] | s.stones[1]) >> (col * STRIDE + HEIGHT - 1)) & 1


cdef inline void play(C4State* s, int32_t col) noexcept nogil:
    """Drop a stone for the player to move into `col`; the caller guarantees legality."""
    cdef int p = s.to_play
    cdef uint64_t occupied = s.stones[0] | s.stones[1]
    cdef uint64_t column = COLUMN << (col * STRIDE)
    # Column occupancy is a run of low bits, so adding its bottom bit yields the next free cell.
    cdef uint64_t move = (occupied + (<uint64_t>1 << (col * STRIDE))) & column
    s.stones[p] |= move
    s.num_moves += 1
    s.to_play = 1 - p
    if has_four(s.stones[p]):
        s.status = WON_P0 if p == 0 else WON_P1
    elif s.num_moves == CELLS:
        s.status = DRAWN


cdef inline float playout(C4State* s, uint64_t rng) noexcept nogil:
    cdef int32_t cols[WIDTH]
    cdef int n, c
    cdef uint64_t free_top
    while s.status == ONGOING:
        free_top = ~(s.stones[0] | s.stones[1]) & TOP_ROW
        n = 0
        for c in range(WIDTH):
            if (free_top >> (c * STRIDE + HEIGHT - 1)) & 1:
                cols[n] = c
                n += 1
        # Multiply-shift maps 32 random bits to [0, n); bias is below n / 2**32.
        play(s, cols[((next_u64(&rng) >> 32) * <uint64_t>n) >> 32])
    return outcome_of(s)


cdef inline void legal_row(const C4State* s, uint8_t* out) noexcept nogil:
    """out[c] = whether column c takes a stone (all 0 once the game is over)."""
    cdef uint64_t free_top = 0
    cdef int c
    if s.status == ONGOING:
        free_top = ~(s.stones[0] | s.stones[1]) & TOP_ROW
    for c in range(WIDTH):
        out[c] = (free_top >> (c * STRIDE + HEIGHT - 1)) & 1


cdef inline void encode_row(const C4State* s, float* planes, int num_planes) noexcept nogil:
    """One observation: num_planes (NUM_PLANES or MAX_PLANES) planes of HEIGHT x WIDTH, plane-major
    then row-major, row 0 = the top row."""
    cdef int r, c, bit
    cdef uint64_t own = s.stones[s.to_play]
    cdef uint64_t opp = s.stones[1 - s.to_play]
    cdef uint64_t occupied = own | opp
    cdef uint64_t own_wins = 0, opp_wins = 0
    cdef float colour = 1.0 if s.to_play == 0 else 0.0
    cdef bint threats = num_planes == MAX_PLANES
    if threats:
        own_wins = winning_cells(own, occupied)
        opp_wins = winning_cells(opp, occupied)
    for r in range(HEIGHT):
        for c in range(WIDTH):
            bit = c * STRIDE + (HEIGHT - 1 - r)
            planes[r * WIDTH + c] = (own >> bit) & 1
            planes[CELLS + r * WIDTH + c] = (opp >> bit) & 1
            planes[2 * CELLS + r * WIDTH + c] = colour
            if threats:
                planes[3 * CELLS + r * WIDTH + c] = (own_wins >> bit) & 1
                planes[4 * CELLS + r * WIDTH + c] = (opp_wins >> bit) & 1


cdef str occupied(int32_t action):
    return f"column {action + 1} is full"


cdef inline int8_t cell(const C4State* s, int r, int c) noexcept nogil:
    """board(): 0 empty, 1 player 0, 2 player 1 at row r (0 = the top row), column c."""
    cdef int bit = c * STRIDE + (HEIGHT - 1 - r)
    return ((s.stones[0] >> bit) & 1) + 2 * ((s.stones[1] >> bit) & 1)


include "_bitboard_states.pxi"


cdef class Connect4States(BitboardStates):
    """A batch of connect-four positions (implements azero.games.base.States).

    Construct through Connect4Game.new_states(batch).
    """

    def render(self, index):
        """The board with X = player 0, O = player 1, column numbers, and who is to move or won."""
        grid = self.board(index)
        lines = [" ".join(".XO"[v] for v in row) for row in grid]
        lines.append(" ".join(str(c + 1) for c in range(WIDTH)))
        lines.append(self._status_line(<Py_ssize_t>index))
        return "\n".join(lines)
