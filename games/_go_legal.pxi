# ---------------------------------------------------------------------------
# _go_legal.pxi, included by _go.pyx: move legality and positional superko.
#
# Superko look-up: every position hash of the game is stored in `hist`, and a
# bloom filter (two probes, >= 16 bits per entry) answers "never seen" with no
# scan; only on a bloom hit is `hist` scanned. The filter starts small and
# doubles (rebuilt from `hist`) as the game grows, so copying an early-game
# state, as search does per leaf, copies a small filter. Before either, a stone count
# settles most moves: a move that captures nothing adds one stone, so it cannot
# repeat a position when no earlier position had more stones than the current
# one (the header tracks that maximum); in a game without captures so far no
# probe is needed at all.
#
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# Legality
# ---------------------------------------------------------------------------

cdef inline bint seen_before(const SV* v, const Geo* g, uint64_t h) noexcept nogil:
    """Whether position hash h occurred earlier in this game."""
    cdef uint64_t b1 = h & v.h.bloom_mask
    cdef uint64_t b2 = (h >> 32) & v.h.bloom_mask
    cdef int i
    if not ((v.bloom[b1 >> 6] >> (b1 & 63)) & 1):
        return False
    if not ((v.bloom[b2 >> 6] >> (b2 & 63)) & 1):
        return False
    for i in range(v.h.num_moves, -1, -1):      # newest first: simple ko is found at once
        if v.hist[i] == h:
            return True
    return False


cdef inline void bloom_add(SV* v, uint64_t h) noexcept nogil:
    cdef uint64_t b1 = h & v.h.bloom_mask
    cdef uint64_t b2 = (h >> 32) & v.h.bloom_mask
    v.bloom[b1 >> 6] |= (<uint64_t>1) << (b1 & 63)
    v.bloom[b2 >> 6] |= (<uint64_t>1) << (b2 & 63)


cdef inline uint64_t group_hash(const SV* v, const Geo* g, int gh) noexcept nogil:
    """XOR of the Zobrist keys of group gh's stones."""
    cdef const uint64_t* z = g.zob + (v.color[gh] & COLOR) * g.npts
    cdef uint64_t h = 0
    cdef int s = gh
    while True:
        h ^= z[s]
        s = v.nxt[s]
        if s == gh:
            break
    return h


cdef inline int check_stone(const SV* v, const Geo* g, int p, int c) noexcept nogil:
    """MoveCode of colour c playing on padded point p (game not over), from p's neighbours only.

    A neighbour's point code alone tells everything but a captured group's
    hash: EMPTY or an own stone without ATARI gives a liberty (an own group in
    atari has p as its only liberty), an opponent stone with ATARI is captured
    (p is its last liberty). Written without data-dependent branches in the
    common case, as neighbour colours are unpredictable mid-game.
    """
    cdef int i, k, gq, libs = 0, capbits = 0, ncap = 0
    cdef int caps[4]
    cdef uint8_t cq, opp_atari = <uint8_t>((3 - c) | ATARI)
    cdef uint64_t h
    if v.color[p] != EMPTY:
        return MOVE_OCCUPIED
    for i in range(4):
        cq = v.color[p + g.nbr[i]]
        libs |= (cq == EMPTY) | (cq == c)
        capbits |= (cq == opp_atari) << i
    h = v.h.hash ^ g.zob[c * g.npts + p]
    if capbits:
        for i in range(4):
            if (capbits >> i) & 1:
                gq = v.head[p + g.nbr[i]]
                for k in range(ncap):
                    if caps[k] == gq:
                        break
                else:
                    caps[ncap] = gq
                    ncap += 1
                    h ^= group_hash(v, g, gq)
    elif not libs:
        return MOVE_SUICIDE
    elif v.h.nstones >= v.h.max_stones:
        return MOVE_OK      # one stone more than any earlier position: no repetition
    if seen_before(v, g, h):
        return MOVE_SUPERKO
    return MOVE_OK


cdef inline int check_action(const SV* v, const Geo* g, int a) noexcept nogil:
    """MoveCode of action a (not NO_ACTION) for the player to move."""
    if a < 0 or a > g.nn:
        return MOVE_OUT_OF_RANGE
    if v.h.terminal:
        return MOVE_GAME_OVER
    if a == g.nn:
        return MOVE_OK
    return check_stone(v, g, g.pt[a], 1 + (v.h.num_moves & 1))


cdef void legal_row(const SV* v, const Geo* g, uint8_t* out) noexcept nogil:
    """out[a] = whether action a is legal, for all N*N + 1 actions (the hot path of search).

    The bitboards settle the common case for all points at once (module docstring):
    `legal` starts as the empty points with a liberty source and no capture, legal
    unless superko; the other empty points (`rare`: a capture or a possible suicide)
    go to check_stone one by one. The superko probe of the former is skipped when no
    earlier position has more stones than this one (see check_stone). The result is
    a bitboard, written out row by row, 8 points per store.
    """
    # Local copies whose address never escapes: a store through `out` (a char type) may
    # alias anything, so fields read through the caller's pointers would be reloaded
    # after every store.
    cdef SV lv = v[0]
    cdef Geo lg = g[0]
    cdef int nw = lg.nw, n = lg.n, c, i, p, r, k, a, s
    cdef uint64_t src[MAX_W + 2]        # src[0] and src[nw + 1] stay zero (spread_to_neighbours)
    cdef uint64_t libs[MAX_W]
    cdef uint64_t caps[MAX_W]
    cdef uint64_t legal[MAX_W + 1]      # legal[nw] = 0 lets a row straddle the last word
    cdef uint64_t rare[MAX_W]
    cdef uint64_t m, x, h, b1, b2
    cdef const uint64_t* empty = lv.bb + BB_EMPTY * nw
    cdef const uint64_t* own
    cdef const uint64_t* opp
    cdef const uint64_t* atari = lv.bb + BB_ATARI * nw
    cdef const uint64_t* zc
    if lv.h.terminal:
        memset(out, 0, lg.nn + 1)
        return
    c = 1 + (lv.h.num_moves & 1)
    own = lv.bb + c * nw
    opp = lv.bb + (3 - c) * nw
    src[0] = 0
    src[nw + 1] = 0
    # Liberty sources: an empty point, or an own stone whose group keeps a liberty.
    for i in range(nw):
        src[i + 1] = empty[i] | (own[i] & ~atari[i])
    spread_to_neighbours(src + 1, libs, nw, lg.w)
    # Captures: an opponent stone in atari (the point would be its last liberty).
    for i in range(nw):
        src[i + 1] = opp[i] & atari[i]
    spread_to_neighbours(src + 1, caps, nw, lg.w)
    for i in range(nw):
        legal[i] = empty[i] & libs[i] & ~caps[i]
        rare[i] = empty[i] & ~legal[i]
    legal[nw] = 0

    if lv.h.nstones < lv.h.max_stones:
        # Some earlier position has a stone more than this one: probe the simple moves.
        zc = lg.zob + c * lg.npts
        for i in range(nw):
            m = legal[i]
            while m:
                p = (i << 6) + ctz64(m)
                m &= m - 1
                h = lv.h.hash ^ zc[p]
                b1 = h & lv.h.bloom_mask
                b2 = (h >> 32) & lv.h.bloom_mask
                if ((lv.bloom[b1 >> 6] >> (b1 & 63)) & (lv.bloom[b2 >> 6] >> (b2 & 63)) & 1
                        and seen_before(&lv, &lg, h)):
                    legal[i] &= ~((<uint64_t>1) << (p & 63))
    for i in range(nw):
        m = rare[i]
        while m:
            p = (i << 6) + ctz64(m)
            m &= m - 1
            if check_stone(&lv, &lg, p, c) == MOVE_OK:
                legal[i] |= (<uint64_t>1) << (p & 63)

    # Row r of the board is bits (r + 1) * w + 1 .. + n of `legal`, actions r * n .. + n.
    for r in range(n):
        s = (r + 1) * lg.w + 1
        # (x << (63 - off)) << 1: the next word's low bits, with no shift by 64 when off = 0.
        x = (legal[s >> 6] >> (s & 63)) | ((legal[(s >> 6) + 1] << (63 - (s & 63))) << 1)
        a = r * n
        k = 0
        while k + 8 <= n:
            memcpy(out + a + k, &SPREAD[x & 255], 8)
            x >>= 8
            k += 8
        while k < n:
            out[a + k] = x & 1
            x >>= 1
            k += 1
    out[lg.nn] = 1
