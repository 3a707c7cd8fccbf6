# cython: language_level=3, wraparound=False, cdivision=True
"""Native batched Go: B positions of an NxN board in one contiguous byte buffer.

Rules (Tromp-Taylor with positional superko)
--------------------------------------------
- Black (player 0) moves first; a move places a stone on an empty point or passes.
- After placing, opponent groups left without liberties are captured. A move
  that leaves its own group without liberties (suicide, single- or
  multi-stone) is illegal; a move that captures is never suicide.
- Positional superko: a move may not recreate any whole-board stone
  arrangement that occurred earlier in the game (the player to move is not
  part of the position; passes are always legal). Positions are compared by
  64-bit Zobrist hashes from a fixed-seed table, so a false "repetition"
  needs a hash collision with an earlier position of as many stones
  (probability < moves^2 / 2^64).
- The game ends after two consecutive passes, or once `max_moves` moves
  (passes included) have been played; it is then scored as it stands.
- Score = black area - white area - komi, where a colour's area is its stones
  plus the empty regions whose borders reach only that colour (Tromp-Taylor).
  Outcome = sign(score): +1 Black (player 0) wins, -1 White wins, 0 only for an
  exact tie (possible with integer komi).

Actions: a = r * N + c with r = 0 the TOP row (GTP row N) and c = 0 the left
column (GTP letter 'A', letters skip 'I'); a = N * N is pass.

Observations: float32 [C, N, N], every plane 0/1 and from the player to move's
view ("own" = the player to move); T = HIST_T = 4. The feature set is a game
parameter (GoGame(features=...), recorded in spec.params):
  "basic", C = 2T + 2 = 10:
    planes 2t, 2t+1 (t = 0..T-1): stones of the player to move / of the
        opponent, t moves ago (t = 0 is now; zeros before the game start);
    plane 8  (2T):     all ones if Black (player 0) is to move, else zeros;
    plane 9  (2T + 1): all ones (lets convolutions with zero padding see the edge).
  "extended", C = 19: planes 0-9 exactly as "basic", then (KataGo's input
  features, computed from the position now):
    planes 10, 11, 12: own stones whose group has exactly 1, exactly 2, >= 3
        liberties (real liberties: distinct empty points next to the group);
    planes 13, 14, 15: the same for the opponent's stones;
    plane 16: empty points where the player to move may not play only because
        of positional superko (a suicide is not marked; a finished game marks
        nothing), e.g. the retake of a ko;
    plane 17: the player to move's pass-alive area, plane 18: the opponent's
        (Benson, see below and GoStates.pass_alive).

Final ownership (GoStates.ownership, the ownership head's target): +1 a black
stone or an empty region reaching only black, -1 likewise white, 0 a region
reaching both (dame, seki) or none; score = sum(ownership) - komi exactly.

Pass-alive area (GoStates.pass_alive; Benson 1976, with KataGo's convention):
a colour's chains that stay alive even if it passes forever, plus the regions
(connected non-own points) that only such chains enclose and that have at most
one point not next to an own stone, any opponent stones in them included.

Data structures (one fixed-size block per state, declared in _go_state.pxi)
---------------------------------------------------------------------
The board is padded with a ring of EDGE points so neighbours need no bounds
test. Groups are circular linked lists of stones (`nxt`) with a representative
`head`; when groups merge the smaller one is relabelled. Each head carries
pseudo-liberties (one per adjacent stone/empty pair) with their sum and sum of
squares: the group is in atari exactly when all its pseudo-liberties name the
same point, i.e. sum^2 == count * sum_of_squares (equality case of
Cauchy-Schwarz), the pseudo-liberty idea of the OpenSpiel / Fuego boards. That
test is cached as an ATARI bit in every stone's point code, rewritten over
the group only when it flips, so a neighbour's code byte alone says whether it
offers a liberty or is captured. So legality of a point is O(1) plus a
superko look-up, except for a capture, whose hash needs the captured stones'
Zobrist keys (a walk over the captured groups, which are usually small; a
per-group hash would save the walk but cost 8 bytes per point in every state
copy), and a move costs O(stones of the affected groups).

Every batched method validates its Python arguments once, then runs one
`with nogil:` loop over `noexcept nogil` helpers; nothing touches Python per
state.
"""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

from leaf_api cimport LEAF_API_VERSION, LeafApi, leaf_api_capsule

import numpy as np

cimport numpy as cnp

cnp.import_array()

from azero.games import base as _base
from azero.games.base import IllegalActionError, check_actions, check_index, check_out, check_paths, check_query


# The engine by concept (textual includes, one module): state block, chains, legality,
# scoring, observations, leaf API.
include "_go_state.pxi"
include "_go_chains.pxi"
include "_go_legal.pxi"
include "_go_scoring.pxi"
include "_go_encode.pxi"
include "_go_leaf.pxi"


def _restore_states(Geometry geo, Py_ssize_t batch, bytes data):
    cdef GoStates res = GoStates(geo, batch, False)
    if len(data) != batch * geo.g.stride:
        raise ValueError(f"pickled GoStates: expected {batch * geo.g.stride} bytes, got {len(data)}")
    memcpy(res.buf, <const char*>data, len(data))
    return res


cdef class GoStates:
    """A batch of B Go positions; implements azero.games.base.States (see the module docstring)."""

    cdef Geometry geo
    cdef const Geo* g
    cdef char* buf          # [B * stride] the states
    cdef char* spare        # [B * stride] apply_paths plays here, then swaps (NULL until needed)
    cdef Py_ssize_t B
    cdef LeafCtx _leaf_ctx  # ctx of the leaf API: &buf and the geometry
    cdef LeafApi _api       # handed out by _leaf_api()
    cdef readonly object spec

    def __cinit__(self, Geometry geo, Py_ssize_t batch, bint init=True):
        cdef Py_ssize_t b
        if batch < 0:
            raise ValueError(f"batch must be >= 0, got {batch}")
        self.geo = geo
        self.g = &geo.g
        self.spec = geo.spec
        self.B = batch
        self.spare = NULL
        # +1 so a zero-size batch still owns a valid allocation.
        self.buf = <char*>malloc(batch * self.g.stride + 1)
        if self.buf == NULL:
            raise MemoryError()
        self._leaf_ctx.buf = &self.buf
        self._leaf_ctx.g = self.g
        self._api.version = LEAF_API_VERSION
        self._api.engine = b"GoStates"
        self._api.ctx = &self._leaf_ctx
        self._api.size = batch
        self._api.num_actions = self.g.nn + 1
        self._api.obs_size = self.g.planes * self.g.nn
        self._api.compatible = go_compatible
        self._api.load_paths = go_load_paths
        self._api.query = go_query
        self._api.encode = go_encode
        self._api.score = go_final_score
        if init:
            with nogil:
                for b in range(batch):
                    memcpy(self.buf + b * self.g.stride, self.g.initial, self.g.stride)

    def __dealloc__(self):
        free(self.buf)
        free(self.spare)

    def __len__(self):
        return self.B

    def __repr__(self):
        return f"GoStates({self.spec.name}, batch={self.B})"

    def _leaf_api(self):
        """PyCapsule of this batch's leaf API (games/leaf_api.pxd), for the search core."""
        return leaf_api_capsule(&self._api, self)

    def __reduce__(self):
        # For moving batches between processes (Ray) built from the same source; the
        # raw layout is not a storage format.
        return (_restore_states, (self.geo, self.B, self.buf[:self.B * self.g.stride]))

    # -- batch plumbing -----------------------------------------------------

    def copy(self):
        """An independent deep copy of the whole batch."""
        cdef GoStates res = GoStates(self.geo, self.B, False)
        memcpy(res.buf, self.buf, self.B * self.g.stride)
        return res

    def take(self, index):
        """A new batch of len(index) states: result[k] = self[index[k]]."""
        cdef const int64_t[::1] idx = check_index(index, self.B)
        cdef Py_ssize_t k, n = idx.shape[0], stride = self.g.stride
        cdef GoStates res = GoStates(self.geo, n, False)
        with nogil:
            for k in range(n):
                copy_state(res.buf + k * stride, self.buf + idx[k] * stride, self.g)
        return res

    def load_paths(self, GoStates src, index, paths):
        """For k < len(index): self[k] = src[index[k]], then play paths[k] (NO_ACTION skipped).

        The search's per-step leaf construction in one call, into a preallocated batch
        (no allocation, one memcpy per leaf). Rows from len(index) on are untouched.
        On an illegal move IllegalActionError names the row and path step, and the
        first len(index) rows are left unspecified (this is a scratch batch).
        """
        cdef Py_ssize_t k, n = 0, L, bad = -1, bad_j = 0
        cdef const int64_t* idx = <const int64_t*>fast_buffer(index, cnp.NPY_INT64, 1, False)
        cdef const int32_t* pv
        if idx != NULL:
            n = dim(index, 0)
            for k in range(n):
                if idx[k] < 0 or idx[k] >= src.B:
                    idx = NULL      # the general check below raises the error
                    break
        if idx == NULL:
            index = check_index(index, src.B)
            idx = <const int64_t*>cnp.PyArray_DATA(<cnp.ndarray>index)
            n = len(index)
        if n > self.B:
            raise ValueError(f"load_paths: {n} rows requested but this batch holds {self.B}")
        if not go_compatible(&src._leaf_ctx, &self._leaf_ctx):
            raise ValueError(f"load_paths: source states are {src.spec.name} with params {src.spec.params}, "
                             f"destination is {self.spec.name} with params {self.spec.params}")
        pv = <const int32_t*>fast_buffer(paths, cnp.NPY_INT32, 2, False)
        if pv == NULL or dim(paths, 0) != n:
            paths = check_paths(paths, n)
            pv = <const int32_t*>cnp.PyArray_DATA(<cnp.ndarray>paths)
        L = dim(paths, 1)
        cdef int code, a
        cdef SV v
        with nogil:
            bad = go_load_paths(&self._leaf_ctx, &src._leaf_ctx, idx, pv, n, L, &bad_j)
        if bad >= 0:
            # Row `bad` holds the position the illegal move was tried in: ask it why.
            a = pv[bad * L + bad_j]
            bind(&v, self.buf + bad * self.g.stride, self.g)
            code = check_action(&v, self.g, a)
            self._raise_illegal(bad, a, code, f", path step {bad_j}")

    def put(self, index, GoStates src):
        """Overwrite self[index[k]] = src[k] for every k (later duplicates win)."""
        cdef const int64_t[::1] idx = check_index(index, self.B)
        cdef Py_ssize_t k, n = idx.shape[0], stride = self.g.stride
        if not go_compatible(&src._leaf_ctx, &self._leaf_ctx):
            raise ValueError(f"put: source states are {src.spec.name} with params {src.spec.params}, "
                             f"destination is {self.spec.name} with params {self.spec.params}")
        if src.B != n:
            raise ValueError(f"put: len(src) = {src.B} but len(index) = {n}")
        if src is self:
            src = self.copy()       # rows may be both read and written
        with nogil:
            for k in range(n):
                copy_state(self.buf + idx[k] * stride, src.buf + k * stride, self.g)

    def reset(self, index=None):
        """Return the chosen states (all when None) to the empty board, Black to move."""
        cdef const int64_t[::1] idx
        cdef Py_ssize_t k, n, stride = self.g.stride
        if index is None:
            with nogil:
                for k in range(self.B):
                    memcpy(self.buf + k * stride, self.g.initial, stride)
            return
        idx = check_index(index, self.B)
        n = idx.shape[0]
        with nogil:
            for k in range(n):
                memcpy(self.buf + idx[k] * stride, self.g.initial, stride)

    # -- moves ----------------------------------------------------------------

    cdef _raise_illegal(self, Py_ssize_t b, int action, int code, str where=""):
        if code == MOVE_OUT_OF_RANGE:
            raise IllegalActionError(
                f"state {b}{where}: action {action} is out of range [0, {self.g.nn + 1}) "
                f"(or {NO_ACTION} for no move)")
        raise IllegalActionError(
            f"state {b}{where}: action {action} ({gtp_vertex(self.g.n, action)}) is illegal: "
            f"{_REASONS[code]}")

    def apply(self, actions):
        """Play actions[b] in state b (NO_ACTION leaves it); all-or-nothing on illegal actions."""
        cdef const int32_t* act = <const int32_t*>fast_buffer(actions, cnp.NPY_INT32, 1, False)
        if act == NULL or dim(actions, 0) != self.B:
            actions = check_actions(actions, self.B)
            act = <const int32_t*>cnp.PyArray_DATA(<cnp.ndarray>actions)
        cdef Py_ssize_t b, bad = -1
        cdef int code = MOVE_OK, a
        cdef SV v
        cdef const Geo* g = self.g
        with nogil:
            for b in range(self.B):
                a = act[b]
                if a == NO_ACTION:
                    continue
                bind(&v, self.buf + b * g.stride, g)
                code = check_action(&v, g, a)
                if code != MOVE_OK:
                    bad = b
                    break
            if bad < 0:
                for b in range(self.B):
                    a = act[b]
                    if a != NO_ACTION:
                        bind(&v, self.buf + b * g.stride, g)
                        play_action(&v, g, a)
        if bad >= 0:
            self._raise_illegal(bad, act[bad], code)

    def apply_paths(self, paths):
        """Play paths[b, 0], paths[b, 1], ... in state b (NO_ACTION entries are skipped).

        All-or-nothing: the paths are played on a second buffer that replaces the
        states only when every move was legal; otherwise IllegalActionError names
        the state, the path step and the action, and no state changes.
        """
        p = check_paths(paths, self.B)
        cdef const int32_t[:, ::1] pv = p
        cdef Py_ssize_t b, j, L = pv.shape[1], bad = -1, bad_j = 0
        cdef int code = MOVE_OK, a
        cdef SV v
        cdef const Geo* g = self.g
        cdef char* tmp
        if L == 0 or self.B == 0:
            return
        if self.spare == NULL:
            self.spare = <char*>malloc(self.B * g.stride)
            if self.spare == NULL:
                raise MemoryError()
        with nogil:
            for b in range(self.B):
                copy_state(self.spare + b * g.stride, self.buf + b * g.stride, g)
                bind(&v, self.spare + b * g.stride, g)
                for j in range(L):
                    a = pv[b, j]
                    if a == NO_ACTION:
                        continue
                    code = check_action(&v, g, a)
                    if code != MOVE_OK:
                        bad = b
                        bad_j = j
                        break
                    play_action(&v, g, a)
                if bad >= 0:
                    break
        if bad >= 0:
            self._raise_illegal(bad, pv[bad, bad_j], code, f", path step {bad_j}")
        tmp = self.buf
        self.buf = self.spare
        self.spare = tmp

    # -- queries --------------------------------------------------------------

    def legal_mask(self, out=None):
        """bool [B, N*N+1]: legal actions per state (all False once the game is over)."""
        cdef uint8_t* m = NULL
        cdef uint8_t[:, ::1] mv
        if out is not None:
            m = <uint8_t*>fast_buffer(out, cnp.NPY_BOOL, 2, True)
            if m != NULL and (dim(out, 0) != self.B or dim(out, 1) != self.g.nn + 1):
                m = NULL
        if m == NULL:
            out = check_out(out, (self.B, self.g.nn + 1), np.bool_, "legal_mask")
            if self.B == 0:
                return out
            mv = out.view(np.uint8)     # raises if read-only
            m = &mv[0, 0]
        cdef Py_ssize_t b
        cdef SV v
        cdef const Geo* g = self.g
        with nogil:
            for b in range(self.B):
                bind(&v, self.buf + b * g.stride, g)
                legal_row(&v, g, m + b * (g.nn + 1))
        return out

    def terminal(self, out=None):
        """bool [B]: whether each game is over."""
        cdef uint8_t* o = NULL
        cdef uint8_t[::1] ov
        if out is not None:
            o = <uint8_t*>fast_buffer(out, cnp.NPY_BOOL, 1, True)
            if o != NULL and dim(out, 0) != self.B:
                o = NULL
        if o == NULL:
            out = check_out(out, (self.B,), np.bool_, "terminal")
            if self.B == 0:
                return out
            ov = out.view(np.uint8)     # raises if read-only
            o = &ov[0]
        cdef Py_ssize_t b
        with nogil:
            for b in range(self.B):
                o[b] = (<Header*>(self.buf + b * self.g.stride)).terminal
        return out

    def to_play(self, out=None):
        """int8 [B]: player to move, 0 = Black, 1 = White (the parity of num_moves)."""
        out = check_out(out, (self.B,), np.int8, "to_play")
        np.bitwise_and(self.num_moves(), 1, out=out, casting="unsafe")
        return out

    def num_moves(self, out=None):
        """int32 [B]: moves played so far, passes included."""
        out = check_out(out, (self.B,), np.int32, "num_moves")
        cdef int32_t[::1] o = out
        cdef Py_ssize_t b
        with nogil:
            for b in range(self.B):
                o[b] = (<Header*>(self.buf + b * self.g.stride)).num_moves
        return out

    cdef _state_values(self, out, str name, StateValue value):
        """float32 [B] from one value function per state (outcome, score)."""
        out = check_out(out, (self.B,), np.float32, name)
        cdef float[::1] o = out
        cdef Py_ssize_t b
        cdef SV v
        with nogil:
            for b in range(self.B):
                bind(&v, self.buf + b * self.g.stride, self.g)
                o[b] = value(&v, self.g)
        return out

    def outcome(self, out=None):
        """float32 [B]: +1 Black (player 0) won, -1 White won, 0 draw or not over."""
        return self._state_values(out, "outcome", outcome_value)

    def query(self, Py_ssize_t n, legal, terminal, to_play, outcome):
        """legal_mask, terminal, to_play and outcome of states [0, n) in one call, into rows [0, n)
        of the given buffers: the search's per-step queries, one crossing instead of four."""
        cdef uint8_t* lg = <uint8_t*>fast_bool_buffer(legal, 2)
        cdef uint8_t* tm = <uint8_t*>fast_bool_buffer(terminal, 1)
        cdef int8_t* tp = <int8_t*>fast_buffer(to_play, cnp.NPY_INT8, 1, True)
        cdef float* oc = <float*>fast_buffer(outcome, cnp.NPY_FLOAT32, 1, True)
        cdef uint8_t[:, ::1] lgv
        cdef uint8_t[::1] tmv
        cdef int8_t[::1] tpv
        cdef float[::1] ocv
        if (lg == NULL or tm == NULL or tp == NULL or oc == NULL or not 0 <= n <= self.B
                or dim(legal, 0) < n or dim(legal, 1) != self.g.nn + 1
                or dim(terminal, 0) < n or dim(to_play, 0) < n or dim(outcome, 0) < n):
            legal_u8, terminal_u8 = check_query(n, self.B, self.g.nn + 1, legal, terminal, to_play, outcome)
            if n == 0:
                return
            lgv = legal_u8      # these raise if read-only
            tmv = terminal_u8
            tpv = to_play
            ocv = outcome
            lg, tm, tp, oc = &lgv[0, 0], &tmv[0], &tpv[0], &ocv[0]
        with nogil:
            go_query(&self._leaf_ctx, n, lg, tm, tp, oc)

    def score(self, out=None):
        """float32 [B]: Tromp-Taylor black area - white area - komi of the position as it stands."""
        return self._state_values(out, "score", tt_score)

    def final_score(self, out=None):
        """float32 [B]: the final score (as score()) of each finished game, 0 for a game not over;
        what the leaf API's `score` function gives the search."""
        out = check_out(out, (self.B,), np.float32, "final_score")
        if self.B == 0:
            return out
        cdef float[::1] o = out
        with nogil:
            go_final_score(&self._leaf_ctx, self.B, &o[0])
        return out

    cdef _point_rows(self, out, str name, PointRow row):
        """int8 [B, N*N] from one row function per state (ownership, pass_alive)."""
        out = check_out(out, (self.B, self.g.nn), np.int8, name)
        if self.B == 0:
            return out
        cdef int8_t[:, ::1] o = out
        cdef Py_ssize_t b
        cdef SV v
        cdef const Geo* g = self.g
        with nogil:
            for b in range(self.B):
                bind(&v, self.buf + b * g.stride, g)
                row(&v, g, &o[b, 0])
        return out

    def ownership(self, out=None):
        """int8 [B, N*N]: Tromp-Taylor owner of each point of the position as it stands: +1 a
        black stone or an empty region reaching only black, -1 likewise white, 0 an empty
        region reaching both colours (dame, seki) or none. score() == sum - komi exactly."""
        return self._point_rows(out, "ownership", ownership_row)

    def pass_alive(self, out=None):
        """int8 [B, N*N]: +1 on Black's pass-alive area, -1 on White's, 0 elsewhere.

        A colour's pass-alive area is its chains that Benson's algorithm proves alive
        even if it always passes, plus the small regions they alone enclose, with any
        (dead) opponent stones inside (see benson_area for the exact rule, KataGo's).
        """
        return self._point_rows(out, "pass_alive", pass_alive_row)

    def encode(self, out=None):
        """float32 [B, C, N, N]: observations from the player to move's view, C = 10 planes for
        features "basic", 19 for "extended" (module docstring, Observations)."""
        cdef int n = self.g.n
        out = check_out(out, (self.B, self.g.planes, n, n), np.float32, "encode")
        if self.B == 0:
            return out
        cdef float[:, :, :, ::1] o = out
        with nogil:
            go_encode(&self._leaf_ctx, self.B, &o[0, 0, 0, 0])
        return out

    def random_playout(self, seed, out=None):
        """Play uniformly random legal moves (pass included) to the end, in place; return outcome().

        State b draws from splitmix64 seeded by (seed, b), so results do not depend
        on the batch size. Random games usually end by max_moves.
        """
        out = check_out(out, (self.B,), np.float32, "random_playout")
        cdef uint64_t s = <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF)
        cdef float[::1] o = out
        cdef Py_ssize_t b
        cdef SV v
        with nogil:
            for b in range(self.B):
                bind(&v, self.buf + b * self.g.stride, self.g)
                playout_row(&v, self.g, s, b)
                o[b] = outcome_of(&v)
        return out

    # -- single-state views ---------------------------------------------------

    def _check_state_index(self, index):
        i = int(index)
        if not 0 <= i < self.B:
            raise IndexError(f"state index {index} out of range [0, {self.B})")
        return i

    def board(self, index):
        """int8 [N, N] of state `index`: 0 empty, 1 black, 2 white; row 0 is the top (GTP row N)."""
        cdef Py_ssize_t i = self._check_state_index(index)
        cdef int a, n = self.g.n
        res = np.empty((n, n), dtype=np.int8)
        cdef int8_t[:, ::1] r = res
        cdef SV v
        bind(&v, self.buf + i * self.g.stride, self.g)
        for a in range(self.g.nn):
            r[a // n, a % n] = <int8_t>(v.color[self.g.pt[a]] & COLOR)
        return res

    def chains(self, index):
        """The engine's own chains of state `index`, for rules outside the search (GTP's cleanup):
        (chain int16 [N*N]: the action of the head stone of the point's chain, -1 on empty points;
        liberties bool [N*N, N*N]: row a holds the liberties of the chain at a, all False on empty
        points). Membership comes from the engine's group lists; liberties are exact (the engine
        itself keeps pseudo-liberty counts only)."""
        cdef Py_ssize_t i = self._check_state_index(index)
        cdef SV v
        bind(&v, self.buf + i * self.g.stride, self.g)
        chain = np.full(self.g.nn, -1, dtype=np.int16)
        liberties = np.zeros((self.g.nn, self.g.nn), dtype=np.bool_)
        cdef int16_t[::1] c = chain
        cdef cnp.uint8_t[:, ::1] libs = liberties.view(np.uint8)
        chains_of(&v, self.g, &c[0], &libs[0, 0])
        return chain, liberties

    def _internals(self, index):
        """Test hook: (bool [4, N, N] bitboards empty / black / white / in atari,
        whether no bit is set off the board, stones on the board, most stones so far)."""
        cdef Py_ssize_t i = self._check_state_index(index)
        cdef int a, k, p, n = self.g.n, nw = self.g.nw
        cdef SV v
        cdef uint64_t off_board[4 * MAX_W]
        bind(&v, self.buf + i * self.g.stride, self.g)
        res = np.zeros((4, n, n), dtype=np.bool_)
        memcpy(off_board, v.bb, 4 * nw * 8)
        for k in range(4):
            for a in range(self.g.nn):
                p = self.g.pt[a]
                res[k, a // n, a % n] = (v.bb[k * nw + (p >> 6)] >> (p & 63)) & 1
                bit_off(off_board + k * nw, p)
        clear = True
        for k in range(4 * nw):
            clear = clear and off_board[k] == 0
        return res, clear, v.h.nstones, v.h.max_stones

    def render(self, index):
        """A text picture of state `index` (X black, O white) with GTP coordinates."""
        cdef Py_ssize_t i = self._check_state_index(index)
        cdef SV v
        bind(&v, self.buf + i * self.g.stride, self.g)
        n = self.g.n
        bd = self.board(i)
        letters = "   " + " ".join(COLUMNS[:n])
        lines = [letters]
        for r in range(n):
            row = " ".join(".XO"[x] for x in bd[r])
            lines.append(f"{n - r:2d} {row} {n - r:2d}")
        lines.append(letters)
        moves = v.h.num_moves
        if v.h.terminal:
            sc = v.h.score
            result = "draw" if sc == 0 else (f"B+{sc:g}" if sc > 0 else f"W+{-sc:g}")
            lines.append(f"game over after {moves} moves: {result}")
        else:
            lines.append(f"{'Black' if moves % 2 == 0 else 'White'} (player {moves % 2}) to move, "
                         f"{moves} moves played, komi {self.g.komi:g}")
        return "\n".join(lines)
