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

Data structures (one fixed-size block per state, see Declarations below)
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

Superko look-up: every position hash of the game is stored in `hist`, and a
bloom filter (two probes, >= 16 bits per entry) answers "never seen" with no
scan; only on a bloom hit is `hist` scanned. The filter starts small and
doubles (rebuilt from `hist`) as the game grows, so copying an early-game
state, as search does per leaf, copies a small filter. Before either, a stone count
settles most moves: a move that captures nothing adds one stone, so it cannot
repeat a position when no earlier position had more stones than the current
one (the header tracks that maximum); in a game without captures so far no
probe is needed at all.

Bitboards: four sets of padded points, one bit per point in `nw` 64-bit words
(2 on 9x9, 7 on 19x19), kept in step with the point codes: the empty points,
the black stones, the white stones and the stones whose group is in atari
(stones carrying the ATARI bit). With them legal_row settles the common case
for all points at once, in a few word-wide shifts and ands: an empty point is
a legal non-capturing move (superko aside) when some neighbour is empty or an
own stone not in atari, and no neighbour is an opponent stone in atari. Only
the rest (a capture, whose captured groups change the hash, or a possible
suicide) is tested point by point. The guard ring is in no set, so a shift by
+-1 or +-(N + 2) needs no masks: a bit shifted off the board lands on the
ring, or past the board's last point, which no empty-point mask keeps.

Observation history uses an undo log instead of board snapshots: each move
logs the point it filled and the points it captured, in a ring sized for the
last MOVE_RING moves (captures in any 3 consecutive moves number at most
N*N + 2). encode() copies the current board and undoes up to T - 1 moves.

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

# ---------------------------------------------------------------------------
# Declarations. One position is one fixed-size byte block of `Geo.stride` bytes:
# a `Header` followed by per-point and per-move arrays at the offsets recorded
# in `Geo`. A batch is B blocks back to back, so copy / take / put / reset are
# memcpy and a block never holds a pointer. (They live here, not in a .pxd,
# because the games/ -> azero.games mapping hides a .pxd from Cython.)
# ---------------------------------------------------------------------------

cdef enum:
    EMPTY = 0
    BLACK = 1
    WHITE = 2
    EDGE = 3           # the guard ring around the board: never a liberty, never a stone
    COLOR = 3          # mask of the colour bits of a point code
    ATARI = 4          # point code flag: this stone's group has exactly one liberty
    HIST_T = 4         # board history steps in an observation
    MOVE_RING = 4      # moves whose changes the undo log keeps (>= HIST_T - 1, power of two)
    MAX_N = 19
    MAX_PTS = 441      # (MAX_N + 2) ** 2 points including the guard ring
    MAX_W = 7          # 64-bit words of a bitboard over MAX_PTS points
    BLOOM_MIN_BITS = 512   # initial bloom filter size (32 history entries at 16 bits each)
    # Bitboard k of a state is bb[k * nw : (k + 1) * nw]; the colour codes double as
    # indices, so the stones of colour c are bitboard c.
    BB_EMPTY = 0
    BB_ATARI = 3       # stones whose group is in atari (the ATARI bit of their codes)


cdef enum MoveCode:
    MOVE_OK = 0
    MOVE_OCCUPIED = 1
    MOVE_SUICIDE = 2
    MOVE_SUPERKO = 3
    MOVE_GAME_OVER = 4
    MOVE_OUT_OF_RANGE = 5


ctypedef struct Header:
    uint64_t hash                   # Zobrist hash of the stones on the board (0 = empty board)
    float score                     # Tromp-Taylor score (black - white - komi); set once terminal
    int32_t num_moves               # moves played, passes included; player to move = num_moves & 1
    int32_t log_pos                 # next write slot of the change log (a ring of Geo.logcap points)
    int32_t mlog_start[MOVE_RING]   # move k's changes start at log[mlog_start[k % MOVE_RING]]
    int16_t mlog_len[MOVE_RING]     # ... and number mlog_len (0 for a pass, else 1 + captures)
    uint32_t bloom_mask             # bloom filter size in bits - 1 (a power of two minus one)
    int16_t nstones                 # stones on the board
    int16_t max_stones              # most stones of any position so far (superko shortcut)
    uint8_t passes                  # consecutive passes just played
    uint8_t terminal


ctypedef struct Geo:
    # Board geometry and the byte layout of one state; shared by every batch of one game.
    int n                   # board side N
    int w                   # row stride of the padded board, N + 2
    int npts                # (N + 2) ** 2 padded points
    int nn                  # N * N playable points; also the pass action
    int max_moves
    int logcap              # change-log capacity in points
    int nw                  # 64-bit words per bitboard, ceil(npts / 64)
    uint32_t bloom_bits     # the bloom filter's largest size in bits (>= 16 per history entry)
    float komi
    int features            # FEATURES_BASIC / FEATURES_EXTENDED: which observation planes encode writes
    int planes              # observation planes: NUM_PLANES (basic) or EXT_PLANES (extended)
    Py_ssize_t stride       # bytes per state
    Py_ssize_t off_bb, off_color, off_head, off_next, off_nlib, off_size
    Py_ssize_t off_libsum, off_libsq, off_hist, off_bloom, off_log
    int nbr[4]              # neighbour offsets in the padded board
    int16_t* pt             # [nn] action -> padded point
    int16_t* act            # [npts] padded point -> action (-1 on the guard ring)
    uint64_t* zob           # [3 * npts] Zobrist keys, zob[colour * npts + point]; row 0 unused
    char* initial           # one state block holding the empty board


ctypedef struct SV:
    # Typed pointers into one state block (see Geo offsets); built per call, never stored.
    Header* h
    uint64_t* bb        # [4 * nw] bitboards: empty, black, white, in atari (see BB_EMPTY)
    int nw              # words per bitboard (Geo.nw)
    uint8_t* color      # [npts] point code: EMPTY / BLACK / WHITE / EDGE, | ATARI on stones in atari
    int16_t* head       # [npts] representative stone of the point's group (stones only)
    int16_t* nxt        # [npts] next stone of the group, a circular list
    int16_t* nlib       # [npts] at a head: pseudo-liberties (adjacent stone-empty pairs)
    int16_t* size       # [npts] at a head: stones in the group
    uint32_t* libsum    # [npts] at a head: sum of pseudo-liberty points
    uint32_t* libsq     # [npts] at a head: sum of their squares (atari test, see refresh_atari)
    uint64_t* hist      # [max_moves + 1] position hash after each move; hist[0] = empty board
    uint64_t* bloom     # [Header.bloom_mask / 64 + 1] bloom filter over hist (room for Geo.bloom_bits)
    int16_t* log        # [logcap] ring of changed points (placed stone, then captured stones)


cdef enum:
    NO_ACTION = -1      # C copy of azero.games.base.NO_ACTION for nogil code (checked below)
    NUM_PLANES = 2 * HIST_T + 2     # the "basic" observation
    # The "extended" observation: the basic planes, then (module docstring, Observations)
    P_LIBS = NUM_PLANES             # 6 planes: own groups with 1 / 2 / >= 3 liberties, then the opponent's
    P_KO_BAN = NUM_PLANES + 6       # empty points banned by superko only
    P_ALIVE = NUM_PLANES + 7        # 2 planes: own pass-alive area, the opponent's
    EXT_PLANES = NUM_PLANES + 9
    FEATURES_BASIC = 0
    FEATURES_EXTENDED = 1

assert NO_ACTION == _base.NO_ACTION

COLUMNS = "ABCDEFGHJKLMNOPQRST"   # GTP column letters: no 'I'
HISTORY_STEPS = HIST_T
# Observation feature sets (GoGame(features=...)) and their plane counts.
FEATURES = {"basic": NUM_PLANES, "extended": EXT_PLANES}


def check_features(features):
    """`features` if it names an observation feature set, else ValueError listing the allowed ones."""
    if not isinstance(features, str) or features not in FEATURES:
        raise ValueError(f"features must be one of {', '.join(repr(f) for f in FEATURES)}, got {features!r}")
    return features

_REASONS = {
    MOVE_OCCUPIED: "the point is occupied",
    MOVE_SUICIDE: "suicide",
    MOVE_SUPERKO: "it repeats an earlier position (positional superko)",
    MOVE_GAME_OVER: "the game is over",
}

# Fixed seed of the Zobrist table: hashes are reproducible across runs and processes.
cdef uint64_t ZOBRIST_SEED = 0x2F6B_19C0_5EED_0001ULL


def gtp_vertex(int n, int action):
    """'A9'-style name of an on-board action (r = 0 is the top row), or 'pass' for N*N."""
    if action == n * n:
        return "pass"
    return f"{COLUMNS[action % n]}{n - action // n}"


# ---------------------------------------------------------------------------
# Small pure helpers
# ---------------------------------------------------------------------------

cdef inline uint64_t splitmix64(uint64_t* s) noexcept nogil:
    """Next output of the splitmix64 generator with state *s (Steele et al. 2014)."""
    s[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = s[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint32_t bounded(uint64_t* s, uint32_t n) noexcept nogil:
    """Uniform integer in [0, n) (multiply-shift; bias < n / 2^32, irrelevant here)."""
    return <uint32_t>(((splitmix64(s) >> 32) * n) >> 32)


cdef inline Py_ssize_t round8(Py_ssize_t x) noexcept nogil:
    return (x + 7) & ~(<Py_ssize_t>7)


cdef extern from *:
    # Index of the lowest set bit of a non-zero word (one instruction on x86 / ARM).
    int ctz64 "__builtin_ctzll"(unsigned long long x) nogil


cdef inline int popcount64(uint64_t x) noexcept nogil:
    """Set bits of a word (SWAR: the default build targets CPUs without a popcount
    instruction, where __builtin_popcountll is a library call)."""
    x = x - ((x >> 1) & 0x5555555555555555ULL)
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL
    return <int>((x * 0x0101010101010101ULL) >> 56)


# SPREAD[x] holds byte j = bit j of x: turns 8 bits of a bitboard into 8 bytes of a
# bool mask with one 8-byte store. Filled at import, byte by byte so it is
# independent of the machine's byte order.
cdef uint64_t SPREAD[256]


def _fill_spread():
    cdef int x, j
    cdef uint8_t bytes8[8]
    for x in range(256):
        for j in range(8):
            bytes8[j] = (x >> j) & 1
        memcpy(&SPREAD[x], bytes8, 8)


_fill_spread()


cdef inline void bit_on(uint64_t* b, int p) noexcept nogil:
    b[p >> 6] |= (<uint64_t>1) << (p & 63)


cdef inline void bit_off(uint64_t* b, int p) noexcept nogil:
    b[p >> 6] &= ~((<uint64_t>1) << (p & 63))


cdef inline void bit_put(uint64_t* b, int p, bint on) noexcept nogil:
    cdef uint64_t m = (<uint64_t>1) << (p & 63)
    b[p >> 6] = (b[p >> 6] & ~m) | (((<uint64_t>0) - <uint64_t>on) & m)


cdef inline void spread_to_neighbours(const uint64_t* x, uint64_t* out, int nw, int w) noexcept nogil:
    """out = the points with a 4-neighbour in x, for bitboards of nw words over a padded
    board of row stride w; x[-1] and x[nw] must be readable zero words."""
    cdef int i
    cdef uint64_t lo, mid, hi
    for i in range(nw):
        lo = x[i - 1]
        mid = x[i]
        hi = x[i + 1]
        out[i] = ((mid << 1) | (lo >> 63) | (mid >> 1) | (hi << 63)
                  | (mid << w) | (lo >> (64 - w)) | (mid >> w) | (hi << (64 - w)))


cdef inline void copy_state(char* dst, const char* src, const Geo* g) noexcept nogil:
    """Copy the used part of one state block.

    The bloom filter and the history are the last two fields and only their used
    prefixes (the filter's current size, hist[0..num_moves]) are ever read, so the
    unused tails (most of both early in a game) are skipped: search copies a state per leaf.
    """
    cdef const Header* h = <const Header*>src
    memcpy(dst, src, g.off_bloom + ((<Py_ssize_t>h.bloom_mask + 1) >> 3))
    memcpy(dst + g.off_hist, src + g.off_hist, 8 * (<Py_ssize_t>h.num_moves + 1))


cdef inline void bind(SV* v, char* base, const Geo* g) noexcept nogil:
    v.h = <Header*>base
    v.bb = <uint64_t*>(base + g.off_bb)
    v.nw = g.nw
    v.color = <uint8_t*>(base + g.off_color)
    v.head = <int16_t*>(base + g.off_head)
    v.nxt = <int16_t*>(base + g.off_next)
    v.nlib = <int16_t*>(base + g.off_nlib)
    v.size = <int16_t*>(base + g.off_size)
    v.libsum = <uint32_t*>(base + g.off_libsum)
    v.libsq = <uint32_t*>(base + g.off_libsq)
    v.hist = <uint64_t*>(base + g.off_hist)
    v.bloom = <uint64_t*>(base + g.off_bloom)
    v.log = <int16_t*>(base + g.off_log)


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


# ---------------------------------------------------------------------------
# Playing moves
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


cdef inline float tt_score(const SV* v, const Geo* g) noexcept nogil:
    """Tromp-Taylor score: black area - white area - komi (tt_area)."""
    return <float>tt_area(v, g, NULL) - g.komi


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


# ---------------------------------------------------------------------------
# The leaf API (games/leaf_api.pxd): the search's per-step calls, shared with
# GoStates.load_paths / query / encode. ctx is a GoStates' LeafCtx field, which
# points at the object's `buf` field: apply_paths swaps the buffer behind it.
# ---------------------------------------------------------------------------

ctypedef struct LeafCtx:
    char** buf          # &GoStates.buf
    const Geo* g


cdef Py_ssize_t go_load_paths(void* dst, const void* src, const int64_t* games, const int32_t* paths,
                              Py_ssize_t m, Py_ssize_t length, Py_ssize_t* bad_step) noexcept nogil:
    cdef const Geo* g = (<const LeafCtx*>dst).g
    cdef char* d = (<const LeafCtx*>dst).buf[0]
    cdef const char* s = (<const LeafCtx*>src).buf[0]
    cdef Py_ssize_t k, j
    cdef int a
    cdef SV v
    for k in range(m):
        copy_state(d + k * g.stride, s + games[k] * g.stride, g)
        bind(&v, d + k * g.stride, g)
        for j in range(length):
            a = paths[k * length + j]
            if a == NO_ACTION:
                continue
            if check_action(&v, g, a) != MOVE_OK:
                bad_step[0] = j
                return k
            play_action(&v, g, a)
    return -1


cdef void go_query(const void* ctx, Py_ssize_t n, uint8_t* legal, uint8_t* terminal, int8_t* to_play,
                   float* outcome) noexcept nogil:
    cdef const Geo* g = (<const LeafCtx*>ctx).g
    cdef char* buf = (<const LeafCtx*>ctx).buf[0]
    cdef Py_ssize_t b
    cdef SV v
    for b in range(n):
        bind(&v, buf + b * g.stride, g)
        legal_row(&v, g, legal + b * (g.nn + 1))
        terminal[b] = v.h.terminal
        to_play[b] = v.h.num_moves & 1
        outcome[b] = outcome_of(&v)


cdef void go_encode(const void* ctx, Py_ssize_t n, float* out) noexcept nogil:
    cdef const Geo* g = (<const LeafCtx*>ctx).g
    cdef char* buf = (<const LeafCtx*>ctx).buf[0]
    cdef Py_ssize_t b
    cdef SV v
    for b in range(n):
        bind(&v, buf + b * g.stride, g)
        encode_row(&v, g, out + b * (g.planes * g.nn))


cdef void go_final_score(const void* ctx, Py_ssize_t n, float* score) noexcept nogil:
    cdef const Geo* g = (<const LeafCtx*>ctx).g
    cdef char* buf = (<const LeafCtx*>ctx).buf[0]
    cdef const Header* h
    cdef Py_ssize_t b
    for b in range(n):
        h = <const Header*>(buf + b * g.stride)
        score[b] = h.score if h.terminal else 0.0


cdef bint go_compatible(const void* a, const void* b) noexcept nogil:
    # Same rule parameters give the same state layout (GoStates.load_paths / put check the same);
    # the same features give the same observations, so leaves and roots also agree on obs_size.
    cdef const Geo* ga = (<const LeafCtx*>a).g
    cdef const Geo* gb = (<const LeafCtx*>b).g
    return (ga.n == gb.n and ga.komi == gb.komi and ga.max_moves == gb.max_moves
            and ga.features == gb.features)


# ---------------------------------------------------------------------------
# Python classes
# ---------------------------------------------------------------------------

cdef char* fast_buffer(object arr, int typenum, int ndim, bint writeable):
    """Data pointer of `arr` when it is exactly an ndarray of native-order dtype `typenum`
    with `ndim` dimensions, C-contiguous (and writeable if asked); else NULL.

    The search calls load_paths and query every step with its own preallocated buffers,
    which always pass; checking them here costs nanoseconds where the general Python
    checks (azero.games.base) and typed-memoryview acquisition cost microseconds per
    call, about 150 ns per leaf. Any other argument takes the general path, which
    converts it or raises the documented error, so the fast path accepts nothing the
    general one would refuse. The caller checks shapes (PyArray_DIMS) and keeps `arr`
    alive while it uses the pointer.
    """
    if not cnp.PyArray_CheckExact(arr):
        return NULL
    cdef cnp.ndarray a = <cnp.ndarray>arr
    if (cnp.PyArray_TYPE(a) != typenum or cnp.PyArray_NDIM(a) != ndim
            or not cnp.PyArray_IS_C_CONTIGUOUS(a) or not cnp.PyArray_ISNOTSWAPPED(a)
            or (writeable and not cnp.PyArray_ISWRITEABLE(a))):
        return NULL
    return <char*>cnp.PyArray_DATA(a)


cdef char* fast_bool_buffer(object arr, int ndim):
    # bool or uint8, as azero.games.base.check_query accepts for masks.
    cdef char* p = fast_buffer(arr, cnp.NPY_BOOL, ndim, True)
    return p if p != NULL else fast_buffer(arr, cnp.NPY_UINT8, ndim, True)


cdef inline cnp.npy_intp dim(object arr, int i):
    # Only for arrays fast_buffer accepted.
    return cnp.PyArray_DIMS(<cnp.ndarray>arr)[i]


cdef class Geometry:
    """Board geometry, Zobrist table, state layout and initial state of one Go variant.

    Built once per GoGame and shared by all of its batches.
    """

    cdef Geo g
    cdef readonly object spec
    cdef readonly int board_size
    cdef readonly double komi
    cdef readonly int max_moves
    cdef readonly str features

    def __cinit__(self, int board_size, double komi, int max_moves, object spec, str features="basic"):
        cdef Geo* g = &self.g
        cdef int r, c, p, i, bits
        cdef uint64_t s = ZOBRIST_SEED + <uint64_t>board_size
        cdef Py_ssize_t off
        cdef SV v
        g.pt = NULL
        g.act = NULL
        g.zob = NULL
        g.initial = NULL
        if not 2 <= board_size <= MAX_N:
            raise ValueError(f"board_size must be in [2, {MAX_N}], got {board_size}")
        if max_moves < 1:
            raise ValueError(f"max_moves must be >= 1, got {max_moves}")
        check_features(features)
        self.spec = spec
        self.board_size = board_size
        self.komi = komi
        self.max_moves = max_moves
        self.features = features
        g.features = FEATURES_EXTENDED if features == "extended" else FEATURES_BASIC
        g.planes = FEATURES[features]
        g.n = board_size
        g.w = board_size + 2
        g.npts = g.w * g.w
        g.nn = board_size * board_size
        g.max_moves = max_moves
        g.komi = <float>komi
        g.nbr[0] = -g.w
        g.nbr[1] = -1
        g.nbr[2] = 1
        g.nbr[3] = g.w
        # Changes of the last 3 moves: <= 3 placements + (N*N + 2) captures.
        g.logcap = g.nn + 8
        bits = BLOOM_MIN_BITS
        while bits < 16 * (max_moves + 1):
            bits *= 2
        g.bloom_bits = bits

        # Layout: what legal_row reads (the bitboards; then point codes and head
        # for the points it tests one by one) comes first and together, so a
        # legality pass over a batch streams one compact region per state; fields
        # touched only when a move is played follow; the bloom filter and the
        # history come last, as copy_state copies only their used prefixes.
        g.nw = (g.npts + 63) >> 6
        off = round8(sizeof(Header))
        g.off_bb = off
        off = off + 8 * 4 * g.nw
        g.off_color = off
        off = round8(off + g.npts)
        g.off_head = off
        off = round8(off + 2 * g.npts)
        g.off_next = off
        off = round8(off + 2 * g.npts)
        g.off_nlib = off
        off = round8(off + 2 * g.npts)
        g.off_size = off
        off = round8(off + 2 * g.npts)
        g.off_libsum = off
        off = round8(off + 4 * g.npts)
        g.off_libsq = off
        off = round8(off + 4 * g.npts)
        g.off_log = off
        off = round8(off + 2 * g.logcap)
        g.off_bloom = off
        off = off + bits // 8
        g.off_hist = off
        off = off + 8 * (<Py_ssize_t>max_moves + 1)
        g.stride = (off + 63) & ~(<Py_ssize_t>63)    # whole cache lines per state

        g.pt = <int16_t*>malloc(g.nn * sizeof(int16_t))
        g.act = <int16_t*>malloc(g.npts * sizeof(int16_t))
        g.zob = <uint64_t*>malloc(3 * g.npts * sizeof(uint64_t))
        g.initial = <char*>calloc(g.stride, 1)
        if g.pt == NULL or g.act == NULL or g.zob == NULL or g.initial == NULL:
            raise MemoryError()
        for i in range(g.npts):
            g.act[i] = -1
        for r in range(board_size):
            for c in range(board_size):
                g.pt[r * board_size + c] = <int16_t>((r + 1) * g.w + c + 1)
                g.act[(r + 1) * g.w + c + 1] = <int16_t>(r * board_size + c)
        for i in range(3 * g.npts):
            g.zob[i] = splitmix64(&s)

        bind(&v, g.initial, g)
        memset(v.color, EDGE, g.npts)
        for i in range(g.nn):
            v.color[g.pt[i]] = EMPTY
            bit_on(v.bb + BB_EMPTY * g.nw, g.pt[i])
        v.hist[0] = 0               # the empty board hashes to 0
        v.h.bloom_mask = BLOOM_MIN_BITS - 1
        bloom_add(&v, 0)

    def __dealloc__(self):
        free(self.g.pt)
        free(self.g.act)
        free(self.g.zob)
        free(self.g.initial)

    def __reduce__(self):
        # Rebuilt from its parameters: the Zobrist table and layout are deterministic.
        return (Geometry, (self.board_size, self.komi, self.max_moves, self.spec, self.features))

    @property
    def state_bytes(self):
        """Bytes of one stored position (what copy / take / put move per state)."""
        return self.g.stride


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
        """int8 [B]: player to move, 0 = Black, 1 = White."""
        out = check_out(out, (self.B,), np.int8, "to_play")
        cdef int8_t[::1] o = out
        cdef Py_ssize_t b
        with nogil:
            for b in range(self.B):
                o[b] = (<Header*>(self.buf + b * self.g.stride)).num_moves & 1
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

    def outcome(self, out=None):
        """float32 [B]: +1 Black (player 0) won, -1 White won, 0 draw or not over."""
        out = check_out(out, (self.B,), np.float32, "outcome")
        cdef float[::1] o = out
        cdef Py_ssize_t b
        cdef SV v
        with nogil:
            for b in range(self.B):
                bind(&v, self.buf + b * self.g.stride, self.g)
                o[b] = outcome_of(&v)
        return out

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
        out = check_out(out, (self.B,), np.float32, "score")
        cdef float[::1] o = out
        cdef Py_ssize_t b
        cdef SV v
        with nogil:
            for b in range(self.B):
                bind(&v, self.buf + b * self.g.stride, self.g)
                o[b] = tt_score(&v, self.g)
        return out

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

    def ownership(self, out=None):
        """int8 [B, N*N]: Tromp-Taylor owner of each point of the position as it stands: +1 a
        black stone or an empty region reaching only black, -1 likewise white, 0 an empty
        region reaching both colours (dame, seki) or none. score() == sum - komi exactly."""
        out = check_out(out, (self.B, self.g.nn), np.int8, "ownership")
        if self.B == 0:
            return out
        cdef int8_t[:, ::1] o = out
        cdef Py_ssize_t b
        cdef SV v
        cdef const Geo* g = self.g
        with nogil:
            for b in range(self.B):
                bind(&v, self.buf + b * g.stride, g)
                tt_area(&v, g, &o[b, 0])
        return out

    def pass_alive(self, out=None):
        """int8 [B, N*N]: +1 on Black's pass-alive area, -1 on White's, 0 elsewhere.

        A colour's pass-alive area is its chains that Benson's algorithm proves alive
        even if it always passes, plus the small regions they alone enclose, with any
        (dead) opponent stones inside (see benson_area for the exact rule, KataGo's).
        """
        out = check_out(out, (self.B, self.g.nn), np.int8, "pass_alive")
        if self.B == 0:
            return out
        cdef int8_t[:, ::1] o = out
        cdef Py_ssize_t b
        cdef SV v
        cdef const Geo* g = self.g
        with nogil:
            for b in range(self.B):
                bind(&v, self.buf + b * g.stride, g)
                pass_alive_row(&v, g, &o[b, 0])
        return out

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
