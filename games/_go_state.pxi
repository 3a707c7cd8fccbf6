# ---------------------------------------------------------------------------
# _go_state.pxi, included by _go.pyx: the state block and its geometry.
#
# The declarations of one position (Header, Geo, SV), the fixed Zobrist seed, the
# small bit helpers, copying / binding a block, and the Geometry class that lays
# the block out for one board size.
#
# Bitboards: four sets of padded points, one bit per point in `nw` 64-bit words
# (2 on 9x9, 7 on 19x19), kept in step with the point codes: the empty points,
# the black stones, the white stones and the stones whose group is in atari
# (stones carrying the ATARI bit). With them legal_row settles the common case
# for all points at once, in a few word-wide shifts and ands: an empty point is
# a legal non-capturing move (superko aside) when some neighbour is empty or an
# own stone not in atari, and no neighbour is an opponent stone in atari. Only
# the rest (a capture, whose captured groups change the hash, or a possible
# suicide) is tested point by point. The guard ring is in no set, so a shift by
# +-1 or +-(N + 2) needs no masks: a bit shifted off the board lands on the
# ring, or past the board's last point, which no empty-point mask keeps.
#
# ---------------------------------------------------------------------------

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
