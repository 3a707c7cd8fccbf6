# ---------------------------------------------------------------------------
# _go_encode.pxi, included by _go.pyx: observation planes and random playouts.
#
# The plane layout of both feature sets is in the module docstring (Observations).
#
# Observation history uses an undo log instead of board snapshots: each move
# logs the point it filled and the points it captured, in a ring sized for the
# last MOVE_RING moves (captures in any 3 consecutive moves number at most
# N*N + 2). encode() copies the current board and undoes up to T - 1 moves.
#
# ---------------------------------------------------------------------------

cdef int group_liberties_max3(const SV* v, const Geo* g, int gh) noexcept nogil:
    """Real liberties (distinct empty neighbours) of group gh, counted up to 3.

    The ATARI bit answers 1 at once; a single stone counts its empty neighbours; a
    larger group ORs its stones into a bitboard and counts its empty neighbours.
    """
    cdef uint64_t stones[MAX_W]
    cdef uint64_t nb[MAX_W]
    cdef int s = gh, i, n = 0
    if v.color[gh] & ATARI:
        return 1
    if v.size[gh] == 1:
        for i in range(4):
            n += v.color[gh + g.nbr[i]] == EMPTY
        return 3 if n > 3 else n
    memset(stones, 0, g.nw * 8)
    while True:
        bit_on(stones, s)
        s = v.nxt[s]
        if s == gh:
            break
    neighbours_of(stones, nb, g.nw, g.w)
    for i in range(g.nw):
        n += popcount64(nb[i] & v.bb[BB_EMPTY * g.nw + i])
    return 3 if n > 3 else n


cdef void liberty_planes(const SV* v, const Geo* g, int me, float* o) noexcept nogil:
    """o[(d * 3 + l - 1) * nn + a] = 1 for the stones at a of groups with l (1, 2, >= 3 -> 3)
    real liberties, d = 0 for colour me, 1 for the other; each group is counted once."""
    cdef int nw = g.nw, i, d, col, p, s, l
    cdef uint64_t m
    cdef float* plane
    for d in range(2):
        col = me if d == 0 else 3 - me
        for i in range(nw):
            m = v.bb[col * nw + i]
            while m:
                p = (i << 6) + ctz64(m)
                m &= m - 1
                if v.head[p] != p:
                    continue
                l = group_liberties_max3(v, g, p)
                plane = o + (3 * d + l - 1) * g.nn
                s = p
                while True:
                    plane[g.act[s]] = 1.0
                    s = v.nxt[s]
                    if s == p:
                        break


cdef void ko_ban_plane(const SV* v, const Geo* g, float* o) noexcept nogil:
    """o[a] = 1 on the empty points where the player to move may not play only because of
    positional superko (check_stone: MOVE_SUPERKO); o is zeroed by the caller.

    Cheap, from the bitboards (as legal_row): a move that captures is never suicide, so the
    points next to an opponent stone in atari are tested with check_stone. A capture-free
    move with a liberty source adds one stone, so it can repeat a position only when an
    earlier one had more stones than now (the nstones / max_stones shortcut); only then
    are those points probed (bloom filter, then the history). The remaining empty points
    are suicides, never superko bans. A finished game bans nothing.
    """
    cdef int nw = g.nw, c, i, p
    cdef uint64_t src[MAX_W + 2]
    cdef uint64_t caps[MAX_W]
    cdef uint64_t libs[MAX_W]
    cdef uint64_t m
    cdef const uint64_t* empty = v.bb + BB_EMPTY * nw
    cdef const uint64_t* atari = v.bb + BB_ATARI * nw
    cdef const uint64_t* own
    cdef const uint64_t* opp
    cdef const uint64_t* zc
    if v.h.terminal or v.h.max_stones == 0:
        return
    c = 1 + (v.h.num_moves & 1)
    own = v.bb + c * nw
    opp = v.bb + (3 - c) * nw
    src[0] = 0
    src[nw + 1] = 0
    for i in range(nw):
        src[i + 1] = opp[i] & atari[i]
    spread_to_neighbours(src + 1, caps, nw, g.w)
    for i in range(nw):
        m = empty[i] & caps[i]
        while m:
            p = (i << 6) + ctz64(m)
            m &= m - 1
            if check_stone(v, g, p, c) == MOVE_SUPERKO:
                o[g.act[p]] = 1.0
    if v.h.nstones >= v.h.max_stones:
        return
    for i in range(nw):
        src[i + 1] = empty[i] | (own[i] & ~atari[i])
    spread_to_neighbours(src + 1, libs, nw, g.w)
    zc = g.zob + c * g.npts
    for i in range(nw):
        m = empty[i] & libs[i] & ~caps[i]
        while m:
            p = (i << 6) + ctz64(m)
            m &= m - 1
            if seen_before(v, g, v.h.hash ^ zc[p]):
                o[g.act[p]] = 1.0


cdef inline void bits_to_plane(const uint64_t* x, const Geo* g, float* plane) noexcept nogil:
    """plane[a] = 1 for the points of bitboard x (on-board points only)."""
    cdef int i, p
    cdef uint64_t m
    for i in range(g.nw):
        m = x[i]
        while m:
            p = (i << 6) + ctz64(m)
            m &= m - 1
            plane[g.act[p]] = 1.0


# ---------------------------------------------------------------------------
# Observations and playouts
# ---------------------------------------------------------------------------

cdef void undo_on(uint8_t* cur, const SV* v, const Geo* g, int k) noexcept nogil:
    """Revert move k's changes on the colour array `cur` (k within the last MOVE_RING moves)."""
    cdef int slot = k & (MOVE_RING - 1)
    cdef int n = v.h.mlog_len[slot]
    cdef int idx = v.h.mlog_start[slot]
    cdef int i
    cdef uint8_t captured = <uint8_t>(2 - (k & 1))     # the opponent of move k's mover
    if n == 0:
        return
    cur[v.log[idx]] = EMPTY
    for i in range(1, n):
        idx += 1
        if idx == g.logcap:
            idx = 0
        cur[v.log[idx]] = captured


cdef void encode_row(const SV* v, const Geo* g, float* o) noexcept nogil:
    """Write one observation, float32 [g.planes, N, N], see the module docstring."""
    cdef uint8_t cur[MAX_PTS]
    cdef int nn = g.nn, m = v.h.num_moves, t, a, col
    cdef uint8_t me = <uint8_t>(1 + (m & 1))
    cdef float* own
    cdef float* opp
    memcpy(cur, v.color, g.npts)
    memset(o, 0, g.planes * nn * sizeof(float))
    for t in range(HIST_T):
        if t > m:
            break
        own = o + 2 * t * nn
        opp = own + nn
        for a in range(nn):
            col = cur[g.pt[a]] & COLOR
            if col == me:
                own[a] = 1.0
            elif col != EMPTY:
                opp[a] = 1.0
        if t + 1 < HIST_T and t < m:
            undo_on(cur, v, g, m - 1 - t)
    if me == BLACK:
        own = o + 2 * HIST_T * nn
        for a in range(nn):
            own[a] = 1.0
    own = o + (2 * HIST_T + 1) * nn
    for a in range(nn):
        own[a] = 1.0
    if g.features == FEATURES_EXTENDED:
        extended_planes(v, g, me, o)


cdef void extended_planes(const SV* v, const Geo* g, int me, float* o) noexcept nogil:
    """Planes NUM_PLANES .. EXT_PLANES - 1 of an extended observation (already zeroed)."""
    cdef uint64_t area[MAX_W]
    liberty_planes(v, g, me, o + P_LIBS * g.nn)
    ko_ban_plane(v, g, o + P_KO_BAN * g.nn)
    benson_area(v, g, me, area)
    bits_to_plane(area, g, o + P_ALIVE * g.nn)
    benson_area(v, g, 3 - me, area)
    bits_to_plane(area, g, o + (P_ALIVE + 1) * g.nn)


cdef inline float outcome_of(const SV* v) noexcept nogil:
    if not v.h.terminal or v.h.score == 0.0:
        return 0.0
    return 1.0 if v.h.score > 0.0 else -1.0


cdef float outcome_value(const SV* v, const Geo* g) noexcept nogil:
    """outcome_of as a StateValue (GoStates.outcome)."""
    return outcome_of(v)


cdef void playout_row(SV* v, const Geo* g, uint64_t seed, Py_ssize_t b) noexcept nogil:
    """Play uniformly random legal moves (pass included) until the game ends.

    Rejection with removal: draw a candidate uniformly among the empty points and
    pass, drop it if illegal, redraw; the first legal draw is uniform over the
    legal moves. Pass is always legal, so each move terminates.
    """
    cdef int16_t cand[MAX_PTS]
    cdef int n, a, i, c
    cdef uint64_t rng = seed ^ (0xD1B54A32D192ED03ULL * <uint64_t>(b + 1))
    splitmix64(&rng)
    while not v.h.terminal:
        n = 0
        for a in range(g.nn):
            if v.color[g.pt[a]] == EMPTY:
                cand[n] = <int16_t>a
                n += 1
        cand[n] = <int16_t>g.nn
        n += 1
        c = 1 + (v.h.num_moves & 1)
        while True:
            i = bounded(&rng, n)
            a = cand[i]
            if a == g.nn or check_stone(v, g, g.pt[a], c) == MOVE_OK:
                break
            n -= 1
            cand[i] = cand[n]
        play_action(v, g, a)
