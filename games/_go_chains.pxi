# ---------------------------------------------------------------------------
# _go_chains.pxi, included by _go.pyx: groups, liberties and playing moves.
#
# Groups are circular lists of stones with pseudo-liberty counters on their head
# (module docstring, Data structures); playing a stone merges, captures and logs
# the undo ring.
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# Groups and liberties
# ---------------------------------------------------------------------------

cdef void set_group_flag(SV* v, int gh, uint8_t flag) noexcept nogil:
    cdef int st = gh
    cdef uint64_t* at = v.bb + BB_ATARI * v.nw
    while True:
        v.color[st] = (v.color[st] & COLOR) | flag
        bit_put(at, st, flag != 0)
        st = v.nxt[st]
        if st == gh:
            break


cdef inline void refresh_atari(SV* v, int gh) noexcept nogil:
    """Recompute group gh's ATARI flag after its liberties changed.

    In atari iff all pseudo-liberties name one point: sum^2 == count * sum_sq.
    The flag is copied onto every stone of the group, so the legality test
    reads one byte per neighbour; the copy happens only when the flag flips,
    which is at most about once per affected group and move.
    """
    cdef uint64_t n = <uint64_t>v.nlib[gh]
    cdef uint64_t s = v.libsum[gh]
    cdef uint8_t flag = ATARI if s * s == n * v.libsq[gh] else 0
    if (v.color[gh] & ATARI) != flag:
        set_group_flag(v, gh, flag)


cdef inline void add_lib(SV* v, int gh, int p) noexcept nogil:
    v.nlib[gh] += 1
    v.libsum[gh] += <uint32_t>p
    v.libsq[gh] += <uint32_t>(p * p)
    refresh_atari(v, gh)


cdef inline void remove_lib(SV* v, int gh, int p) noexcept nogil:
    v.nlib[gh] -= 1
    v.libsum[gh] -= <uint32_t>p
    v.libsq[gh] -= <uint32_t>(p * p)
    refresh_atari(v, gh)


cdef inline int merge(SV* v, int a, int b) noexcept nogil:
    """Join groups a and b (distinct heads, same colour); returns the surviving head."""
    cdef int t, s
    cdef uint8_t flag
    if v.size[a] < v.size[b]:
        t = a
        a = b
        b = t
    flag = v.color[a] & ATARI
    s = b
    while True:             # relabel the smaller group: O(its stones)
        v.head[s] = <int16_t>a
        v.color[s] = (v.color[s] & COLOR) | flag
        bit_put(v.bb + BB_ATARI * v.nw, s, flag != 0)
        s = v.nxt[s]
        if s == b:
            break
    t = v.nxt[a]            # splice the two circular lists
    v.nxt[a] = v.nxt[b]
    v.nxt[b] = <int16_t>t
    v.size[a] += v.size[b]
    v.nlib[a] += v.nlib[b]
    v.libsum[a] += v.libsum[b]
    v.libsq[a] += v.libsq[b]
    refresh_atari(v, a)
    return a


cdef inline void log_push(SV* v, const Geo* g, int p) noexcept nogil:
    v.log[v.h.log_pos] = <int16_t>p
    v.h.log_pos += 1
    if v.h.log_pos == g.logcap:
        v.h.log_pos = 0


cdef int remove_group(SV* v, const Geo* g, int gh) noexcept nogil:
    """Capture group `gh`: empty its stones, give liberties back to neighbours; returns stones removed."""
    cdef int col = v.color[gh] & COLOR
    cdef int s = gh, i, r, cr, n = 0
    cdef const uint64_t* z = g.zob + col * g.npts
    while True:
        v.color[s] = EMPTY
        bit_on(v.bb + BB_EMPTY * v.nw, s)
        bit_off(v.bb + col * v.nw, s)
        bit_off(v.bb + BB_ATARI * v.nw, s)
        v.h.hash ^= z[s]
        log_push(v, g, s)
        n += 1
        for i in range(4):
            r = s + g.nbr[i]
            cr = v.color[r] & COLOR
            # Stones of this group not yet emptied still carry head gh: skip them.
            if (cr == BLACK or cr == WHITE) and v.head[r] != gh:
                add_lib(v, v.head[r], s)
        s = v.nxt[s]
        if s == gh:
            break
    v.h.nstones -= n
    return n




# ---------------------------------------------------------------------------
# Playing moves
# ---------------------------------------------------------------------------

cdef void finish_move(SV* v, const Geo* g) noexcept nogil:
    cdef int i
    if v.h.nstones > v.h.max_stones:
        v.h.max_stones = v.h.nstones
    v.h.num_moves += 1
    v.hist[v.h.num_moves] = v.h.hash
    if <uint32_t>(16 * (v.h.num_moves + 1)) > v.h.bloom_mask + 1 and v.h.bloom_mask + 1 < g.bloom_bits:
        # Keep >= 16 bits per entry: double the filter and re-add the whole history
        # (O(moves) once per doubling).
        v.h.bloom_mask = 2 * v.h.bloom_mask + 1
        memset(v.bloom, 0, (v.h.bloom_mask + 1) >> 3)
        for i in range(v.h.num_moves + 1):
            bloom_add(v, v.hist[i])
    else:
        bloom_add(v, v.h.hash)
    if v.h.passes >= 2 or v.h.num_moves >= g.max_moves:
        v.h.terminal = 1
        v.h.score = tt_score(v, g)


cdef void play_pass(SV* v, const Geo* g) noexcept nogil:
    cdef int k = v.h.num_moves & (MOVE_RING - 1)
    v.h.mlog_start[k] = v.h.log_pos
    v.h.mlog_len[k] = 0
    v.h.passes += 1
    finish_move(v, g)


cdef void play_stone(SV* v, const Geo* g, int p) noexcept nogil:
    """Colour to move plays on p; the caller guarantees legality."""
    cdef int c = 1 + (v.h.num_moves & 1)
    cdef int opp = 3 - c
    cdef int i, q, cq, gp, gq
    cdef int k = v.h.num_moves & (MOVE_RING - 1)
    cdef int changed = 1
    cdef uint64_t z = g.zob[c * g.npts + p]
    v.h.mlog_start[k] = v.h.log_pos
    log_push(v, g, p)
    v.color[p] = <uint8_t>(c | ATARI)     # no liberties yet; refreshed as they are added below
    bit_off(v.bb + BB_EMPTY * v.nw, p)
    bit_on(v.bb + c * v.nw, p)
    bit_on(v.bb + BB_ATARI * v.nw, p)
    v.h.nstones += 1
    v.h.hash ^= z
    v.head[p] = <int16_t>p
    v.nxt[p] = <int16_t>p
    v.size[p] = 1
    v.nlib[p] = 0
    v.libsum[p] = 0
    v.libsq[p] = 0
    for i in range(4):
        q = p + g.nbr[i]
        cq = v.color[q] & COLOR
        if cq == EMPTY:
            add_lib(v, p, q)
        elif cq != EDGE:
            # One pseudo-liberty per adjacency, so no de-duplication of groups is needed.
            remove_lib(v, v.head[q], p)
    gp = p
    for i in range(4):
        q = p + g.nbr[i]
        if (v.color[q] & COLOR) == c:
            gq = v.head[q]
            if gq != gp:
                gp = merge(v, gp, gq)
    for i in range(4):
        q = p + g.nbr[i]
        if (v.color[q] & COLOR) == opp and v.nlib[v.head[q]] == 0:
            changed += remove_group(v, g, v.head[q])
    v.h.mlog_len[k] = <int16_t>changed
    v.h.passes = 0
    finish_move(v, g)


cdef inline void play_action(SV* v, const Geo* g, int a) noexcept nogil:
    if a == g.nn:
        play_pass(v, g)
    else:
        play_stone(v, g, g.pt[a])


cdef void chains_of(const SV* v, const Geo* g, int16_t* chain, uint8_t* libs) noexcept nogil:
    """chain[a] = the action of the head of a's group (-1 stays on empty points); row a of libs
    ([nn, nn], zeroed) = the exact liberties of a's group (GoStates.chains)."""
    cdef int a, d, p, q, s, nn = g.nn
    for a in range(nn):
        p = g.pt[a]
        if (v.color[p] & COLOR) == EMPTY or v.head[p] != p:
            continue
        s = p
        while True:  # every stone of the group: its empty neighbours are the group's liberties
            chain[g.act[s]] = <int16_t>a
            for d in range(4):
                q = s + g.nbr[d]
                if (v.color[q] & COLOR) == EMPTY:
                    libs[a * nn + g.act[q]] = 1
            s = v.nxt[s]
            if s == p:
                break
    for a in range(nn):  # every stone's row is its head's
        if chain[a] >= 0 and chain[a] != a:
            memcpy(libs + a * nn, libs + chain[a] * nn, nn)
