# -------------------------------------------------------------------------------------------------
# _c4_board.pxi, included by _connect4.pyx and _c4solver.pyx: the connect-four bitboard, defined once.
#
# Board layout (the usual one): one uint64 per player, bit `c * 7 + r` is the cell in column c
# (0 = left) and row r (0 = bottom). Each column has 7 bits for its 6 rows; the 7th (row 6) is a
# sentinel that is never set, so shifting a bitboard by 1 (vertical), 7 (horizontal), 6 and 8 (the
# two diagonals) never carries a run from one column into the next. Four in a row along shift d
# exists iff `m = b & (b >> d)` has `m & (m >> 2d)` non-zero. winning_cells() gives the empty cells
# that would complete one (the solver's move ordering, the game's threat planes).
# -------------------------------------------------------------------------------------------------

cdef enum:
    WIDTH = 7
    HEIGHT = 6
    STRIDE = 7           # bits per column: HEIGHT rows + 1 sentinel
    CELLS = 42           # playable cells = the most moves a game can last


cdef uint64_t _bottom_row() noexcept nogil:
    cdef uint64_t bits = 0
    cdef int c
    for c in range(WIDTH):
        bits |= <uint64_t>1 << (c * STRIDE)
    return bits

cdef uint64_t BOTTOM = _bottom_row()                                  # row 0 of every column
cdef uint64_t TOP_ROW = BOTTOM << (HEIGHT - 1)                        # row HEIGHT - 1: a column is full iff set
cdef uint64_t BOARD = BOTTOM * ((<uint64_t>1 << HEIGHT) - 1)          # every playable cell
cdef uint64_t COLUMN = (<uint64_t>1 << HEIGHT) - 1                    # column 0's cells (<< c * STRIDE: column c)


cdef inline bint has_four(uint64_t b) noexcept nogil:
    cdef uint64_t m
    m = b & (b >> 1)                # vertical
    if m & (m >> 2):
        return True
    m = b & (b >> STRIDE)           # horizontal
    if m & (m >> (2 * STRIDE)):
        return True
    m = b & (b >> (STRIDE - 1))     # diagonal going down to the right
    if m & (m >> (2 * (STRIDE - 1))):
        return True
    m = b & (b >> (STRIDE + 1))     # diagonal going up to the right
    return (m & (m >> (2 * (STRIDE + 1)))) != 0


cdef inline uint64_t winning_cells(uint64_t pos, uint64_t mask) noexcept nogil:
    """Empty cells that would complete four in a row for the stones `pos` (reachable or not)."""
    cdef uint64_t r, p
    # vertical: three stones directly below
    r = (pos << 1) & (pos << 2) & (pos << 3)
    # horizontal (shift STRIDE) and both diagonals (STRIDE - 1, STRIDE + 1): the empty cell may be
    # at either end of three stones or in either gap of a 2 + 1 split.
    p = (pos << STRIDE) & (pos << (2 * STRIDE))
    r |= p & (pos << (3 * STRIDE))
    r |= p & (pos >> STRIDE)
    p = (pos >> STRIDE) & (pos >> (2 * STRIDE))
    r |= p & (pos << STRIDE)
    r |= p & (pos >> (3 * STRIDE))
    p = (pos << (STRIDE - 1)) & (pos << (2 * (STRIDE - 1)))
    r |= p & (pos << (3 * (STRIDE - 1)))
    r |= p & (pos >> (STRIDE - 1))
    p = (pos >> (STRIDE - 1)) & (pos >> (2 * (STRIDE - 1)))
    r |= p & (pos << (STRIDE - 1))
    r |= p & (pos >> (3 * (STRIDE - 1)))
    p = (pos << (STRIDE + 1)) & (pos << (2 * (STRIDE + 1)))
    r |= p & (pos << (3 * (STRIDE + 1)))
    r |= p & (pos >> (STRIDE + 1))
    p = (pos >> (STRIDE + 1)) & (pos >> (2 * (STRIDE + 1)))
    r |= p & (pos << (STRIDE + 1))
    r |= p & (pos >> (3 * (STRIDE + 1)))
    return r & (BOARD ^ mask)
