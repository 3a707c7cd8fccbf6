# cython: language_level=3, wraparound=False, cdivision=True
"""Batched connect four on bitboards: B positions in one contiguous C array.

Board layout (the usual one): one uint64 per player, bit `c * 7 + r` is the cell
in column c (0 = left) and row r (0 = bottom). Each column has 7 bits for its 6
rows; the 7th (row 6) is a sentinel that is never set, so shifting a bitboard
by 1 (vertical), 7 (horizontal), 6 and 8 (the two diagonals) never carries a
run from one column into the next. Four in a row along shift d exists iff
`m = b & (b >> d)` has `m & (m >> 2d)` non-zero.

Every batched method validates its Python arguments once, then runs one
`with nogil:` loop over `noexcept nogil` helpers; nothing touches Python per
state. The GIL is released in those loops so that other threads (an inference
server, say) keep running; like a numpy array, one States object must not be
mutated from two threads at once. See azero.games.base for the interface and
its conventions.
"""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy

from leaf_api cimport LEAF_API_VERSION, LeafApi, leaf_api_capsule

import operator

import numpy as np

from azero.games import base as _base
from azero.games.base import IllegalActionError, check_actions, check_index, check_out, check_paths, check_query

cdef enum:
    WIDTH = 7
    HEIGHT = 6
    STRIDE = 7          # bits per column: HEIGHT rows + 1 sentinel
    NUM_ACTIONS = 7     # one action per column
    MAX_MOVES = 42
    NUM_PLANES = 3
    NO_ACTION = -1      # C copy of azero.games.base.NO_ACTION for nogil code (checked below)

assert NO_ACTION == _base.NO_ACTION

# Values of C4State.status.
cdef enum:
    ONGOING = 0
    WON_P0 = 1
    WON_P1 = 2
    DRAWN = 3

cdef uint64_t _top_row() noexcept nogil:
    cdef uint64_t bits = 0
    cdef int c
    for c in range(WIDTH):
        bits |= <uint64_t>1 << (c * STRIDE + HEIGHT - 1)
    return bits

# Bit r = HEIGHT - 1 of every column: a column is full iff its top cell is taken.
cdef uint64_t TOP_ROW = _top_row()
# The HEIGHT playable bits of column 0 (shift by c * STRIDE for column c).
cdef uint64_t COLUMN_BITS = (<uint64_t>1 << HEIGHT) - 1


ctypedef struct C4State:
    uint64_t stones[2]  # stones of player 0 and player 1 (layout above); sentinel bits always 0
    int8_t to_play      # player to move next (also after the game ended)
    int8_t num_moves    # stones on the board, 0..42
    int8_t status       # ONGOING / WON_P0 / WON_P1 / DRAWN; all-zero bytes = initial position


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
    if m & (m >> (2 * (STRIDE + 1))):
        return True
    return False


cdef inline bint is_legal(const C4State* s, int32_t col) noexcept nogil:
    if col < 0 or col >= WIDTH or s.status != ONGOING:
        return False
    return not ((s.stones[0] | s.stones[1]) >> (col * STRIDE + HEIGHT - 1)) & 1


cdef inline void play(C4State* s, int32_t col) noexcept nogil:
    """Drop a stone for the player to move into `col`; the caller guarantees legality."""
    cdef int p = s.to_play
    cdef uint64_t occupied = s.stones[0] | s.stones[1]
    cdef uint64_t column = COLUMN_BITS << (col * STRIDE)
    # Column occupancy is a run of low bits, so adding its bottom bit yields the next free cell.
    cdef uint64_t move = (occupied + (<uint64_t>1 << (col * STRIDE))) & column
    s.stones[p] |= move
    s.num_moves += 1
    s.to_play = 1 - p
    if has_four(s.stones[p]):
        s.status = WON_P0 if p == 0 else WON_P1
    elif s.num_moves == MAX_MOVES:
        s.status = DRAWN


cdef inline float outcome_of(const C4State* s) noexcept nogil:
    if s.status == WON_P0:
        return 1.0
    if s.status == WON_P1:
        return -1.0
    return 0.0


# splitmix64 (Steele, Lea, Flood 2014): tiny, statistically solid, and seeded per
# state so a playout depends only on (seed, b), never on B or on thread order.
cdef inline uint64_t mix64(uint64_t z) noexcept nogil:
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t next_u64(uint64_t* state) noexcept nogil:
    state[0] += <uint64_t>0x9E3779B97F4A7C15ULL
    return mix64(state[0])


cdef inline uint64_t stream_seed(uint64_t seed, uint64_t b) noexcept nogil:
    # Mixing the seed before adding b keeps streams (seed, b) and (seed + 1, b - 1) apart.
    return mix64(mix64(seed) + b * <uint64_t>0xD1B54A32D192ED03ULL)


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


cdef const int64_t[::1] as_indices(object index, Py_ssize_t n):
    """base.check_index with a fast path: a C-contiguous 1-D int64 array is range-checked in C.

    Anything else, and any failure, goes through check_index itself, so conversions
    and error messages are exactly the shared ones.
    """
    cdef const int64_t[::1] idx
    cdef Py_ssize_t k
    cdef bint ok = True
    if not (type(index) is np.ndarray and index.ndim == 1 and index.dtype == np.int64
            and index.flags.c_contiguous):
        return check_index(index, n)
    idx = index
    with nogil:
        for k in range(idx.shape[0]):
            if idx[k] < 0 or idx[k] >= n:
                ok = False
                break
    if not ok:
        check_index(index, n)  # raises the shared error message
    return idx


# The leaf API (games/leaf_api.pxd): the search's per-step calls, shared with the Python methods
# load_paths / query / encode below. ctx is &Connect4States._s (a C4State**): apply_paths swaps the
# array behind that field, the field itself stays put.

cdef Py_ssize_t c4_load_paths(void* dst, const void* src, const int64_t* games, const int32_t* paths,
                              Py_ssize_t m, Py_ssize_t length, Py_ssize_t* bad_step) noexcept nogil:
    cdef C4State* d = (<C4State**>dst)[0]
    cdef const C4State* s = (<C4State**>src)[0]
    cdef Py_ssize_t k, j
    cdef int32_t a
    for k in range(m):
        d[k] = s[games[k]]
        for j in range(length):
            a = paths[k * length + j]
            if a == NO_ACTION:
                continue
            if not is_legal(&d[k], a):
                bad_step[0] = j
                return k
            play(&d[k], a)
    return -1


cdef void c4_query(const void* ctx, Py_ssize_t n, uint8_t* legal, uint8_t* terminal, int8_t* to_play,
                   float* outcome) noexcept nogil:
    cdef const C4State* s = (<C4State**>ctx)[0]
    cdef Py_ssize_t b
    cdef int c
    cdef uint64_t free_top
    for b in range(n):
        free_top = 0
        if s[b].status == ONGOING:
            free_top = ~(s[b].stones[0] | s[b].stones[1]) & TOP_ROW
        for c in range(WIDTH):
            legal[b * WIDTH + c] = (free_top >> (c * STRIDE + HEIGHT - 1)) & 1
        terminal[b] = s[b].status != ONGOING
        to_play[b] = s[b].to_play
        outcome[b] = outcome_of(&s[b])


cdef void c4_encode(const void* ctx, Py_ssize_t n, float* out) noexcept nogil:
    """Rows [0, n) of encode(): 3 planes of HEIGHT x WIDTH per state, row 0 = the top row."""
    cdef const C4State* s = (<C4State**>ctx)[0]
    cdef Py_ssize_t b
    cdef int r, c, bit
    cdef uint64_t own, opp
    cdef float colour
    cdef float* planes  # the 3 * 42 floats of state b, plane-major then row-major
    for b in range(n):
        planes = out + b * (NUM_PLANES * HEIGHT * WIDTH)
        own = s[b].stones[s[b].to_play]
        opp = s[b].stones[1 - s[b].to_play]
        colour = 1.0 if s[b].to_play == 0 else 0.0
        for r in range(HEIGHT):
            for c in range(WIDTH):
                bit = c * STRIDE + (HEIGHT - 1 - r)
                planes[r * WIDTH + c] = (own >> bit) & 1
                planes[HEIGHT * WIDTH + r * WIDTH + c] = (opp >> bit) & 1
                planes[2 * HEIGHT * WIDTH + r * WIDTH + c] = colour


cdef class Connect4States:
    """A batch of connect-four positions (implements azero.games.base.States).

    Construct through Connect4Game.new_states(batch).
    """

    cdef C4State* _s        # [B] the positions
    cdef C4State* _scratch  # [B] spare buffer: apply_paths plays into it, then swaps
    cdef Py_ssize_t _n
    cdef LeafApi _api       # handed out by _leaf_api(); ctx = &self._s
    cdef readonly object spec

    def __cinit__(self, Py_ssize_t batch, object spec):
        if batch < 0:
            raise ValueError(f"batch must be >= 0, got {batch}")
        self._n = batch
        self.spec = spec
        # calloc zeroes the memory, and all-zero bytes are the initial position.
        self._s = <C4State*>calloc(batch if batch > 0 else 1, sizeof(C4State))
        self._scratch = <C4State*>calloc(batch if batch > 0 else 1, sizeof(C4State))
        if self._s == NULL or self._scratch == NULL:
            raise MemoryError(f"cannot allocate {batch} connect-four states")
        self._api.version = LEAF_API_VERSION
        self._api.engine = b"Connect4States"
        self._api.ctx = &self._s
        self._api.size = batch
        self._api.num_actions = NUM_ACTIONS
        self._api.obs_size = NUM_PLANES * HEIGHT * WIDTH
        self._api.compatible = NULL
        self._api.load_paths = c4_load_paths
        self._api.query = c4_query
        self._api.encode = c4_encode
        self._api.score = NULL      # no score beyond the outcome

    def __dealloc__(self):
        free(self._s)
        free(self._scratch)

    def __len__(self):
        return self._n

    def __repr__(self):
        return f"Connect4States(batch={self._n})"

    def _leaf_api(self):
        """PyCapsule of this batch's leaf API (games/leaf_api.pxd), for the search core."""
        return leaf_api_capsule(&self._api, self)

    cdef Connect4States _empty(self, Py_ssize_t n):
        return Connect4States(n, self.spec)

    def copy(self):
        cdef Connect4States out = self._empty(self._n)
        memcpy(out._s, self._s, self._n * sizeof(C4State))
        return out

    def take(self, index):
        cdef const int64_t[::1] idx = as_indices(index, self._n)
        cdef Connect4States out = self._empty(idx.shape[0])
        cdef Py_ssize_t k
        with nogil:
            for k in range(idx.shape[0]):
                out._s[k] = self._s[idx[k]]
        return out

    def load_paths(self, Connect4States src not None, index, paths):
        """For k < len(index): self[k] = src[index[k]], then play paths[k] (NO_ACTION skipped).

        The search's per-step leaf construction in one call into a preallocated batch.
        Rows from len(index) on are untouched; after an IllegalActionError the first
        len(index) rows are unspecified (this is a scratch batch).
        """
        cdef const int64_t[::1] idx = as_indices(index, src._n)
        cdef Py_ssize_t n = idx.shape[0]
        if n > self._n:
            raise ValueError(f"load_paths: {n} rows requested but this batch holds {self._n}")
        p_arr = check_paths(paths, n)
        cdef const int32_t[:, ::1] p = p_arr
        cdef Py_ssize_t bad = -1, bad_step = 0
        if n == 0:
            return
        cdef const int32_t* pp = &p[0, 0] if p.shape[1] else NULL
        with nogil:
            bad = c4_load_paths(&self._s, &src._s, &idx[0], pp, n, p.shape[1], &bad_step)
        if bad >= 0:
            raise IllegalActionError(
                f"illegal action {p[bad, bad_step]} at batch index {bad}, path step {bad_step}: "
                f"{self._why_illegal(bad, p[bad, bad_step])}")

    def put(self, index, Connect4States src not None):
        cdef const int64_t[::1] idx = as_indices(index, self._n)
        cdef Py_ssize_t k
        if len(src) != idx.shape[0]:
            raise ValueError(f"put: src has {len(src)} states but index has {idx.shape[0]}")
        if src is self:
            src = self.copy()  # self.put(i, self) must read the states as they were before the call
        with nogil:
            for k in range(idx.shape[0]):
                self._s[idx[k]] = src._s[k]

    def reset(self, index=None):
        cdef const int64_t[::1] idx
        cdef Py_ssize_t k
        cdef C4State initial
        initial.stones[0] = 0
        initial.stones[1] = 0
        initial.to_play = 0
        initial.num_moves = 0
        initial.status = ONGOING
        if index is None:
            with nogil:
                for k in range(self._n):
                    self._s[k] = initial
            return
        idx = as_indices(index, self._n)
        with nogil:
            for k in range(idx.shape[0]):
                self._s[idx[k]] = initial

    cdef str _why_illegal(self, Py_ssize_t b, int32_t action):
        if action < 0 or action >= NUM_ACTIONS:
            return f"out of range [0, {NUM_ACTIONS})"
        if self._s[b].status != ONGOING:
            return "the game is over"
        return f"column {action + 1} is full"

    def apply(self, actions):
        cdef const int32_t[::1] a = check_actions(actions, self._n)
        cdef Py_ssize_t b, bad = -1
        with nogil:
            # Validate the whole batch first so that a rejected call changes nothing.
            for b in range(self._n):
                if a[b] != NO_ACTION and not is_legal(&self._s[b], a[b]):
                    bad = b
                    break
            if bad < 0:
                for b in range(self._n):
                    if a[b] != NO_ACTION:
                        play(&self._s[b], a[b])
        if bad >= 0:
            raise IllegalActionError(
                f"illegal action {a[bad]} at batch index {bad}: {self._why_illegal(bad, a[bad])}")

    def apply_paths(self, paths):
        """Same as apply(paths[:, 0]); apply(paths[:, 1]); ... but all-or-nothing."""
        p_arr = check_paths(paths, self._n)
        cdef const int32_t[:, ::1] p = p_arr
        cdef Py_ssize_t b, j, bad = -1, bad_step = 0
        cdef C4State* tmp
        with nogil:
            # Play into the scratch copy; the live states are only replaced once every path was legal.
            for b in range(self._n):
                self._scratch[b] = self._s[b]
                for j in range(p.shape[1]):
                    if p[b, j] == NO_ACTION:
                        continue
                    if not is_legal(&self._scratch[b], p[b, j]):
                        bad = b
                        bad_step = j
                        break
                    play(&self._scratch[b], p[b, j])
                if bad >= 0:
                    break
            if bad < 0:
                tmp = self._s
                self._s = self._scratch
                self._scratch = tmp
        if bad >= 0:
            # Replay the path prefix to explain the failure in the position where it happened.
            probe = self.take(np.array([bad], dtype=np.int64))
            probe.apply_paths(p_arr[bad:bad + 1, :bad_step])
            raise IllegalActionError(
                f"illegal action {p[bad, bad_step]} at batch index {bad}, path step {bad_step}: "
                f"{(<Connect4States>probe)._why_illegal(0, p[bad, bad_step])}")

    def query(self, Py_ssize_t n, legal, terminal, to_play, outcome):
        """legal_mask, terminal, to_play and outcome of states [0, n) in one call, into rows [0, n)
        of the given buffers: the search's per-step queries, one crossing instead of four."""
        legal_u8, terminal_u8 = check_query(n, self._n, NUM_ACTIONS, legal, terminal, to_play, outcome)
        cdef uint8_t[:, ::1] lg = legal_u8
        cdef uint8_t[::1] tm = terminal_u8
        cdef int8_t[::1] tp = to_play
        cdef float[::1] oc = outcome
        if n == 0:
            return
        with nogil:
            c4_query(&self._s, n, &lg[0, 0], &tm[0], &tp[0], &oc[0])

    def legal_mask(self, out=None):
        out = check_out(out, (self._n, NUM_ACTIONS), np.bool_, "legal_mask")
        cdef uint8_t[:, ::1] m = out.view(np.uint8)
        cdef Py_ssize_t b
        cdef int c
        cdef uint64_t free_top
        with nogil:
            for b in range(self._n):
                free_top = 0
                if self._s[b].status == ONGOING:
                    free_top = ~(self._s[b].stones[0] | self._s[b].stones[1]) & TOP_ROW
                for c in range(WIDTH):
                    m[b, c] = (free_top >> (c * STRIDE + HEIGHT - 1)) & 1
        return out

    def terminal(self, out=None):
        out = check_out(out, (self._n,), np.bool_, "terminal")
        cdef uint8_t[::1] t = out.view(np.uint8)
        cdef Py_ssize_t b
        with nogil:
            for b in range(self._n):
                t[b] = self._s[b].status != ONGOING
        return out

    def to_play(self, out=None):
        out = check_out(out, (self._n,), np.int8, "to_play")
        cdef int8_t[::1] t = out
        cdef Py_ssize_t b
        with nogil:
            for b in range(self._n):
                t[b] = self._s[b].to_play
        return out

    def outcome(self, out=None):
        out = check_out(out, (self._n,), np.float32, "outcome")
        cdef float[::1] z = out
        cdef Py_ssize_t b
        with nogil:
            for b in range(self._n):
                z[b] = outcome_of(&self._s[b])
        return out

    def num_moves(self, out=None):
        out = check_out(out, (self._n,), np.int32, "num_moves")
        cdef int32_t[::1] n = out
        cdef Py_ssize_t b
        with nogil:
            for b in range(self._n):
                n[b] = self._s[b].num_moves
        return out

    def encode(self, out=None):
        """float32 [B, 3, 6, 7]: own stones, opponent stones, all ones iff player 0 to move.

        Row 0 of a plane is the top row of the board (board row HEIGHT - 1).
        """
        out = check_out(out, (self._n, NUM_PLANES, HEIGHT, WIDTH), np.float32, "encode")
        cdef float[:, :, :, ::1] o = out
        if self._n:
            with nogil:
                c4_encode(&self._s, self._n, &o[0, 0, 0, 0])
        return out

    def random_playout(self, seed, out=None):
        """Finish every game with uniformly random legal moves (in place); return outcome().

        Any Python int is a valid seed; it is taken modulo 2**64.
        """
        out = check_out(out, (self._n,), np.float32, "random_playout")
        cdef uint64_t s = operator.index(seed) & 0xFFFFFFFFFFFFFFFF
        cdef float[::1] z = out
        cdef Py_ssize_t b
        with nogil:
            for b in range(self._n):
                z[b] = playout(&self._s[b], stream_seed(s, <uint64_t>b))
        return out

    cdef _check_scalar_index(self, index):
        if not isinstance(index, (int, np.integer)) or not 0 <= index < self._n:
            raise IndexError(f"state index must be an int in [0, {self._n}), got {index!r}")

    def board(self, index):
        """int8 [6, 7]: 0 empty, 1 player 0, 2 player 1; row 0 is the top row."""
        self._check_scalar_index(index)
        out = np.zeros((HEIGHT, WIDTH), dtype=np.int8)
        cdef int8_t[:, ::1] o = out
        cdef const C4State* s = &self._s[<Py_ssize_t>index]
        cdef int r, c, bit
        for r in range(HEIGHT):
            for c in range(WIDTH):
                bit = c * STRIDE + (HEIGHT - 1 - r)
                o[r, c] = ((s.stones[0] >> bit) & 1) + 2 * ((s.stones[1] >> bit) & 1)
        return out

    def render(self, index):
        """The board with X = player 0, O = player 1, column numbers, and who is to move or won."""
        grid = self.board(index)
        cdef const C4State* s = &self._s[<Py_ssize_t>index]
        lines = [" ".join(".XO"[v] for v in row) for row in grid]
        lines.append(" ".join(str(c + 1) for c in range(WIDTH)))
        if s.status == ONGOING:
            lines.append(f"{'XO'[s.to_play]} to move (move {s.num_moves + 1})")
        elif s.status == DRAWN:
            lines.append("draw")
        else:
            lines.append(f"{'X' if s.status == WON_P0 else 'O'} won")
        return "\n".join(lines)
