# -------------------------------------------------------------------------------------------------
# _bitboard_states.pxi, included by _connect4.pyx and _tictactoe.pyx: the batch machinery of a small
# bitboard game, written once. A position is one fixed-size C struct (all-zero bytes = the initial
# position) and a batch is B of them in one C array, so copy / take / put / reset are struct copies.
#
# The including module defines, before this include:
#   ctypedef <its struct> State      fields stones[2], to_play, num_moves, status
#   enum NUM_ACTIONS, NUM_CELLS (cells of one observation plane), NUM_PLANES (the basic observation's
#       planes), MAX_PLANES (its richest feature set's; = NUM_PLANES without one), NO_ACTION and the
#       status values ONGOING, WON_P0, WON_P1, DRAWN
#   OBS_SHAPE (tuple: the basic observation's [C, H, W]; board() and ownership() read H, W), ENGINE
#       (const char*: its States class name, the leaf API's engine), GAME (str: the game's name in
#       messages)
#   nogil helpers is_legal(const State*, int32_t), play(State*, int32_t), legal_row(const State*,
#       uint8_t* [NUM_ACTIONS]), encode_row(const State*, float* [planes * NUM_CELLS], int planes)
#       (planes: NUM_PLANES or MAX_PLANES; a richer set begins with the basic planes),
#       playout(State*, uint64_t)
#   cdef str occupied(int32_t action): why a legal-range action is illegal in an ongoing game
#   cell(const State*, int r, int c): 0 empty, 1 player 0, 2 player 1 at row r (0 = top), column c
# and afterwards its States class as a subclass of BitboardStates that adds render().
#
# Every batched method validates its Python arguments once, then runs one `with nogil:` loop over
# `noexcept nogil` helpers; nothing touches Python per state.
# -------------------------------------------------------------------------------------------------

import operator

from azero.games.base import IllegalActionError, check_actions, check_index, check_out, check_paths, check_query


cdef inline float outcome_of(const State* s) noexcept nogil:
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
# load_paths / query / encode below. ctx is &BitboardStates._s (a State**): apply_paths swaps the
# array behind that field, the field itself stays put.

cdef Py_ssize_t states_load_paths(void* dst, const void* src, const int64_t* games, const int32_t* paths,
                                  Py_ssize_t m, Py_ssize_t length, Py_ssize_t* bad_step) noexcept nogil:
    cdef State* d = (<State**>dst)[0]
    cdef const State* s = (<State**>src)[0]
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


cdef void states_query(const void* ctx, Py_ssize_t n, uint8_t* legal, uint8_t* terminal, int8_t* to_play,
                       float* outcome) noexcept nogil:
    cdef const State* s = (<State**>ctx)[0]
    cdef Py_ssize_t b
    for b in range(n):
        legal_row(&s[b], legal + b * NUM_ACTIONS)
        terminal[b] = s[b].status != ONGOING
        to_play[b] = s[b].to_play
        outcome[b] = outcome_of(&s[b])


cdef void states_encode(const void* ctx, Py_ssize_t n, float* out) noexcept nogil:
    """Rows [0, n) of encode(), basic planes (the leaf API's encode of a basic batch)."""
    cdef const State* s = (<State**>ctx)[0]
    cdef Py_ssize_t b
    for b in range(n):
        encode_row(&s[b], out + b * NUM_PLANES * NUM_CELLS, NUM_PLANES)


cdef void states_encode_rich(const void* ctx, Py_ssize_t n, float* out) noexcept nogil:
    """Rows [0, n) of encode(), the richest feature set's planes (the leaf API's encode of such a batch)."""
    cdef const State* s = (<State**>ctx)[0]
    cdef Py_ssize_t b
    for b in range(n):
        encode_row(&s[b], out + b * MAX_PLANES * NUM_CELLS, MAX_PLANES)


cdef class BitboardStates:
    """A batch of positions (implements azero.games.base.States): the machinery the game's own
    States class (its only subclass) inherits. GIL and threads: the GIL is released in every
    batched loop so that other threads (an inference server, say) keep running; like a numpy
    array, one States object must not be mutated from two threads at once."""

    cdef State* _s          # [B] the positions
    cdef State* _scratch    # [B] spare buffer: apply_paths plays into it, then swaps
    cdef Py_ssize_t _n
    cdef LeafApi _api       # handed out by _leaf_api(); ctx = &self._s; its encode writes the
                            # spec's planes (NUM_PLANES or MAX_PLANES), for encode() too
    cdef readonly object spec

    def __cinit__(self, Py_ssize_t batch, object spec):
        if batch < 0:
            raise ValueError(f"batch must be >= 0, got {batch}")
        planes = int(spec.obs_shape[0])
        if planes != NUM_PLANES and planes != MAX_PLANES:
            raise ValueError(f"{GAME} observations have {NUM_PLANES} or {MAX_PLANES} planes, "
                             f"the spec asks for {planes}")
        self._n = batch
        self.spec = spec
        # calloc zeroes the memory, and all-zero bytes are the initial position.
        self._s = <State*>calloc(batch if batch > 0 else 1, sizeof(State))
        self._scratch = <State*>calloc(batch if batch > 0 else 1, sizeof(State))
        if self._s == NULL or self._scratch == NULL:
            raise MemoryError(f"cannot allocate {batch} {GAME} states")
        self._api.version = LEAF_API_VERSION
        self._api.engine = ENGINE
        self._api.ctx = &self._s
        self._api.size = batch
        self._api.num_actions = NUM_ACTIONS
        self._api.obs_size = planes * NUM_CELLS
        self._api.compatible = NULL
        self._api.load_paths = states_load_paths
        self._api.query = states_query
        self._api.encode = states_encode if planes == NUM_PLANES else states_encode_rich
        self._api.score = NULL      # no score beyond the outcome

    def __dealloc__(self):
        free(self._s)
        free(self._scratch)

    def __len__(self):
        return self._n

    def __repr__(self):
        return f"{type(self).__name__}(batch={self._n})"

    def _leaf_api(self):
        """PyCapsule of this batch's leaf API (games/leaf_api.pxd), for the search core."""
        return leaf_api_capsule(&self._api, self)

    cdef BitboardStates _empty(self, Py_ssize_t n):
        return type(self)(n, self.spec)

    def copy(self):
        cdef BitboardStates out = self._empty(self._n)
        memcpy(out._s, self._s, self._n * sizeof(State))
        return out

    def take(self, index):
        cdef const int64_t[::1] idx = as_indices(index, self._n)
        cdef BitboardStates out = self._empty(idx.shape[0])
        cdef Py_ssize_t k
        with nogil:
            for k in range(idx.shape[0]):
                out._s[k] = self._s[idx[k]]
        return out

    def load_paths(self, BitboardStates src not None, index, paths):
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
            bad = states_load_paths(&self._s, &src._s, &idx[0], pp, n, p.shape[1], &bad_step)
        if bad >= 0:
            raise IllegalActionError(
                f"illegal action {p[bad, bad_step]} at batch index {bad}, path step {bad_step}: "
                f"{self._why_illegal(bad, p[bad, bad_step])}")

    def put(self, index, BitboardStates src not None):
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
        cdef State initial
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
        return occupied(action)

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
        cdef State* tmp
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
                f"{(<BitboardStates>probe)._why_illegal(0, p[bad, bad_step])}")

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
            states_query(&self._s, n, &lg[0, 0], &tm[0], &tp[0], &oc[0])

    def legal_mask(self, out=None):
        out = check_out(out, (self._n, NUM_ACTIONS), np.bool_, "legal_mask")
        cdef uint8_t[:, ::1] m = out.view(np.uint8)
        cdef Py_ssize_t b
        with nogil:
            for b in range(self._n):
                legal_row(&self._s[b], &m[b, 0])
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
        """float32 [B, *spec.obs_shape]: own stones, opponent stones, all ones iff player 0 to move,
        then the feature set's further planes (the layout is in the game module's docstring)."""
        out = check_out(out, (self._n,) + tuple(self.spec.obs_shape), np.float32, "encode")
        cdef float[:, :, :, ::1] o = out
        if self._n:
            with nogil:
                self._api.encode(&self._s, self._n, &o[0, 0, 0, 0])
        return out

    def ownership(self, out=None):
        """int8 [B, H*W]: who owns each cell as the position stands, +1 a disc of player 0, -1 one
        of player 1, 0 empty; row-major from the top row like encode(). Of a finished game it is
        the final board, self-play's dense auxiliary target (KataGo's ownership, for a placement game)."""
        out = check_out(out, (self._n, OBS_SHAPE[1] * OBS_SHAPE[2]), np.int8, "ownership")
        cdef int8_t[:, ::1] o = out
        cdef Py_ssize_t b, r, c
        cdef Py_ssize_t h = OBS_SHAPE[1], w = OBS_SHAPE[2]
        cdef int8_t v
        with nogil:
            for b in range(self._n):
                for r in range(h):
                    for c in range(w):
                        v = cell(&self._s[b], r, c)
                        o[b, r * w + c] = 1 if v == 1 else (-1 if v == 2 else 0)
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
        """int8 [H, W] (OBS_SHAPE[1:]): 0 empty, 1 player 0 (X), 2 player 1 (O); row 0 is the top row."""
        self._check_scalar_index(index)
        out = np.zeros(OBS_SHAPE[1:], dtype=np.int8)
        cdef int8_t[:, ::1] o = out
        cdef const State* s = &self._s[<Py_ssize_t>index]
        cdef Py_ssize_t r, c
        for r in range(o.shape[0]):
            for c in range(o.shape[1]):
                o[r, c] = cell(s, r, c)
        return out

    cdef str _status_line(self, Py_ssize_t b):
        """render()'s last line: who is to move, or the result (X = player 0, O = player 1)."""
        cdef const State* s = &self._s[b]
        if s.status == ONGOING:
            return f"{'XO'[s.to_play]} to move (move {s.num_moves + 1})"
        if s.status == DRAWN:
            return "draw"
        return f"{'X' if s.status == WON_P0 else 'O'} won"
