# ---------------------------------------------------------------------------
# _go_scoring.pxi, included by _go.pyx: Tromp-Taylor area and score, Benson pass-alive areas.
#
# Final ownership and the pass-alive area are defined in the module docstring;
# GoStates.ownership / pass_alive / score are thin loops over these rows.
# ---------------------------------------------------------------------------

cdef int tt_area(const SV* v, const Geo* g, int8_t* own) noexcept nogil:
    """Tromp-Taylor area difference: black stones + black-only empty regions - (white ...).

    When `own` is not NULL it also receives the owner of every point, own[a] for actions
    a < N*N: +1 a black stone or a point of an empty region whose border reaches only
    black, -1 likewise white, 0 an empty region reaching both colours (dame, seki
    liberties) or neither (the empty board). So sum(own) is the return value, and the
    score (tt_score) is that minus komi exactly: both come from this one flood.
    """
    cdef uint8_t mark[MAX_PTS]
    cdef int16_t queue[MAX_PTS]         # the current empty region, in flood order
    cdef int a, p, q, r, i, j, col, cr, head, tail, reach, diff = 0
    cdef int8_t owner
    memset(mark, 0, g.npts)
    for a in range(g.nn):
        p = g.pt[a]
        col = v.color[p] & COLOR
        if col != EMPTY:
            owner = 1 if col == BLACK else -1
            diff += owner
            if own != NULL:
                own[a] = owner
            continue
        if mark[p]:
            continue
        # Flood the empty region containing p, noting which colours border it.
        mark[p] = 1
        queue[0] = <int16_t>p
        head = 0
        tail = 1
        reach = 0
        while head < tail:
            q = queue[head]
            head += 1
            for i in range(4):
                r = q + g.nbr[i]
                cr = v.color[r] & COLOR
                if cr == EMPTY:
                    if not mark[r]:
                        mark[r] = 1
                        queue[tail] = <int16_t>r
                        tail += 1
                elif cr != EDGE:
                    reach |= cr
        owner = 1 if reach == BLACK else (-1 if reach == WHITE else 0)
        diff += owner * tail
        if own != NULL:
            for j in range(tail):
                own[g.act[queue[j]]] = owner
    return diff


# One float per state (GoStates._state_values: outcome, score).
ctypedef float (*StateValue)(const SV* v, const Geo* g) noexcept nogil

# One int8 value per point of a state (GoStates._point_rows: ownership, pass_alive).
ctypedef void (*PointRow)(const SV* v, const Geo* g, int8_t* out) noexcept nogil


cdef void ownership_row(const SV* v, const Geo* g, int8_t* out) noexcept nogil:
    """out[a] = the Tromp-Taylor owner of point a (tt_area)."""
    tt_area(v, g, out)


cdef inline float tt_score(const SV* v, const Geo* g) noexcept nogil:
    """Tromp-Taylor score: black area - white area - komi (tt_area)."""
    return <float>tt_area(v, g, NULL) - g.komi




# ---------------------------------------------------------------------------
# Position knowledge: pass-alive areas (Benson), real liberties, superko bans
# ---------------------------------------------------------------------------

cdef inline int popcount_bb(const uint64_t* x, int nw) noexcept nogil:
    cdef int i, n = 0
    for i in range(nw):
        n += popcount64(x[i])
    return n


cdef inline bint meets(const uint64_t* x, const uint64_t* y, int nw) noexcept nogil:
    """Whether bitboards x and y share a point."""
    cdef int i
    cdef uint64_t m = 0
    for i in range(nw):
        m |= x[i] & y[i]
    return m != 0


cdef void flood_fill(uint64_t* r, const uint64_t* mask, int nw, int w) noexcept nogil:
    """Grow r (a subset of mask) to the union of mask's 4-connected components that r meets;
    one word-wide step per point of distance, so cheap for the small regions that matter."""
    cdef uint64_t cur[MAX_W + 2]        # cur[0] and cur[nw + 1] stay zero (spread_to_neighbours)
    cdef uint64_t nb[MAX_W]
    cdef uint64_t x, changed
    cdef int i
    cur[0] = 0
    cur[nw + 1] = 0
    memcpy(cur + 1, r, nw * 8)
    while True:
        spread_to_neighbours(cur + 1, nb, nw, w)
        changed = 0
        for i in range(nw):
            x = cur[i + 1] | (nb[i] & mask[i])
            changed |= x ^ cur[i + 1]
            cur[i + 1] = x
        if not changed:
            break
    memcpy(r, cur + 1, nw * 8)


cdef inline void neighbours_of(const uint64_t* x, uint64_t* out, int nw, int w) noexcept nogil:
    """out = the points with a 4-neighbour in x (x of nw words, no padding needed)."""
    cdef uint64_t pad[MAX_W + 2]
    pad[0] = 0
    pad[nw + 1] = 0
    memcpy(pad + 1, x, nw * 8)
    spread_to_neighbours(pad + 1, out, nw, w)


cdef enum:
    MAX_REGIONS = (MAX_N * MAX_N + 1) // 2 + 1    # pairwise non-adjacent regions fit on a board


cdef void benson_area(const SV* v, const Geo* g, int pla, uint64_t* area) noexcept nogil:
    """area (a bitboard of nw words) = colour pla's pass-alive area.

    Benson's algorithm (1976) for unconditional life, with KataGo's area convention
    (board.cpp, calculateAreaForPla, suicide illegal): the chains of pla that stay
    alive even if pla always passes, plus the territory they enclose.

    - A region is a maximal connected set of points that are not pla stones (empty
      points and opponent stones). It is vital to a pla chain when every EMPTY point
      of it is a liberty of that chain (opponent stones inside need not touch the
      chain: they can only be captured, never fill the region).
    - Iterate: a chain with fewer than 2 vital regions, counting only regions that
      border no removed chain, is removed. The chains left are pass-alive. (The
      result is the largest set of chains each with two vital regions bordering
      only chains of the set, so the order of removal does not matter.)
    - Territory: a region that borders pla, borders no removed chain and has at
      most one point not adjacent to a pla stone (so no opponent group can make two
      eyes in it). All its points, opponent stones included (dead: they can never
      be saved), are pla's area. Larger enclosed regions are not, even when every
      chain around them is pass-alive.

    On bitboards, so the big regions of a game in progress cost a few word-wide
    floods: a region with an empty point next to no pla stone (`hopeless`) is vital
    to no chain, and only the other regions (eyes, mostly a few points) are
    extracted one by one and tested point by point. Chains no such region is vital
    to are removed before the iteration starts.
    """
    cdef int nw = g.nw, w = g.w
    cdef const uint64_t* P = v.bb + pla * nw
    cdef const uint64_t* O = v.bb + (3 - pla) * nw
    cdef const uint64_t* E = v.bb + BB_EMPTY * nw
    cdef uint64_t nonpla[MAX_W]         # empty points and opponent stones
    cdef uint64_t adj[MAX_W]            # points next to a pla stone
    cdef uint64_t internal[MAX_W]       # non-pla points next to no pla stone
    cdef uint64_t hopeless[MAX_W]       # the regions holding an empty point of `internal`
    cdef uint64_t cand[MAX_W]           # the other regions: possibly vital
    cdef uint64_t alive[MAX_W]          # stones of the chains not removed
    cdef uint64_t spoil[MAX_W]          # points next to a removed chain's stone
    cdef uint64_t tmp[MAX_W]
    cdef uint64_t r[MAX_W]
    cdef uint64_t regs[MAX_REGIONS * MAX_W]     # candidate region k: regs[k * nw ..]
    cdef int16_t vital[4 * MAX_REGIONS]         # region k is vital to chains vital[4k .. 4k + nvital[k])
    cdef int8_t nvital[MAX_REGIONS]
    cdef uint8_t small[MAX_REGIONS]             # <= 1 point of `internal`
    cdef uint8_t spoiled[MAX_REGIONS]
    cdef uint64_t chains[MAX_REGIONS * MAX_W]   # chain c's stones (the chains some region is vital to)
    cdef int16_t count[MAX_REGIONS]
    cdef uint8_t chain_alive[MAX_REGIONS]
    cdef int16_t chain_of[MAX_PTS]              # at a head: its chain index, -1 none
    cdef int16_t hd[4]
    cdef int i, j, k, c, p, q, h, st, nv, nkeep, nreg = 0, nch = 0
    cdef bint first, found, killed
    cdef uint64_t m, any_p = 0
    memset(area, 0, nw * 8)
    for i in range(nw):
        any_p |= P[i]
    if not any_p:
        return
    neighbours_of(P, adj, nw, w)
    for i in range(nw):
        nonpla[i] = E[i] | O[i]
        internal[i] = nonpla[i] & ~adj[i]
        hopeless[i] = E[i] & ~adj[i]
    flood_fill(hopeless, nonpla, nw, w)
    for i in range(nw):
        cand[i] = nonpla[i] & ~hopeless[i]
    if popcount_bb(cand, nw) < 2:
        return                          # no chain can have two vital regions

    # The candidate regions, and the chains each is vital to (those next to its first
    # empty point, filtered by each further one).
    memcpy(tmp, cand, nw * 8)
    i = 0
    while i < nw:
        if not tmp[i]:
            i += 1
            continue
        memset(r, 0, nw * 8)
        r[i] = tmp[i] & (~tmp[i] + 1)       # the lowest point left
        flood_fill(r, cand, nw, w)
        for j in range(nw):
            tmp[j] &= ~r[j]
        k = nreg
        nreg += 1
        memcpy(regs + k * nw, r, nw * 8)
        nv = 0
        first = True
        for j in range(nw):
            m = r[j] & E[j]
            while m:
                p = (j << 6) + ctz64(m)
                m &= m - 1
                if first:
                    first = False
                    for c in range(4):
                        q = p + g.nbr[c]
                        if (v.color[q] & COLOR) == pla:
                            h = v.head[q]
                            found = False
                            for st in range(nv):
                                found = found or hd[st] == h
                            if not found:
                                hd[nv] = <int16_t>h
                                nv += 1
                else:
                    nkeep = 0
                    for st in range(nv):
                        found = False
                        for c in range(4):
                            q = p + g.nbr[c]
                            found = found or ((v.color[q] & COLOR) == pla and v.head[q] == hd[st])
                        if found:
                            hd[nkeep] = hd[st]
                            nkeep += 1
                    nv = nkeep
                if nv == 0:
                    break
            if nv == 0 and not first:
                break                       # vital to no chain
        nvital[k] = <int8_t>nv
        for j in range(nv):
            vital[4 * k + j] = hd[j]        # heads for now; chain indices below
        memcpy(r, regs + k * nw, nw * 8)
        for j in range(nw):
            r[j] &= internal[j]
        small[k] = popcount_bb(r, nw) <= 1
        spoiled[k] = 0
    if nreg < 2:
        return

    # Chains some region is vital to start alive; every other chain is removed at once.
    memset(chain_of, 0xFF, g.npts * sizeof(int16_t))
    memset(alive, 0, nw * 8)
    for k in range(nreg):
        for j in range(nvital[k]):
            h = vital[4 * k + j]
            if chain_of[h] < 0:
                chain_of[h] = <int16_t>nch
                chain_alive[nch] = 1
                memset(chains + nch * nw, 0, nw * 8)
                st = h
                while True:
                    bit_on(chains + nch * nw, st)
                    st = v.nxt[st]
                    if st == h:
                        break
                for i in range(nw):
                    alive[i] |= chains[nch * nw + i]
                nch += 1
            vital[4 * k + j] = chain_of[h]
    while True:
        for i in range(nw):
            tmp[i] = P[i] & ~alive[i]
        neighbours_of(tmp, spoil, nw, w)
        for c in range(nch):
            count[c] = 0
        for k in range(nreg):
            spoiled[k] = meets(regs + k * nw, spoil, nw)
            if not spoiled[k]:
                for j in range(nvital[k]):
                    count[vital[4 * k + j]] += 1
        killed = False
        for c in range(nch):
            if chain_alive[c] and count[c] < 2:
                chain_alive[c] = 0
                killed = True
                for i in range(nw):
                    alive[i] &= ~chains[c * nw + i]
        if not killed:
            break
    if popcount_bb(alive, nw) == 0:
        return

    # The area: the pass-alive stones and the small regions they alone border, among the
    # candidates and among the hopeless regions next to them.
    memcpy(area, alive, nw * 8)
    for k in range(nreg):
        if small[k] and not spoiled[k]:
            for i in range(nw):
                area[i] |= regs[k * nw + i]
    neighbours_of(alive, tmp, nw, w)
    for i in range(nw):
        tmp[i] &= hopeless[i]
    i = 0
    while i < nw:
        if not tmp[i]:
            i += 1
            continue
        memset(r, 0, nw * 8)
        r[i] = tmp[i] & (~tmp[i] + 1)
        flood_fill(r, hopeless, nw, w)
        for j in range(nw):
            tmp[j] &= ~r[j]
        if meets(r, spoil, nw):
            continue
        for j in range(nw):
            cand[j] = r[j] & internal[j]
        if popcount_bb(cand, nw) <= 1:
            for j in range(nw):
                area[j] |= r[j]


cdef void pass_alive_row(const SV* v, const Geo* g, int8_t* out) noexcept nogil:
    """out[a] = +1 on Black's pass-alive area, -1 on White's, 0 elsewhere (benson_area).
    The two areas never overlap (a pass-alive chain is never the other colour's dead stone);
    were they to, the point would read 0."""
    cdef uint64_t black[MAX_W]
    cdef uint64_t white[MAX_W]
    cdef int i, p
    cdef uint64_t m
    benson_area(v, g, BLACK, black)
    benson_area(v, g, WHITE, white)
    memset(out, 0, g.nn)
    for i in range(g.nw):
        m = black[i] | white[i]
        while m:
            p = (i << 6) + ctz64(m)
            m &= m - 1
            out[g.act[p]] = <int8_t>(((black[i] >> (p & 63)) & 1) - ((white[i] >> (p & 63)) & 1))
