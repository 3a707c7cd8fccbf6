# cython: language_level=3, wraparound=False, cdivision=True
"""The batched MCTS tree: B independent search trees in preallocated struct-of-arrays storage.

Layout (mctx-style, edge statistics on the parent as in minigo):

    node fields   [B, N]     visits, value sum, raw value, parent, action from parent,
                             player to move, state (pending / expanded / terminal), in-flight
    child fields  [B, N, A]  child id, prior, N(s, a), W(s, a)

A node's children are one contiguous row of A slots, so PUCT over all children
is one pass over four contiguous arrays (20 bytes per slot). Rows are dense in
A rather than packed per legal move: the evaluator's priors copy straight in,
an action indexes its slot directly, and memory stays below mctx's layout
(6 x 4 bytes per slot). Node 0 of each tree is its root (ROOT); a child always
has a larger id than its parent, which lets re-rooting compact in place.

Value convention (the one place it is written down for the search core): a
node's value, raw value and value sum are from the view of the player to move
at that node; W(s, a) is from the view of the player to move at s, so every
selection rule maximises directly. Going up one edge the value is negated
exactly when the two nodes have different players to move (games where a
player moves twice in a row need no special case).

One batch step (driven from search/mcts.py):
  select()            up to K descents per game; writes the action path of every
                      new leaf (NO_ACTION-padded, [M, L]) and its game index.
                      Known terminal nodes are backed up on the spot (exact value).
  <game layer + evaluator on the M leaves>
  expand_and_backup() validates the evaluator output, stores priors over the
                      legal actions and backs the values up to the root.
For native games the driver crosses into the tree once per step instead: bind_leaves()
binds the game's leaf API (games/leaf_api.pxd), the roots and the step buffers once per
search, and each leaf_step() runs expand_and_backup of the previous step's evaluations,
select() and the game work on the new leaves in one `with nogil` block, so only the
evaluator call holds the GIL.

Virtual loss (K > 1 leaves per game and step): a descent increments
node_in_flight on every node it reaches; selection then sees each pending
descent as one visit valued -virtual_loss. The counters are integers and W
itself is never touched, so reverting them is exact and K = 1 is exactly
AlphaZero. A descent that reaches a node another descent of the same step is
already evaluating (a collision) is dropped, not evaluated twice.

Selection rules (ties go to the lowest action index everywhere):
  PUCT (AlphaZero):  argmax_a  Q(s,a) + c(s) P(s,a) sqrt(N(s)) / (1 + N(s,a)),
      c(s) = log((1 + N(s) + c_base) / c_base) + c_init, N(s) = node visits;
      an unvisited child takes Q = V(s) - fpu_reduction (first-play urgency).
  Gumbel (Danihelka et al., ICLR 2022): at the root, sequential halving over
      g(a) + logit(a) + sigma(completed Q(a)) (the visit schedule is a table
      from search/gumbel.py); elsewhere the deterministic rule
      argmax_a  pi'(a) - N(s,a) / (1 + sum_b N(s,b)),  pi' = softmax(logit + sigma(completed Q)),
      sigma(q) = (c_visit + max_b N(s,b)) * c_scale * q, completed Q = Q(s,a) if
      visited else v_mix (eq. 33 of the paper).

Inner loops are `noexcept nogil` and every public method releases the GIL for
its whole batch, so two trees driven from two threads run on two cores. A tree
itself is not thread-safe: one thread drives one tree.

Errors never corrupt memory: shapes are checked before any nogil loop, a full
tree or an over-long path is reported before a node or path slot is written,
and evaluator output is validated for the whole step before any of it is used.
"""

from libc.math cimport atan, exp, log, sqrt, isfinite, INFINITY
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t
from libc.string cimport memcpy, memset
from libc.float cimport FLT_MAX

from leaf_api cimport LeafApi, leaf_api_of

import numpy as np

cimport numpy as cnp

cnp.import_array()

# Sentinels (C enum for nogil code; the same values are exported as Python ints below).
cdef enum:
    ROOT_ = 0              # node id of every tree's root
    NO_PARENT_ = -1        # node_parent of a root
    NO_ACTION_ = -1        # node_action of a root; padding in action paths (= azero.games.base.NO_ACTION)
    UNEXPANDED_ = -1       # child_index of a legal action whose child has no node yet
    ILLEGAL_ = -2          # child_index of an illegal action (and every slot of a terminal node)
    NODE_PENDING_ = 0      # allocated, waiting for its evaluation
    NODE_EXPANDED_ = 1     # evaluated; its child row is valid
    NODE_TERMINAL_ = 2     # game over here; node_raw_value is the exact outcome

# Error codes of the nogil helpers, turned into exceptions by the Python-facing methods.
cdef enum:
    OK = 0
    ERR_CAPACITY = 1
    ERR_DEPTH = 2
    ERR_PRIOR = 3
    ERR_VALUE = 4
    ERR_NO_LEGAL = 5
    ERR_NO_CHOICE = 6
    ERR_ILLEGAL_PATH = 7

# Logit of a legal action with prior 0 (log 0 = -inf would make g + logit + sigma a NaN-prone -inf).
cdef double LOW_LOGIT = -1e9
cdef double M_2_PI = 0.63661977236758134308   # 2 / pi: the score utility's atan maps onto (-1, 1)
# Smallest span of completed Q values that min-max rescaling divides by.
cdef double RESCALE_EPS = 1e-8

ROOT = ROOT_
NO_PARENT = NO_PARENT_
NO_ACTION = NO_ACTION_
UNEXPANDED = UNEXPANDED_
ILLEGAL = ILLEGAL_
NODE_PENDING = NODE_PENDING_
NODE_EXPANDED = NODE_EXPANDED_
NODE_TERMINAL = NODE_TERMINAL_


class TreeCapacityError(ValueError):
    """A search needs more nodes than the tree was built with (raise SearchConfig.max_nodes)."""


class EvaluatorOutputError(ValueError):
    """An evaluator returned NaN / infinite values or negative / non-finite priors."""


cdef object _readonly(object arr):
    """A read-only view of arr (which stays alive as the view's base)."""
    view = arr.view()
    view.flags.writeable = False
    return view


cdef double* _f64(object arr):
    cdef double[::1] mv = arr.reshape(-1)
    return &mv[0]


cdef float* _f32(object arr):
    cdef float[::1] mv = arr.reshape(-1)
    return &mv[0]


cdef int32_t* _i32(object arr):
    cdef int32_t[::1] mv = arr.reshape(-1)
    return &mv[0]


cdef int64_t* _i64(object arr):
    cdef int64_t[::1] mv = arr.reshape(-1)
    return &mv[0]


cdef int8_t* _i8(object arr):
    cdef int8_t[::1] mv = arr.reshape(-1)
    return &mv[0]


cdef uint8_t* _u8(object arr):
    cdef uint8_t[::1] mv = arr.reshape(-1)
    return &mv[0]


cdef char* _array_data(object arr, int typenum, bint writeable):
    """Data pointer of `arr` when it is exactly an ndarray of native-order dtype `typenum` (NPY_BOOL:
    bool or uint8), C-contiguous and aligned (and writeable if asked); else NULL. Shapes are the
    caller's to check. A few C checks: leaf_step runs them on every evaluator output."""
    if not cnp.PyArray_CheckExact(arr):
        return NULL
    cdef cnp.ndarray a = <cnp.ndarray>arr
    cdef int t = cnp.PyArray_TYPE(a)
    if ((t != typenum and not (typenum == cnp.NPY_BOOL and t == cnp.NPY_UINT8))
            or not cnp.PyArray_IS_C_CONTIGUOUS(a) or not cnp.PyArray_ISALIGNED(a) or not cnp.PyArray_ISNOTSWAPPED(a)
            or (writeable and not cnp.PyArray_ISWRITEABLE(a))):
        return NULL
    return <char*>cnp.PyArray_DATA(a)


cdef const float* _float32_rows(object arr, Py_ssize_t rows, Py_ssize_t width):
    """_array_data of a read-only float32 array of shape exactly [rows] (width 0) or [rows, width]; else NULL."""
    cdef char* p = _array_data(arr, cnp.NPY_FLOAT32, False)
    if p == NULL:
        return NULL
    cdef cnp.ndarray a = <cnp.ndarray>arr
    if width == 0:
        return <const float*>p if cnp.PyArray_NDIM(a) == 1 and cnp.PyArray_DIMS(a)[0] == rows else NULL
    if cnp.PyArray_NDIM(a) == 2 and cnp.PyArray_DIMS(a)[0] == rows and cnp.PyArray_DIMS(a)[1] == width:
        return <const float*>p
    return NULL


cdef char* _step_buffer(object arr, str name, int typenum, int ndim, Py_ssize_t rows, Py_ssize_t width) except NULL:
    """bind_leaves' check of one step buffer: a writeable C-contiguous array of at least `rows` rows, each
    of `width` elements: shape [>= rows] (ndim 1), [>= rows, width] (ndim 2) or [>= rows, ...] whose
    trailing dimensions hold `width` elements (ndim 0)."""
    cdef char* p = _array_data(arr, typenum, True)
    cdef bint ok = p != NULL
    if ok:
        shape = arr.shape
        if ndim == 0:
            ok = len(shape) >= 2 and shape[0] >= rows and int(np.prod(shape[1:])) == width
        else:
            ok = len(shape) == ndim and shape[0] >= rows and (ndim == 1 or shape[1] == width)
    if not ok:
        dtype = "bool or uint8" if typenum == cnp.NPY_BOOL else np.dtype(cnp.PyArray_TypeObjectFromType(typenum)).name
        want = {0: f"[>= {rows}, ...] with {width} elements per row", 1: f"[>= {rows}]",
                2: f"[>= {rows}, {width}]"}[ndim]
        got = f"{arr.dtype} {arr.shape}" if isinstance(arr, np.ndarray) else type(arr).__name__
        raise ValueError(f"bind_leaves: {name} must be a writeable C-contiguous {dtype} array of shape {want}, "
                         f"got {got}")
    return p


cdef LeafApi* _leaf_api_of(object states, str what) except NULL:
    get = getattr(states, "_leaf_api", None)
    if get is None:
        raise TypeError(f"bind_leaves: the {what} ({type(states).__name__}) export no leaf API; "
                        f"drive such a game with select / expand_and_backup")
    return leaf_api_of(get())


cdef str _spec_text(object states):
    spec = getattr(states, "spec", None)
    return f"{spec.name} {spec.params}" if spec is not None else type(states).__name__


# Two hot loops in C, where their shape is easier to state than in Cython. Both do exactly the
# arithmetic of the Python twin (same IEEE double operations in the same order; SSE2 lanes round
# exactly like scalar SSE2 code), so results are bit-identical; only the schedule differs.
#
# azero_puct_argmax: the PUCT child loop without virtual loss (K = 1: nothing is ever pending).
#   score(a) = Q(a) + u(a) / (1 + N(a)),  u(a) = c(s) sqrt(N(s)) P(a),  Q(a) = W(a) / N(a) or fpu
#   if N(a) = 0 (then u / 1 == u exactly). Children go two at a time in SSE2 lanes: a visited child
#   costs two divisions, the bulk of PUCT's time at well-visited nodes such as the root, and one
#   divpd does two of them for the price of one divsd. A pair with no visits (most pairs at most
#   nodes) skips the divisions. Each lane keeps its own running argmax (strict >, so the lowest
#   index of the lane wins ties) without branches; illegal children score -inf and never win;
#   the lanes are merged at the end (equal scores: lower index), so ties go to the lowest action
#   index overall, as everywhere. The scalar loop is the fallback off x86-64 and the odd tail.
#
# azero_store_priors: one expanded node's child row from the evaluator's priors: index UNEXPANDED
#   or ILLEGAL, prior = float32(p / total) over the legal actions (uniform 1 / count if total is
#   0), 0 elsewhere. The division is again done two lanes at a time.
cdef extern from *:
    """
    #include <math.h>
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif

    static inline double azero_puct_score(int32_t n, double w, double u, double fpu)
    {
        return n > 0 ? w / n + u / (1 + n) : fpu + u;
    }

    static int32_t azero_puct_argmax(Py_ssize_t A, const int32_t *index, const int32_t *visits,
                                     const double *value_sum, const float *prior,
                                     double c_sqrt, double fpu)
    {
        double best = -INFINITY, score;
        int32_t best_a = -1;
        Py_ssize_t a = 0;
    #if defined(__SSE2__)
        if (A >= 2) {
            const __m128d vc = _mm_set1_pd(c_sqrt), vfpu = _mm_set1_pd(fpu), one = _mm_set1_pd(1.0);
            const __m128d two = _mm_set1_pd(2.0), ninf = _mm_set1_pd(-INFINITY);
            const __m128i illegal_code = _mm_set1_epi32(-2);  /* ILLEGAL */
            __m128d vbest = ninf, vbest_a = _mm_set1_pd(-1.0), va = _mm_set_pd(1.0, 0.0);
            for (; a + 1 < A; a += 2, va = _mm_add_pd(va, two)) {
                __m128d u = _mm_mul_pd(vc, _mm_cvtps_pd(_mm_castsi128_ps(
                                _mm_loadl_epi64((const __m128i *)(prior + a)))));
                __m128d s;
                if ((visits[a] | visits[a + 1]) == 0) {
                    s = _mm_add_pd(vfpu, u);                              /* both unvisited */
                } else {
                    __m128d n = _mm_cvtepi32_pd(_mm_loadl_epi64((const __m128i *)(visits + a)));
                    __m128d visited = _mm_cmpgt_pd(n, _mm_setzero_pd());
                    __m128d q = _mm_div_pd(_mm_loadu_pd(value_sum + a), _mm_max_pd(n, one));
                    q = _mm_or_pd(_mm_and_pd(visited, q), _mm_andnot_pd(visited, vfpu));
                    s = _mm_add_pd(q, _mm_div_pd(u, _mm_add_pd(one, n)));
                }
                __m128i ill32 = _mm_cmpeq_epi32(_mm_loadl_epi64((const __m128i *)(index + a)), illegal_code);
                __m128d ill = _mm_castsi128_pd(_mm_unpacklo_epi32(ill32, ill32));  /* widen to 64-bit lanes */
                s = _mm_or_pd(_mm_andnot_pd(ill, s), _mm_and_pd(ill, ninf));
                __m128d gt = _mm_cmpgt_pd(s, vbest);
                vbest = _mm_or_pd(_mm_and_pd(gt, s), _mm_andnot_pd(gt, vbest));
                vbest_a = _mm_or_pd(_mm_and_pd(gt, va), _mm_andnot_pd(gt, vbest_a));
            }
            double b0 = _mm_cvtsd_f64(vbest), b1 = _mm_cvtsd_f64(_mm_unpackhi_pd(vbest, vbest));
            int32_t a0 = (int32_t)_mm_cvtsd_f64(vbest_a);
            int32_t a1 = (int32_t)_mm_cvtsd_f64(_mm_unpackhi_pd(vbest_a, vbest_a));
            if (b1 > b0 || (b1 == b0 && a1 < a0)) { b0 = b1; a0 = a1; }
            best = b0;
            best_a = a0;
        }
    #endif
        for (; a < A; a++) {
            score = azero_puct_score(visits[a], value_sum[a], c_sqrt * (double)prior[a], fpu);
            if (score > best && index[a] != -2 /* ILLEGAL */) {
                best = score;
                best_a = (int32_t)a;
            }
        }
        return best_a;
    }

    static void azero_store_priors(Py_ssize_t A, const float *pr, const uint8_t *lg, double total,
                                   int32_t count, int32_t *index, float *prior)
    {
        Py_ssize_t a = 0;
        /* UNEXPANDED (-1) where legal, ILLEGAL (-2) elsewhere, without a branch. */
        for (a = 0; a < A; a++)
            index[a] = lg[a] ? -1 : -2;
        if (!(total > 0.0)) {
            /* All prior mass on illegal actions: fall back to uniform over the legal ones. */
            float p = (float)(1.0 / count);
            for (a = 0; a < A; a++)
                prior[a] = lg[a] ? p : 0.0f;
            return;
        }
        a = 0;
    #if defined(__SSE2__)
        const __m128d vt = _mm_set1_pd(total);
        for (; a + 1 < A; a += 2) {
            __m128d x = _mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(pr + a))));
            __m128 p = _mm_cvtpd_ps(_mm_div_pd(x, vt));
            float p2[4];
            _mm_storeu_ps(p2, p);
            prior[a] = lg[a] ? p2[0] : 0.0f;
            prior[a + 1] = lg[a + 1] ? p2[1] : 0.0f;
        }
    #endif
        for (; a < A; a++)
            prior[a] = lg[a] ? (float)((double)pr[a] / total) : 0.0f;
    }
    """
    int32_t azero_puct_argmax(Py_ssize_t A, const int32_t* index, const int32_t* visits,
                              const double* value_sum, const float* prior, double c_sqrt, double fpu) noexcept nogil
    void azero_store_priors(Py_ssize_t A, const float* pr, const uint8_t* lg, double total, int32_t count,
                            int32_t* index, float* prior) noexcept nogil


cdef class SearchTree:
    """B search trees of `capacity` nodes over `num_actions` actions (see the module docstring).

    The numpy attributes (node_*, child_*, num_nodes, ...) are live views of the
    tree for tests and diagnostics; treat them as read-only.
    """

    # The declarations live here rather than in a .pxd: the extension is built as azero.search._mcts
    # from search/_mcts.pyx, and Cython looks for that module's .pxd only under azero/search/.
    # ---- shape, fixed at construction -------------------------------------------------
    cdef readonly Py_ssize_t batch          # B: independent trees, one per game
    cdef readonly Py_ssize_t capacity       # N: nodes per tree, root included
    cdef readonly Py_ssize_t num_actions    # A: children slots per node
    cdef readonly Py_ssize_t max_depth      # D: longest action path select() may return
    cdef readonly Py_ssize_t leaves_per_game  # K: leaves one game may contribute per batch step

    # ---- search parameters ---------------------------------------------------------------
    cdef readonly bint gumbel               # Gumbel root + deterministic interior (else PUCT)
    cdef readonly double c_base, c_init, fpu_reduction, virtual_loss
    cdef readonly double noise_weight
    cdef readonly double c_visit, c_scale
    cdef readonly bint rescale_q
    cdef readonly double score_lambda       # weight of the score utility (0: win/loss value only)
    cdef readonly double score_div          # its scale: score_scale * sqrt(board area), points

    # ---- node fields, [B, N] (numpy owners and raw pointers into them) ----------------------
    cdef readonly object node_visits        # int32: backups through the node (its own expansion included)
    cdef readonly object node_value_sum     # float64: sum of those values, frame of the node's player to move
    cdef readonly object node_raw_value     # float64: evaluator (or exact terminal) value, same frame; set once evaluated
    cdef readonly object node_parent        # int32: parent id, NO_PARENT at the root
    cdef readonly object node_action        # int32: action from the parent, NO_ACTION at the root
    cdef readonly object node_to_play       # int8: player to move at the node; set once evaluated
    cdef readonly object node_state         # uint8: NODE_PENDING -> NODE_EXPANDED | NODE_TERMINAL
    cdef readonly object node_in_flight     # int32: descents of the current batch step that reached the node
    cdef readonly object node_win_sum       # float64: sum of the win/loss values alone (node_value_sum adds the
                                            #   score utility), node's player frame: the win rate users see
    cdef readonly object node_score_sum     # float64: sum of the backed-up expected scores, node's player frame
    cdef readonly object node_raw_win       # float64: evaluator (or exact) win/loss value; set once evaluated
    cdef readonly object node_raw_score     # float64: evaluator (or exact final) score; set once evaluated
    cdef double* _n_win_sum
    cdef double* _n_score_sum
    cdef double* _n_raw_win
    cdef double* _n_raw_score
    cdef int32_t* _n_visits
    cdef double* _n_value_sum
    cdef double* _n_raw_value
    cdef int32_t* _n_parent
    cdef int32_t* _n_action
    cdef int8_t* _n_to_play
    cdef uint8_t* _n_state
    cdef int32_t* _n_in_flight

    # ---- child (edge) fields, [B, N, A], rows contiguous per node ---------------------------
    cdef readonly object child_index        # int32: child node id, UNEXPANDED or ILLEGAL
    cdef readonly object child_prior        # float32: prior over legal actions (sums to 1), 0 if illegal
    cdef readonly object child_visits       # int32: N(s, a) == node_visits of the child
    cdef readonly object child_value_sum    # float64: W(s, a), frame of the player to move at s
    cdef int32_t* _c_index
    cdef float* _c_prior
    cdef int32_t* _c_visits
    cdef double* _c_value_sum

    # ---- per-game fields, [B] and [B, A] ----------------------------------------------------
    cdef readonly object num_nodes          # int32 [B]: nodes in use (ids 0 .. num_nodes-1)
    cdef readonly object sims_target        # int32 [B]: simulations the current search runs
    cdef readonly object sims_done          # int32 [B]: simulations backed up so far
    cdef readonly object root_noised        # uint8 [B]: Dirichlet noise already mixed into the root priors
    cdef int32_t* _num_nodes
    cdef int32_t* _sims_target
    cdef int32_t* _sims_done
    cdef uint8_t* _root_noised
    cdef double* _centre                    # [B]: the score utility's centre c, root player's view
    cdef uint8_t* _centre_set               # [B]: c is known (root evaluated or reused)
    cdef float* _final_score                # [B*K]: exact final scores of the step's terminal leaves (player 0's view)
    cdef object _centre_arr, _centre_set_arr, _final_score_arr
    cdef uint8_t* _noise_pending            # [B]: mix _noise into the root once it is expanded
    cdef object _noise_arr                  # float64 [B, A]: Dirichlet sample of the current search
    cdef double* _noise
    cdef object _gumbel_arr                 # float64 [B, A]: Gumbel sample g(a) of the current search
    cdef double* _gumbel
    cdef object _root_score_arr             # float64 [B, A]: g(a) + logit(a) at the root, set by _prepare_root
    cdef double* _root_score
    cdef int32_t* _root_num_legal           # [B]: legal root actions, set when the root is expanded
    cdef object _table_arr                  # int32 [m + 1, n]: sequential-halving visit schedule
    cdef int32_t* _table
    cdef Py_ssize_t _table_m, _table_n
    cdef object _per_game_u8, _root_num_legal_arr   # numpy owners of _noise_pending, _root_num_legal

    # ---- step outputs and scratch -------------------------------------------------------------
    cdef readonly object paths              # int32 [B*K*D] flat: after select, [M, L] row-major
    cdef readonly object leaf_game          # int64 [B*K]: game of each leaf of the step
    cdef readonly object leaf_node          # int32 [B*K]: node id of each leaf of the step
    cdef int32_t* _paths
    cdef int64_t* _leaf_game
    cdef int32_t* _leaf_node
    cdef int32_t* _path_len                 # [B*K]
    cdef double* _leaf_total                # [B*K]: legal prior mass of each leaf (expand_and_backup scratch)
    cdef int32_t* _leaf_count               # [B*K]: legal actions of each leaf (same)
    cdef Py_ssize_t _pending_leaves         # M of the last select(), 0 once expanded
    cdef double* _scratch_q                 # [A]: completed Q, then sigma, of one node's children
    cdef int32_t* _scratch_n                # [A]: visits of one node's children, in-flight included
    cdef double _v_mix, _q_lo, _q_hi, _s_max  # set by _completed_q / _sigma for the node at hand
    cdef int32_t* _remap                    # [N]: old -> new node id while re-rooting
    cdef double* _c_sqrt                    # [T]: PUCT c(s) sqrt(N(s)) for N(s) = 0 .. T-1 (see _puct_c_sqrt)
    cdef Py_ssize_t _c_sqrt_len
    cdef object _c_sqrt_arr
    cdef object _path_len_arr, _leaf_total_arr, _leaf_count_arr, _scratch_q_arr, _scratch_n_arr, _remap_arr  # numpy owners of the above
    cdef readonly long long collisions      # descents that met a node already being evaluated
    cdef readonly long long terminal_visits # simulations that ended in an already-known terminal node

    # ---- the fused step: what bind_leaves bound, for leaf_step ---------------------------------
    cdef object _bound                      # tuple of the bound objects, kept alive while bound; None if unbound
    cdef const LeafApi* _api                # the leaf batch's game functions (games/leaf_api.pxd)
    cdef void* _leaves_ctx
    cdef const void* _roots_ctx
    cdef uint8_t* _b_legal                  # [>= B*K, A] the game's legal masks of the step's leaves
    cdef uint8_t* _b_query                  # [>= B*K, A] the evaluator's mask when some leaf is terminal
    cdef uint8_t* _b_terminal               # [>= B*K]
    cdef int8_t* _b_to_play                 # [>= B*K]
    cdef float* _b_outcome                  # [>= B*K]
    cdef float* _b_obs                      # [>= B*K, obs_size], NULL: the evaluator takes no observations


    def __init__(self, Py_ssize_t batch, Py_ssize_t capacity, Py_ssize_t num_actions, Py_ssize_t max_depth, *,
                 Py_ssize_t leaves_per_game=1, bint gumbel=False, double c_base=19652.0, double c_init=1.25,
                 double fpu_reduction=0.0, double virtual_loss=1.0, double c_visit=50.0, double c_scale=1.0,
                 bint rescale_q=True, object gumbel_table=None, double score_lambda=0.0,
                 double score_div=1.0):
        if batch < 1 or capacity < 1 or num_actions < 1 or max_depth < 1 or leaves_per_game < 1:
            raise ValueError(f"SearchTree: batch, capacity, num_actions, max_depth and leaves_per_game must be >= 1, "
                             f"got {batch}, {capacity}, {num_actions}, {max_depth}, {leaves_per_game}")
        if capacity >= 2 ** 31 or batch * capacity * num_actions >= 2 ** 62:
            raise ValueError(f"SearchTree: capacity {capacity} x batch {batch} x actions {num_actions} is too large")
        if not (c_base > 0 and virtual_loss >= 0 and c_visit >= 0 and c_scale >= 0):
            raise ValueError("SearchTree: c_base must be > 0 and virtual_loss, c_visit, c_scale >= 0")
        self.batch, self.capacity, self.num_actions, self.max_depth = batch, capacity, num_actions, max_depth
        self.leaves_per_game = leaves_per_game
        self.gumbel = gumbel
        self.c_base, self.c_init, self.fpu_reduction, self.virtual_loss = c_base, c_init, fpu_reduction, virtual_loss
        self.c_visit, self.c_scale, self.rescale_q = c_visit, c_scale, rescale_q
        if not (score_lambda >= 0 and score_div > 0):
            raise ValueError(f"SearchTree: need score_lambda >= 0 and score_div > 0, got {score_lambda}, {score_div}")
        self.score_lambda, self.score_div = score_lambda, score_div
        self.noise_weight = 0.0

        node_shape = (batch, capacity)
        self.node_visits = np.zeros(node_shape, np.int32)
        self.node_value_sum = np.zeros(node_shape, np.float64)
        self.node_raw_value = np.zeros(node_shape, np.float64)
        self.node_parent = np.zeros(node_shape, np.int32)
        self.node_action = np.zeros(node_shape, np.int32)
        self.node_to_play = np.zeros(node_shape, np.int8)
        self.node_state = np.zeros(node_shape, np.uint8)
        self.node_in_flight = np.zeros(node_shape, np.int32)
        self._n_visits = _i32(self.node_visits)
        self._n_value_sum = _f64(self.node_value_sum)
        self._n_raw_value = _f64(self.node_raw_value)
        self._n_parent = _i32(self.node_parent)
        self._n_action = _i32(self.node_action)
        self._n_to_play = _i8(self.node_to_play)
        self._n_state = _u8(self.node_state)
        self._n_in_flight = _i32(self.node_in_flight)
        self.node_win_sum = np.zeros(node_shape, np.float64)
        self.node_score_sum = np.zeros(node_shape, np.float64)
        self.node_raw_win = np.zeros(node_shape, np.float64)
        self.node_raw_score = np.zeros(node_shape, np.float64)
        self._n_win_sum = _f64(self.node_win_sum)
        self._n_score_sum = _f64(self.node_score_sum)
        self._n_raw_win = _f64(self.node_raw_win)
        self._n_raw_score = _f64(self.node_raw_score)

        # A child row is (re)written in full when its node is expanded and never read before.
        child_shape = (batch, capacity, num_actions)
        self.child_index = np.full(child_shape, ILLEGAL_, np.int32)
        self.child_prior = np.zeros(child_shape, np.float32)
        self.child_visits = np.zeros(child_shape, np.int32)
        self.child_value_sum = np.zeros(child_shape, np.float64)
        self._c_index = _i32(self.child_index)
        self._c_prior = _f32(self.child_prior)
        self._c_visits = _i32(self.child_visits)
        self._c_value_sum = _f64(self.child_value_sum)

        self.num_nodes = np.zeros(batch, np.int32)
        self.sims_target = np.zeros(batch, np.int32)
        self.sims_done = np.zeros(batch, np.int32)
        self.root_noised = np.zeros(batch, np.uint8)
        self._num_nodes = _i32(self.num_nodes)
        self._sims_target = _i32(self.sims_target)
        self._sims_done = _i32(self.sims_done)
        self._root_noised = _u8(self.root_noised)
        self._centre_arr = np.zeros(batch, np.float64)
        self._centre = _f64(self._centre_arr)
        self._centre_set_arr = np.zeros(batch, np.uint8)
        self._centre_set = _u8(self._centre_set_arr)
        self._per_game_u8 = np.zeros(batch, np.uint8)
        self._noise_pending = _u8(self._per_game_u8)
        self._root_num_legal_arr = np.zeros(batch, np.int32)
        self._root_num_legal = _i32(self._root_num_legal_arr)
        self._noise_arr = np.zeros((batch, num_actions), np.float64)
        self._noise = _f64(self._noise_arr)
        self._gumbel_arr = np.zeros((batch, num_actions), np.float64)
        self._gumbel = _f64(self._gumbel_arr)
        self._root_score_arr = np.zeros((batch, num_actions), np.float64)
        self._root_score = _f64(self._root_score_arr)

        if gumbel:
            table = np.ascontiguousarray(gumbel_table, dtype=np.int32) if gumbel_table is not None else None
            if table is None or table.ndim != 2 or table.shape[0] < 2 or table.shape[1] < 1:
                raise ValueError("SearchTree: gumbel=True needs gumbel_table, int32 [m + 1, n] "
                                 "(azero.search.gumbel.considered_visits_table)")
            self._table_arr = table
            self._table_m, self._table_n = table.shape[0] - 1, table.shape[1]
            self._table = _i32(self._table_arr)

        slots = batch * leaves_per_game
        self.paths = np.full(slots * max_depth, NO_ACTION_, np.int32)
        self.leaf_game = np.zeros(slots, np.int64)
        self.leaf_node = np.zeros(slots, np.int32)
        self._path_len_arr = np.zeros(slots, np.int32)
        self._paths = _i32(self.paths)
        self._leaf_game = _i64(self.leaf_game)
        self._leaf_node = _i32(self.leaf_node)
        self._path_len = _i32(self._path_len_arr)
        self._leaf_total_arr = np.zeros(slots, np.float64)
        self._final_score_arr = np.zeros(slots, np.float32)
        self._final_score = _f32(self._final_score_arr)
        self._leaf_count_arr = np.zeros(slots, np.int32)
        self._leaf_total = _f64(self._leaf_total_arr)
        self._leaf_count = _i32(self._leaf_count_arr)
        self._scratch_q_arr = np.zeros(num_actions, np.float64)
        self._scratch_n_arr = np.zeros(num_actions, np.int32)
        self._remap_arr = np.zeros(capacity, np.int32)
        self._scratch_q = _f64(self._scratch_q_arr)
        self._scratch_n = _i32(self._scratch_n_arr)
        self._remap = _i32(self._remap_arr)
        # c(s) sqrt(N(s)) depends on N(s) alone: tabulate it once instead of a log and a sqrt per
        # descent step. N(s) < capacity + K almost always (visits beyond that only come from repeated
        # terminal visits); larger counts fall back to computing it.
        self._c_sqrt_len = min(capacity + leaves_per_game, 1 << 20)
        self._c_sqrt_arr = np.zeros(self._c_sqrt_len, np.float64)
        self._c_sqrt = _f64(self._c_sqrt_arr)
        cdef Py_ssize_t n
        for n in range(self._c_sqrt_len):
            self._c_sqrt[n] = self._puct_c_sqrt_compute(n)
        self._pending_leaves = 0
        # The public arrays are read-only views: the raw pointers above were taken from the writable
        # owners (kept alive as the views' bases), and a stray write from Python, e.g. to num_nodes,
        # could otherwise send the nogil code outside its buffers.
        self.node_visits = _readonly(self.node_visits)
        self.node_value_sum = _readonly(self.node_value_sum)
        self.node_raw_value = _readonly(self.node_raw_value)
        self.node_parent = _readonly(self.node_parent)
        self.node_action = _readonly(self.node_action)
        self.node_to_play = _readonly(self.node_to_play)
        self.node_state = _readonly(self.node_state)
        self.node_in_flight = _readonly(self.node_in_flight)
        self.node_win_sum = _readonly(self.node_win_sum)
        self.node_score_sum = _readonly(self.node_score_sum)
        self.node_raw_win = _readonly(self.node_raw_win)
        self.node_raw_score = _readonly(self.node_raw_score)
        self.child_index = _readonly(self.child_index)
        self.child_prior = _readonly(self.child_prior)
        self.child_visits = _readonly(self.child_visits)
        self.child_value_sum = _readonly(self.child_value_sum)
        self.num_nodes = _readonly(self.num_nodes)
        self.sims_target = _readonly(self.sims_target)
        self.sims_done = _readonly(self.sims_done)
        self.root_noised = _readonly(self.root_noised)
        self.paths = _readonly(self.paths)
        self.leaf_game = _readonly(self.leaf_game)
        self.leaf_node = _readonly(self.leaf_node)
        self.reset()

    # ------------------------------------------------------------------ node bookkeeping
    cdef void _init_node(self, Py_ssize_t b, int32_t node, int32_t parent, int32_t action) noexcept nogil:
        cdef Py_ssize_t i = b * self.capacity + node
        self._n_visits[i] = 0
        self._n_value_sum[i] = 0.0
        self._n_raw_value[i] = 0.0
        self._n_win_sum[i] = 0.0
        self._n_score_sum[i] = 0.0
        self._n_raw_win[i] = 0.0
        self._n_raw_score[i] = 0.0
        self._n_parent[i] = parent
        self._n_action[i] = action
        self._n_to_play[i] = 0
        self._n_state[i] = NODE_PENDING_
        self._n_in_flight[i] = 0

    cdef void _reset_game(self, Py_ssize_t b) noexcept nogil:
        self._init_node(b, ROOT_, NO_PARENT_, NO_ACTION_)
        self._num_nodes[b] = 1
        self._root_noised[b] = 0
        self._noise_pending[b] = 0
        self._centre_set[b] = 0
        self._root_num_legal[b] = 0
        self._sims_target[b] = 0
        self._sims_done[b] = 0

    cdef void _backup(self, Py_ssize_t b, int32_t leaf, double value, double win, double score) noexcept nogil:
        """Add `value` (the search's utility), `win` (win/loss value) and `score` (expected score), all from
        the leaf player's view, to every node (value also to every edge) from `leaf` up to the root."""
        cdef Py_ssize_t base = b * self.capacity
        cdef Py_ssize_t i
        cdef int32_t node = leaf, parent
        while True:
            i = base + node
            self._n_visits[i] += 1
            self._n_value_sum[i] += value
            self._n_win_sum[i] += win
            self._n_score_sum[i] += score
            self._n_in_flight[i] -= 1
            parent = self._n_parent[i]
            if parent == NO_PARENT_:
                return
            if self._n_to_play[base + parent] != self._n_to_play[i]:
                value = -value
                win = -win
                score = -score
            i = (base + parent) * self.num_actions + self._n_action[i]
            self._c_visits[i] += 1
            self._c_value_sum[i] += value
            node = parent

    cdef void _revert(self, Py_ssize_t b, int32_t leaf) noexcept nogil:
        """Undo the in-flight marks of a descent that ended at `leaf` without an evaluation."""
        cdef Py_ssize_t base = b * self.capacity
        cdef int32_t node = leaf
        while node != NO_PARENT_:
            self._n_in_flight[base + node] -= 1
            node = self._n_parent[base + node]

    # ------------------------------------------------------------------ selection rules
    cdef double _puct_c_sqrt_compute(self, Py_ssize_t n_parent) noexcept nogil:
        """c(s) sqrt(N(s)), c(s) = log((1 + N(s) + c_base) / c_base) + c_init (the twin's expression)."""
        cdef double c = log((1.0 + n_parent + self.c_base) / self.c_base) + self.c_init
        return c * sqrt(<double>n_parent)

    cdef inline double _puct_c_sqrt(self, Py_ssize_t n_parent) noexcept nogil:
        if 0 <= n_parent < self._c_sqrt_len:
            return self._c_sqrt[n_parent]
        return self._puct_c_sqrt_compute(n_parent)

    cdef int32_t _choose_puct(self, Py_ssize_t b, int32_t node) noexcept nogil:
        cdef Py_ssize_t i = b * self.capacity + node
        cdef Py_ssize_t row = i * self.num_actions
        # This descent already counts in node_in_flight[node]; the other pending ones are in its children.
        cdef int32_t n_parent = self._n_visits[i] + self._n_in_flight[i] - 1
        cdef double c_sqrt = self._puct_c_sqrt(n_parent)
        cdef double fpu = self._n_value_sum[i] / self._n_visits[i] - self.fpu_reduction
        if self.leaves_per_game > 1:
            return self._choose_puct_vl(b, node, c_sqrt, fpu)
        # With K = 1 no other descent is ever pending, so the children's in-flight counters (a random
        # access each) are not read at all.
        return azero_puct_argmax(self.num_actions, self._c_index + row, self._c_visits + row,
                                 self._c_value_sum + row, self._c_prior + row, c_sqrt, fpu)

    cdef int32_t _choose_puct_vl(self, Py_ssize_t b, int32_t node, double c_sqrt, double fpu) noexcept nogil:
        """PUCT with virtual loss: pending descents count as visits valued -virtual_loss."""
        cdef Py_ssize_t base = b * self.capacity
        cdef Py_ssize_t row = (base + node) * self.num_actions
        cdef const int32_t* index = self._c_index + row
        cdef const int32_t* visits = self._c_visits + row
        cdef const double* value_sum = self._c_value_sum + row
        cdef const float* prior = self._c_prior + row
        cdef double best = -INFINITY, score, w
        cdef int32_t best_a = NO_ACTION_, a, child, n, flight
        for a in range(self.num_actions):
            child = index[a]
            if child == ILLEGAL_:
                continue
            n = visits[a]
            w = value_sum[a]
            if child >= 0:
                flight = self._n_in_flight[base + child]
                n = n + flight
                w = w - flight * self.virtual_loss
            if n > 0:
                score = w / n + c_sqrt * prior[a] / (1 + n)
            else:
                # Unvisited (most children, in wide games): same value as the general formula with
                # n = 0, as x / 1.0 == x exactly, but without its two divisions.
                score = fpu + c_sqrt * prior[a]
            if score > best:
                best = score
                best_a = a
        return best_a

    cdef int32_t _completed_q(self, Py_ssize_t b, int32_t node, bint in_flight, int32_t* max_n) noexcept nogil:
        """One pass over the children: _scratch_n = visits, _scratch_q = Q where visited; return sum of visits.

        Every unvisited legal action's completed Q is v_mix (eq. 33 of the paper), kept once in _v_mix:
            v_mix = (v_raw + sum_b N(b) * sum_{visited} P(a) Q(a) / sum_{visited} P(a)) / (1 + sum_b N(b)).
        Also sets _q_lo / _q_hi, the range of completed Q over the legal actions (for min-max rescaling).
        With in_flight, pending descents count as visits valued -virtual_loss (as in PUCT).
        """
        cdef Py_ssize_t base = b * self.capacity
        cdef Py_ssize_t i = base + node
        cdef Py_ssize_t row = i * self.num_actions
        cdef const int32_t* index = self._c_index + row
        cdef const int32_t* visits = self._c_visits + row
        cdef const double* value_sum = self._c_value_sum + row
        cdef const float* prior = self._c_prior + row
        cdef double* q = self._scratch_q
        cdef int32_t* ns = self._scratch_n
        cdef int32_t a, child, n, flight, sum_n = 0, count = 0
        cdef bint any_unvisited = False
        cdef double w, sum_p = 0.0, sum_pq = 0.0, sum_q = 0.0, v_mix, lo = INFINITY, hi = -INFINITY
        cdef bint pending = in_flight and self.leaves_per_game > 1
        max_n[0] = 0
        for a in range(self.num_actions):
            child = index[a]
            if child == ILLEGAL_:
                continue
            n = visits[a]
            w = value_sum[a]
            if pending and child >= 0:
                flight = self._n_in_flight[base + child]
                n = n + flight
                w = w - flight * self.virtual_loss
            ns[a] = n
            if n > 0:
                q[a] = w / n
                sum_n += n
                count += 1
                if n > max_n[0]:
                    max_n[0] = n
                sum_p += prior[a]
                sum_pq += prior[a] * q[a]
                sum_q += q[a]
                if q[a] < lo:
                    lo = q[a]
                if q[a] > hi:
                    hi = q[a]
            else:
                any_unvisited = True
        v_mix = self._n_raw_value[i]
        if sum_n > 0:
            # Visited actions that all have prior 0 fall back to their plain mean.
            w = sum_pq / sum_p if sum_p > 0.0 else sum_q / count
            v_mix = (v_mix + sum_n * w) / (sum_n + 1)
        if any_unvisited:
            if v_mix < lo:
                lo = v_mix
            if v_mix > hi:
                hi = v_mix
        self._v_mix, self._q_lo, self._q_hi = v_mix, lo, hi
        return sum_n

    cdef void _sigma(self, Py_ssize_t b, int32_t node, int32_t max_n) noexcept nogil:
        """After _completed_q: _scratch_q = sigma(completed Q) = (c_visit + max_b N(b)) * c_scale * q_normalised.

        q is normalised to [0, 1] by min-max over the node's legal actions (rescale_q, as in mctx) or
        by the known value bounds, (q + 1) / 2. Also sets _s_max, the largest sigma among actions with
        a positive prior (the shift _improved_policy uses).
        """
        cdef Py_ssize_t row = (b * self.capacity + node) * self.num_actions
        cdef const int32_t* index = self._c_index + row
        cdef const float* prior = self._c_prior + row
        cdef const int32_t* ns = self._scratch_n
        cdef double* q = self._scratch_q
        cdef double scale = (self.c_visit + max_n) * self.c_scale
        cdef double lo = self._q_lo, span = self._q_hi - self._q_lo, s_max = -INFINITY, completed
        cdef int32_t a
        if span < RESCALE_EPS:
            span = RESCALE_EPS
        for a in range(self.num_actions):
            if index[a] == ILLEGAL_:
                continue
            completed = q[a] if ns[a] > 0 else self._v_mix
            if self.rescale_q:
                q[a] = scale * ((completed - lo) / span)
            else:
                q[a] = scale * ((completed + 1.0) / 2.0)
            if prior[a] > 0 and q[a] > s_max:
                s_max = q[a]
        self._s_max = s_max

    cdef double _improved_policy(self, Py_ssize_t b, int32_t node, bint normalise) noexcept nogil:
        """After _sigma: _scratch_q = P(a) exp(sigma(a) - _s_max) (divided by Z if normalise); return Z.

        That is pi'(a) = softmax(logit + sigma(completed Q)) over the legal actions. The shift is the
        max of sigma over actions with P > 0 and actions with P = 0 get exactly 0, so
        Z >= P(argmax) * exp(0) > 0 and no inf * 0 appears, however large sigma grows. Every unvisited
        action has the same sigma, so their exp is computed once (the same double, far fewer exp calls).
        """
        cdef Py_ssize_t row = (b * self.capacity + node) * self.num_actions
        cdef const int32_t* index = self._c_index + row
        cdef const float* prior = self._c_prior + row
        cdef const int32_t* ns = self._scratch_n
        cdef double* s = self._scratch_q
        cdef double s_max = self._s_max, z = 0.0, e_unvisited = -1.0
        cdef int32_t a
        for a in range(self.num_actions):
            if index[a] == ILLEGAL_:
                continue
            if prior[a] > 0:
                if ns[a] != 0:
                    s[a] = prior[a] * exp(s[a] - s_max)
                else:
                    if e_unvisited < 0:
                        e_unvisited = exp(s[a] - s_max)
                    s[a] = prior[a] * e_unvisited
            else:
                s[a] = 0.0
            z += s[a]
        if normalise:
            for a in range(self.num_actions):
                if index[a] != ILLEGAL_:
                    s[a] = s[a] / z
        return z

    cdef int32_t _choose_gumbel_interior(self, Py_ssize_t b, int32_t node) noexcept nogil:
        """argmax_a pi'(a) - N(a) / (1 + sum_b N(b)): deterministic, steers visits towards pi'."""
        cdef const int32_t* index = self._c_index + (b * self.capacity + node) * self.num_actions
        cdef const double* e = self._scratch_q
        cdef const int32_t* ns = self._scratch_n
        cdef int32_t max_n, a, best_a = NO_ACTION_
        cdef int32_t sum_n = self._completed_q(b, node, True, &max_n)
        cdef double best = -INFINITY, score, z
        self._sigma(b, node, max_n)
        z = self._improved_policy(b, node, False)
        for a in range(self.num_actions):
            if index[a] != ILLEGAL_:
                score = e[a] / z - ns[a] / (1.0 + sum_n)
                if score > best:
                    best = score
                    best_a = a
        return best_a

    cdef int32_t _choose_gumbel_root(self, Py_ssize_t b) noexcept nogil:
        cdef const int32_t* index = self._c_index + b * self.capacity * self.num_actions
        cdef const double* base_score = self._root_score + b * self.num_actions
        cdef const double* s = self._scratch_q
        cdef const int32_t* ns = self._scratch_n
        cdef int32_t max_n, a, target, best_a = NO_ACTION_
        cdef int32_t sum_n = self._completed_q(b, ROOT_, True, &max_n)
        cdef Py_ssize_t considered = self._root_num_legal[b]
        cdef Py_ssize_t step = sum_n
        cdef double best = -INFINITY, score
        self._sigma(b, ROOT_, max_n)
        if considered > self._table_m:
            considered = self._table_m
        if step >= self._table_n:
            step = self._table_n - 1
        # Sequential halving: only actions with exactly the scheduled visit count compete.
        target = self._table[considered * self._table_n + step]
        for a in range(self.num_actions):
            if index[a] != ILLEGAL_ and ns[a] == target:
                score = base_score[a] + s[a]
                if score > best:
                    best = score
                    best_a = a
        if best_a == NO_ACTION_:
            # Off schedule (only possible after collisions with K > 1): fall back to the plain score.
            for a in range(self.num_actions):
                if index[a] != ILLEGAL_:
                    score = base_score[a] + s[a]
                    if score > best:
                        best = score
                        best_a = a
        return best_a

    cdef void _prepare_root(self, Py_ssize_t b) noexcept nogil:
        """Once the root is expanded: count its legal actions, mix in pending noise, cache g + logit."""
        cdef Py_ssize_t row = b * self.capacity * self.num_actions
        cdef const int32_t* index = self._c_index + row
        cdef float* prior = self._c_prior + row
        cdef const double* noise = self._noise + b * self.num_actions
        cdef const double* g = self._gumbel + b * self.num_actions
        cdef double* score = self._root_score + b * self.num_actions
        cdef int32_t a, count = 0
        for a in range(self.num_actions):
            if index[a] != ILLEGAL_:
                count += 1
        self._root_num_legal[b] = count
        if self._noise_pending[b]:
            for a in range(self.num_actions):
                if index[a] != ILLEGAL_:
                    prior[a] = <float>((1.0 - self.noise_weight) * prior[a] + self.noise_weight * noise[a])
            self._noise_pending[b] = 0
            self._root_noised[b] = 1
        if self.gumbel:
            for a in range(self.num_actions):
                if index[a] != ILLEGAL_:
                    score[a] = g[a] + (log(prior[a]) if prior[a] > 0 else LOW_LOGIT)

    # ------------------------------------------------------------------ one batch step
    cdef int _select_game(self, Py_ssize_t b, Py_ssize_t* m) noexcept nogil:
        cdef Py_ssize_t base = b * self.capacity
        cdef Py_ssize_t k, want = self._sims_target[b] - self._sims_done[b]
        cdef int32_t node, child, a, depth
        cdef int32_t* path
        cdef uint8_t state
        if want > self.leaves_per_game:
            want = self.leaves_per_game
        for k in range(want):
            if self._n_state[base + ROOT_] == NODE_PENDING_:
                # A fresh root is evaluated alone first; that evaluation is not a simulation.
                if k == 0 and self._n_in_flight[base + ROOT_] == 0:
                    self._n_in_flight[base + ROOT_] = 1
                    self._leaf_game[m[0]] = b
                    self._leaf_node[m[0]] = ROOT_
                    self._path_len[m[0]] = 0
                    m[0] += 1
                return OK
            node = ROOT_
            depth = 0
            path = self._paths + m[0] * self.max_depth
            self._n_in_flight[base + node] += 1
            while True:
                state = self._n_state[base + node]
                if state == NODE_TERMINAL_:
                    self._backup(b, node, self._n_raw_value[base + node], self._n_raw_win[base + node],
                                 self._n_raw_score[base + node])
                    self._sims_done[b] += 1
                    self.terminal_visits += 1
                    break
                if state == NODE_PENDING_:
                    self._revert(b, node)
                    self.collisions += 1
                    break
                if node == ROOT_ and self.gumbel:
                    a = self._choose_gumbel_root(b)
                elif self.gumbel:
                    a = self._choose_gumbel_interior(b, node)
                else:
                    a = self._choose_puct(b, node)
                if a == NO_ACTION_:
                    # Unreachable with validated inputs (an expanded node has a legal action and finite
                    # statistics); checked so that a bug can never index slot -1.
                    self._revert(b, node)
                    return ERR_NO_CHOICE
                if depth == self.max_depth:
                    self._revert(b, node)
                    return ERR_DEPTH
                child = self._c_index[(base + node) * self.num_actions + a]
                if child == UNEXPANDED_:
                    if self._num_nodes[b] >= self.capacity:
                        self._revert(b, node)
                        return ERR_CAPACITY
                    child = self._num_nodes[b]
                    self._num_nodes[b] += 1
                    self._init_node(b, child, node, a)
                    self._c_index[(base + node) * self.num_actions + a] = child
                    self._n_in_flight[base + child] = 1
                    path[depth] = a
                    depth += 1
                    self._leaf_game[m[0]] = b
                    self._leaf_node[m[0]] = child
                    self._path_len[m[0]] = depth
                    m[0] += 1
                    break
                path[depth] = a
                depth += 1
                node = child
                self._n_in_flight[base + node] += 1
        return OK

    cdef int _select_all(self, Py_ssize_t* m_out, Py_ssize_t* length_out, Py_ssize_t* bad_game) noexcept nogil:
        """select() without the GIL: on success M and L (the leaves are pending); on an error code the
        step's leaves are already dropped and *bad_game names the game."""
        cdef Py_ssize_t b, i, j, length = 0, m = 0
        cdef int err = OK
        cdef int32_t* src
        for b in range(self.batch):
            err = self._select_game(b, &m)
            if err != OK:
                # The failing descent was reverted; drop the leaves this step had already allocated.
                bad_game[0] = b
                self._pending_leaves = m
                self._abort()
                return err
        for i in range(m):
            if self._path_len[i] > length:
                length = self._path_len[i]
        # Pack the rows from stride D to stride L in place; row i moves to an address <= its own,
        # and never past its own unread tail, so ascending order is safe.
        for i in range(m):
            src = self._paths + i * self.max_depth
            for j in range(length):
                self._paths[i * length + j] = src[j] if j < self._path_len[i] else NO_ACTION_
        self._pending_leaves = m
        m_out[0] = m
        length_out[0] = length
        return OK

    cdef _raise_select_error(self, int err, Py_ssize_t b):
        if err == ERR_CAPACITY:
            raise TreeCapacityError(
                f"search tree of game {b} is full ({self.capacity} nodes): raise SearchConfig.max_nodes "
                f"(a search of n simulations needs n + 1 nodes, plus any reused subtree)")
        if err == ERR_NO_CHOICE:
            raise RuntimeError(f"select: no selectable action in game {b} (non-finite statistics?)")
        raise ValueError(f"select: a path in game {b} is longer than max_depth={self.max_depth}; "
                         f"the game's max_moves must bound the depth of its tree")

    def select(self):
        """Run up to K descents in every game still short of its target; return (M, L).

        The M new leaves are leaf_game[:M] / leaf_node[:M]; their action paths from the
        root are `paths[:M * L].reshape(M, L)`, NO_ACTION-padded. M == 0 with games
        still searching happens when every descent hit a known terminal node (already
        backed up); the driver simply steps again. Call expand_and_backup(M, ...) next.
        """
        if self._pending_leaves:
            raise RuntimeError("select: the previous step's leaves were not expanded yet")
        cdef Py_ssize_t m = 0, length = 0, bad_game = 0
        cdef int err
        with nogil:
            err = self._select_all(&m, &length, &bad_game)
        if err != OK:
            self._raise_select_error(err, bad_game)
        return m, length

    cdef int _expand(self, Py_ssize_t m, const float* priors, const float* values, const uint8_t* legal,
                     const uint8_t* terminal, const int8_t* to_play, const float* outcome,
                     Py_ssize_t* bad_out, const float* scores=NULL, const float* final_scores=NULL) noexcept nogil:
        """expand_and_backup without the GIL, on rows of A entries (priors, legal) and M entries (the rest;
        outcome may be NULL). Everything is validated before anything is written: an error code (and the
        leaf in *bad_out) leaves the tree and the pending leaves untouched.

        scores (NULL: none) are the evaluator's expected scores of the leaves, final_scores (NULL: 0)
        the exact scores of terminal leaves (player 0's view, like outcome). With scores and
        score_lambda > 0 the search backs up the utility (KataGo, Wu 2019, section 4.2)

            u = v + score_lambda * (2 / pi) * atan((s - c) / score_div)

        where c is the root's expected score (its network score, or its search mean when reused):
        winning by more, or losing by less, than expected is worth up to score_lambda. The win/loss
        value v and the score s are backed up beside u (node_win_sum, node_score_sum)."""
        cdef Py_ssize_t A = self.num_actions
        cdef Py_ssize_t i, a, b, node, row, base, count, bad = -1
        cdef int err = OK
        cdef double total, x
        cdef int32_t* index
        cdef float* prior
        cdef const float* pr
        cdef const uint8_t* lg
        cdef float v
        cdef double u, sc, c
        cdef bint exact = outcome != NULL
        cdef bint utility = scores != NULL and self.score_lambda > 0
        cdef bint ok
        # Pass 1 validates everything and keeps each row's legal prior mass and legal count.
        for i in range(m):
            if terminal[i] and exact:
                if not isfinite(outcome[i]):
                    err, bad = ERR_VALUE, i
                    break
                continue
            if not isfinite(values[i]) or (scores != NULL and not isfinite(scores[i])):
                err, bad = ERR_VALUE, i
                break
            if terminal[i]:
                continue
            pr = priors + i * A
            lg = legal + i * A
            count = 0
            total = 0.0
            ok = True
            # Branch-free: the legal pattern is random (Go), and a bad row is the rare case.
            # `0 <= x <= FLT_MAX` is isfinite(x) and x >= 0 (NaN fails both comparisons); adding
            # 0.0 for an illegal action leaves the sum (>= +0.0) exactly as skipping it would.
            for a in range(A):
                x = pr[a]
                ok = ok & (x >= 0) & (x <= FLT_MAX)
                count += lg[a] != 0
                total += x if lg[a] else 0.0
            if not ok:
                err, bad = ERR_PRIOR, i
            if err == OK and count == 0:
                err, bad = ERR_NO_LEGAL, i
            if err != OK:
                break
            self._leaf_total[i] = total
            self._leaf_count[i] = count
        if err != OK:
            bad_out[0] = bad
            return err
        for i in range(m):
            b = self._leaf_game[i]
            node = self._leaf_node[i]
            base = b * self.capacity
            row = (base + node) * A
            index = self._c_index + row
            prior = self._c_prior + row
            v = values[i]
            if terminal[i] and exact:
                v = outcome[i] if to_play[i] == 0 else -outcome[i]
            u = v
            sc = 0.0
            if scores != NULL:
                sc = scores[i]
                if terminal[i]:
                    sc = 0.0 if final_scores == NULL else (final_scores[i] if to_play[i] == 0 else -final_scores[i])
            if utility:
                if node == ROOT_:
                    if not self._centre_set[b]:
                        self._centre[b] = sc
                        self._centre_set[b] = 1
                    c = self._centre[b]
                else:
                    c = self._centre[b] if to_play[i] == self._n_to_play[base + ROOT_] else -self._centre[b]
                u = v + self.score_lambda * M_2_PI * atan((sc - c) / self.score_div)
            self._n_to_play[base + node] = to_play[i]
            self._n_raw_value[base + node] = u
            self._n_raw_win[base + node] = v
            self._n_raw_score[base + node] = sc
            if terminal[i]:
                # A terminal leaf's priors and legal row are never read (the fused step relies on it).
                self._n_state[base + node] = NODE_TERMINAL_
                for a in range(A):
                    index[a] = ILLEGAL_
            else:
                memset(self._c_visits + row, 0, A * sizeof(int32_t))
                memset(self._c_value_sum + row, 0, A * sizeof(double))
                azero_store_priors(A, priors + i * A, legal + i * A, self._leaf_total[i],
                                   self._leaf_count[i], index, prior)
                self._n_state[base + node] = NODE_EXPANDED_
                if node == ROOT_:
                    self._prepare_root(b)
            if node != ROOT_:
                self._sims_done[b] += 1
            self._backup(b, node, u, v, sc)
        self._pending_leaves = 0
        return OK

    cdef _raise_expand_error(self, int err, Py_ssize_t bad, double value, str after):
        what = {ERR_VALUE: f"value {value!r} is not finite",
                ERR_PRIOR: "priors contain NaN, infinite or negative entries",
                ERR_NO_LEGAL: "the game reports no legal action in a non-terminal position"}[err]
        raise EvaluatorOutputError(f"leaf {bad} of this step (game {self.leaf_game[bad]}): {what}; {after}")

    def expand_and_backup(self, Py_ssize_t m, const float[:, ::1] priors, const float[::1] values,
                          const uint8_t[:, ::1] legal, const uint8_t[::1] terminal, const int8_t[::1] to_play,
                          const float[::1] outcome=None, const float[::1] scores=None,
                          const float[::1] final_scores=None):
        """Store the evaluations of the M leaves of the last select() and back them up.

        priors [>= M, A] and values [>= M] come from the evaluator (values from the view of the player
        to move at the leaf); legal [>= M, A] (bool viewed as uint8), terminal [>= M] and to_play [>= M]
        from the game layer. Terminal leaves ignore priors and back up their exact outcome: from
        outcome [>= M] (player 0's view, converted here) when it is given, else from `values`
        (already in the player to move's view). scores [>= M] (optional) are the evaluator's expected
        scores (leaf player's view) and final_scores [>= M] (optional) the terminal leaves' exact scores
        (player 0's view): with score_lambda > 0 they make the backed-up value the score utility (see
        _expand). Everything is validated before anything is written.
        """
        if m != self._pending_leaves:
            raise ValueError(f"expand_and_backup: {self._pending_leaves} leaves are pending, got M={m}")
        cdef Py_ssize_t A = self.num_actions
        if (priors.shape[0] < m or priors.shape[1] != A or values.shape[0] < m or legal.shape[0] < m
                or legal.shape[1] != A or terminal.shape[0] < m or to_play.shape[0] < m
                or (outcome is not None and outcome.shape[0] < m) or (scores is not None and scores.shape[0] < m)
                or (final_scores is not None and final_scores.shape[0] < m)):
            raise ValueError(
                f"expand_and_backup: expected priors [{m}, {A}], values [{m}], legal [{m}, {A}], terminal [{m}], "
                f"to_play [{m}]; got priors ({priors.shape[0]}, {priors.shape[1]}), values {values.shape[0]}, "
                f"legal ({legal.shape[0]}, {legal.shape[1]}), terminal {terminal.shape[0]}, to_play {to_play.shape[0]}")
        if m == 0:
            return
        cdef const float* oc = &outcome[0] if outcome is not None else NULL
        cdef const float* sc = &scores[0] if scores is not None else NULL
        cdef const float* fs = &final_scores[0] if final_scores is not None else NULL
        cdef Py_ssize_t bad = -1
        cdef int err
        with nogil:
            err = self._expand(m, &priors[0, 0], &values[0], &legal[0, 0], &terminal[0], &to_play[0], oc, &bad,
                               sc, fs)
        if err != OK:
            self._raise_expand_error(err, bad, oc[bad] if oc != NULL and terminal[bad] else values[bad],
                                     "nothing was written, call abort_step() or reset() before searching on")

    cdef void _abort(self) noexcept nogil:
        cdef Py_ssize_t i, b, node, base
        for i in range(self._pending_leaves):
            b, node = self._leaf_game[i], self._leaf_node[i]
            base = b * self.capacity
            self._revert(b, node)
            if node != ROOT_:
                # The leaf was the last node allocated in its game's tree (leaves are allocated in order).
                self._c_index[(base + self._n_parent[base + node]) * self.num_actions + self._n_action[base + node]] \
                    = UNEXPANDED_
        for i in range(self._pending_leaves - 1, -1, -1):
            b, node = self._leaf_game[i], self._leaf_node[i]
            if node != ROOT_ and self._num_nodes[b] == node + 1:
                self._num_nodes[b] = node
        self._pending_leaves = 0

    def abort_step(self):
        """Forget the leaves of the last select() (after an evaluator error): the tree is as before it."""
        self._abort()

    # ------------------------------------------------------------------ the fused batch step
    def bind_leaves(self, leaves, roots, legal, terminal, to_play, outcome, query, obs=None):
        """Bind leaf_step to a game's leaf batch, the roots and the step buffers (once per search).

        leaves: a native States (one with _leaf_api(), see games/leaf_api.pxd) of at least B*K
            positions, used as scratch: step leaves are built in its leading rows;
        roots: States of the same game and rules, B positions (roots[b] is game b's root);
        legal, query: bool or uint8 [>= B*K, A]; terminal: bool or uint8 [>= B*K]; to_play: int8
            [>= B*K]; outcome: float32 [>= B*K]: the game's answers for each leaf (query: the
            evaluator's mask, see leaf_step);
        obs: float32 [>= B*K, C, H, W] for the leaves' observations, or None to skip encoding.
        Buffers must be C-contiguous and writeable. Everything is checked here, once; the tree then
        keeps references to all of it (so its raw pointers stay valid) until unbind_leaves().
        """
        if self._pending_leaves:
            raise RuntimeError("bind_leaves: a batch step is in progress")
        cdef Py_ssize_t A = self.num_actions, slots = self.batch * self.leaves_per_game
        cdef LeafApi* api = _leaf_api_of(leaves, "leaves")
        cdef LeafApi* roots_api = _leaf_api_of(roots, "roots")
        if leaves is roots:
            raise ValueError("bind_leaves: the leaves and the roots must be different batches (leaves are scratch)")
        if roots_api.load_paths != api.load_paths:
            raise TypeError(f"bind_leaves: the leaves are {api.engine.decode()} but the roots are "
                            f"{roots_api.engine.decode()}: both must be batches of the same game")
        if api.compatible != NULL and not api.compatible(api.ctx, roots_api.ctx):
            raise ValueError(f"bind_leaves: the leaves and the roots are {api.engine.decode()} with different rules "
                             f"({_spec_text(leaves)} vs {_spec_text(roots)})")
        if api.num_actions != A:
            raise ValueError(f"bind_leaves: the game has {api.num_actions} actions but the tree {A}")
        if roots_api.size != self.batch:
            raise ValueError(f"bind_leaves: expected {self.batch} roots (one per game), got {roots_api.size}")
        if api.size < slots:
            raise ValueError(f"bind_leaves: the leaf batch holds {api.size} positions, a step needs up to {slots}")
        cdef uint8_t* lg = <uint8_t*>_step_buffer(legal, "legal", cnp.NPY_BOOL, 2, slots, A)
        cdef uint8_t* qr = <uint8_t*>_step_buffer(query, "query", cnp.NPY_BOOL, 2, slots, A)
        cdef uint8_t* tm = <uint8_t*>_step_buffer(terminal, "terminal", cnp.NPY_BOOL, 1, slots, 0)
        cdef int8_t* tp = <int8_t*>_step_buffer(to_play, "to_play", cnp.NPY_INT8, 1, slots, 0)
        cdef float* oc = <float*>_step_buffer(outcome, "outcome", cnp.NPY_FLOAT32, 1, slots, 0)
        cdef float* ob = NULL
        if obs is not None:
            ob = <float*>_step_buffer(obs, "obs", cnp.NPY_FLOAT32, 0, slots, api.obs_size)
        if lg == qr:
            raise ValueError("bind_leaves: legal and query must be different buffers")
        self._bound = (leaves, roots, legal, terminal, to_play, outcome, query, obs)
        self._api = api
        self._leaves_ctx, self._roots_ctx = api.ctx, roots_api.ctx
        self._b_legal, self._b_query, self._b_terminal, self._b_to_play = lg, qr, tm, tp
        self._b_outcome, self._b_obs = oc, ob

    def unbind_leaves(self):
        """Drop the references bind_leaves took (leaf_step needs a new bind_leaves after this)."""
        self._bound = None
        self._api = NULL
        self._leaves_ctx = self._roots_ctx = NULL
        self._b_legal = self._b_query = self._b_terminal = NULL
        self._b_to_play = NULL
        self._b_outcome = self._b_obs = NULL

    def leaf_step(self, priors=None, values=None, bint select=True, scores=None):
        """One batch step over the bound leaf batch (bind_leaves), the GIL released once for all of it.

        First the M pending leaves, if any, are expanded and backed up with priors float32 [M, A] and
        values float32 [M] (the evaluator's output for the previous call's leaves, as expand_and_backup;
        terminal leaves back up their exact outcome). Then, if `select` and some game is short of its
        target: select(), the game replays the leaves' paths from the roots into the leaf batch and
        writes legal / terminal / to_play / outcome (and obs) rows [0, M'), and the evaluator's mask is
        prepared: when some leaf is terminal, `query` rows [0, M') are `legal` with every action of a
        terminal leaf marked (an evaluator needs a legal action per row; the tree reads neither the
        priors nor the legal row of a terminal leaf).

        scores float32 [M] (optional): the evaluator's expected scores of those leaves, for the score
        utility (see _expand); terminal leaves then back up the game's exact final score when its leaf
        API has one.

        Returns (running, M', n_terminal): running is whether a select ran (False: every game reached
        its target, or select was False); the M' new leaves are pending until the next leaf_step or
        abort_step; n_terminal of them are terminal, and the evaluator's mask is query[:M'] if
        n_terminal else legal[:M']. M' == 0 while running: every descent ended in a known terminal
        node; call again.

        Errors leave the tree as before the failed step (no abort_step needed): bad priors or values
        raise EvaluatorOutputError or ValueError and drop the pending leaves; a full tree raises
        TreeCapacityError, an illegal path the game's IllegalActionError (after the evaluations given
        were backed up: that step had succeeded).
        """
        if self._bound is None:
            raise RuntimeError("leaf_step: no leaf batch is bound (bind_leaves first)")
        cdef Py_ssize_t m = self._pending_leaves, A = self.num_actions
        cdef const float* pr = NULL
        cdef const float* vl = NULL
        cdef const float* sc = NULL
        if scores is not None:
            if not m:
                raise ValueError("leaf_step: no leaves are pending, so there are no scores to back up")
            sc = _float32_rows(scores, m, 0)
            if sc == NULL:
                raise ValueError(f"leaf_step: scores must be an aligned float32 array of {m} values")
        if m:
            if priors is None or values is None:
                raise ValueError(f"leaf_step: {m} leaves are pending: pass their priors and values")
            pr = _float32_rows(priors, m, A)
            vl = _float32_rows(values, m, 0)
            if pr == NULL or vl == NULL:
                # Anything but exact float32 arrays of the right shape: the evaluator protocol's own check
                # names the problem (or makes contiguous copies).
                from azero.search.evaluators import check_output
                try:
                    priors, values = check_output(priors, values, m, A)
                except BaseException:
                    self._abort()
                    raise
                pr = _float32_rows(priors, m, A)
                vl = _float32_rows(values, m, 0)
                if pr == NULL or vl == NULL:
                    self._abort()
                    raise ValueError("leaf_step: priors and values must be aligned native-order float32 arrays")
        elif priors is not None or values is not None:
            raise ValueError("leaf_step: no leaves are pending, so there is nothing to back up")
        cdef const LeafApi* api = self._api
        cdef uint8_t* legal = self._b_legal
        cdef uint8_t* query = self._b_query
        cdef const uint8_t* terminal = self._b_terminal
        cdef int err = OK
        cdef bint expanding = True, running = False
        cdef Py_ssize_t bad = -1, bad_step = 0, length = 0, n_terminal = 0, i
        with nogil:
            if m:
                err = self._expand(m, pr, vl, legal, terminal, self._b_to_play, self._b_outcome, &bad,
                                   sc, self._final_score)
                if err != OK:
                    self._abort()
            m = 0
            if err == OK and select and self._searching():
                running = True
                expanding = False
                err = self._select_all(&m, &length, &bad)
                if err == OK:
                    bad = api.load_paths(self._leaves_ctx, self._roots_ctx, self._leaf_game, self._paths, m, length,
                                         &bad_step)
                    if bad >= 0:
                        err = ERR_ILLEGAL_PATH
                        self._abort()
                if err == OK:
                    api.query(self._leaves_ctx, m, legal, self._b_terminal, self._b_to_play, self._b_outcome)
                    if self._b_obs != NULL:
                        api.encode(self._leaves_ctx, m, self._b_obs)
                    for i in range(m):
                        n_terminal += terminal[i]
                    if n_terminal and self.score_lambda > 0:
                        # exact final scores of the terminal leaves, backed up at the next step
                        if api.score != NULL:
                            api.score(self._leaves_ctx, m, self._final_score)
                        else:
                            memset(self._final_score, 0, m * sizeof(float))
                    if n_terminal:
                        memcpy(query, legal, m * A)
                        for i in range(m):
                            if terminal[i]:
                                memset(query + i * A, 1, A)
        if err == OK:
            return running, m, n_terminal
        if expanding:
            self._raise_expand_error(err, bad, self._b_outcome[bad] if terminal[bad] else vl[bad],
                                     "the step was rolled back")
        if err == ERR_ILLEGAL_PATH:
            # Let the game's own method find the move again and explain it.
            leaves, roots = self._bound[0], self._bound[1]
            leaves.load_paths(roots, self.leaf_game[:m], self.paths[:m * length].reshape(m, length))
            raise RuntimeError(f"leaf_step: the leaf API rejected the path of leaf {bad} (step {bad_step}), "
                               f"but {type(leaves).__name__}.load_paths accepts it")
        self._raise_select_error(err, bad)

    # ------------------------------------------------------------------ search lifecycle
    def reset(self, index=None):
        """Fresh single-node trees for the games in `index` (all when None)."""
        if self._pending_leaves:
            raise RuntimeError("reset: a batch step is in progress (expand_and_backup or abort_step first)")
        games = range(self.batch) if index is None else np.asarray(index, dtype=np.int64).reshape(-1)
        for b in games:
            if not 0 <= b < self.batch:
                raise IndexError(f"reset: game index {b} out of range [0, {self.batch})")
            self._reset_game(b)

    def begin_search(self, targets, noise=None, double noise_weight=0.0, gumbel=None):
        """Start a search of targets[b] simulations in game b (0 = leave it alone).

        noise: float64 [B, A] Dirichlet sample mixed into each root's priors once (weight
        noise_weight), when the root is (or becomes) expanded; a root already noised keeps its priors.
        gumbel: float64 [B, A] Gumbel sample g(a), required for a Gumbel tree.
        """
        if self._pending_leaves:
            raise RuntimeError("begin_search: a batch step is in progress")
        cdef Py_ssize_t B = self.batch, A = self.num_actions, b
        t = np.ascontiguousarray(targets, dtype=np.int32)
        if t.shape != (B,) or (t < 0).any():
            raise ValueError(f"begin_search: targets must be non-negative ints of shape ({B},), got {t.shape}")
        needed = self.num_nodes.astype(np.int64) + t
        over = np.flatnonzero(needed > self.capacity)
        if over.size:
            b = over[0]
            raise TreeCapacityError(
                f"game {b}: {self.num_nodes[b]} nodes in use + {t[b]} simulations exceed the tree capacity "
                f"of {self.capacity} nodes; raise SearchConfig.max_nodes or reset the tree")
        for name, arr in (("noise", noise), ("gumbel", gumbel)):
            if arr is not None and (not isinstance(arr, np.ndarray) or arr.shape != (B, A)
                                    or arr.dtype != np.float64):
                raise ValueError(f"begin_search: {name} must be a float64 array of shape ({B}, {A})")
        if self.gumbel and gumbel is None:
            raise ValueError("begin_search: a Gumbel tree needs the Gumbel sample `gumbel`")
        if noise is not None and not 0.0 <= noise_weight <= 1.0:
            raise ValueError(f"begin_search: noise_weight must lie in [0, 1], got {noise_weight}")
        for b in range(B):
            self._sims_target[b] = t[b]
            self._sims_done[b] = 0
        if noise is not None:
            self._noise_arr[:] = noise
            self.noise_weight = noise_weight
        if gumbel is not None:
            self._gumbel_arr[:] = gumbel
        for b in range(B):
            self._noise_pending[b] = noise is not None and t[b] > 0 and not self._root_noised[b]
            if self._n_state[b * self.capacity + ROOT_] == NODE_EXPANDED_:
                self._prepare_root(b)
                # KataGo's dynamic centre: a reused root's own search mean of the score.
                self._centre[b] = self._n_score_sum[b * self.capacity + ROOT_] / max(
                    self._n_visits[b * self.capacity + ROOT_], 1)
                self._centre_set[b] = 1
            else:
                self._centre_set[b] = 0

    cdef bint _searching(self) noexcept nogil:
        cdef Py_ssize_t b
        for b in range(self.batch):
            if self._sims_done[b] < self._sims_target[b]:
                return True
        return False

    def searching(self):
        """Whether some game has not reached its simulation target yet (called once per batch step)."""
        return self._searching()

    def advance(self, actions):
        """Re-root every game b on the child reached by actions[b], keeping that subtree (tree reuse).

        The kept subtree is compacted to the front of the game's arrays (root at id 0, order
        and statistics preserved), so its room is the capacity minus the kept nodes.
        NO_ACTION resets game b; an action whose child was never visited starts a fresh tree.
        """
        if self._pending_leaves:
            raise RuntimeError("advance: a batch step is in progress")
        a_arr = np.asarray(actions)
        if a_arr.shape != (self.batch,) or not np.issubdtype(a_arr.dtype, np.integer):
            raise ValueError(f"advance: expected integer actions of shape ({self.batch},), got {a_arr.shape}")
        cdef Py_ssize_t b, base
        cdef int32_t a, child
        for b in range(self.batch):
            a = a_arr[b]
            base = b * self.capacity
            if a == NO_ACTION_:
                self._reset_game(b)
                continue
            if not 0 <= a < self.num_actions:
                raise ValueError(f"advance: action {a} of game {b} is out of range [0, {self.num_actions})")
            if self._n_state[base + ROOT_] != NODE_EXPANDED_:
                self._reset_game(b)
                continue
            child = self._c_index[base * self.num_actions + a]
            if child == ILLEGAL_:
                raise ValueError(f"advance: action {a} is illegal at the root of game {b}")
            if child == UNEXPANDED_ or self._n_state[base + child] == NODE_PENDING_:
                self._reset_game(b)
            else:
                with nogil:
                    self._reroot(b, child)

    cdef void _reroot(self, Py_ssize_t b, int32_t new_root) noexcept nogil:
        cdef Py_ssize_t base = b * self.capacity, A = self.num_actions
        cdef Py_ssize_t src_row, dst_row, a
        cdef int32_t* remap = self._remap
        cdef int32_t n = self._num_nodes[b], kept = 1, i, j, p, c
        # Pass 1: a node is kept iff its parent is (descendants have larger ids than ancestors).
        remap[new_root] = 0
        for i in range(new_root + 1, n):
            p = self._n_parent[base + i]
            if p >= new_root and remap[p] >= 0:
                remap[i] = kept
                kept += 1
            else:
                remap[i] = -1
        # Pass 2: move kept nodes down in ascending order (destination id <= source id, never clobbered).
        for i in range(new_root, n):
            j = remap[i]
            if j < 0:
                continue
            self._n_visits[base + j] = self._n_visits[base + i]
            self._n_value_sum[base + j] = self._n_value_sum[base + i]
            self._n_raw_value[base + j] = self._n_raw_value[base + i]
            self._n_win_sum[base + j] = self._n_win_sum[base + i]
            self._n_score_sum[base + j] = self._n_score_sum[base + i]
            self._n_raw_win[base + j] = self._n_raw_win[base + i]
            self._n_raw_score[base + j] = self._n_raw_score[base + i]
            self._n_to_play[base + j] = self._n_to_play[base + i]
            self._n_state[base + j] = self._n_state[base + i]
            self._n_in_flight[base + j] = 0
            if i == new_root:
                self._n_parent[base + j] = NO_PARENT_
                self._n_action[base + j] = NO_ACTION_
            else:
                self._n_parent[base + j] = remap[self._n_parent[base + i]]
                self._n_action[base + j] = self._n_action[base + i]
            src_row = (base + i) * A
            dst_row = (base + j) * A
            for a in range(A):
                c = self._c_index[src_row + a]
                self._c_index[dst_row + a] = remap[c] if c >= 0 else c
                self._c_prior[dst_row + a] = self._c_prior[src_row + a]
                self._c_visits[dst_row + a] = self._c_visits[src_row + a]
                self._c_value_sum[dst_row + a] = self._c_value_sum[src_row + a]
        self._num_nodes[b] = kept
        self._root_noised[b] = 0
        self._noise_pending[b] = 0
        self._sims_target[b] = 0
        self._sims_done[b] = 0

    # ------------------------------------------------------------------ results
    def root_visits(self):
        """int32 [B, A]: N(root, a) (0 for illegal or unvisited actions)."""
        return self.child_visits[:, ROOT_, :].copy()

    def root_prior(self):
        """float32 [B, A]: the root priors the search used (noise included)."""
        return self.child_prior[:, ROOT_, :].copy()

    def root_q(self):
        """float32 [B, A]: Q(root, a) from the root player's view, 0 where unvisited."""
        n = self.child_visits[:, ROOT_, :]
        w = self.child_value_sum[:, ROOT_, :]
        return np.divide(w, n, out=np.zeros(n.shape, np.float64), where=n > 0).astype(np.float32)

    def root_value(self):
        """float32 [B]: mean backed-up win/loss value of each root from its player's view (0 if never
        visited): the win rate, without the score utility the search itself maximises."""
        n = self.node_visits[:, ROOT_]
        return np.divide(self.node_win_sum[:, ROOT_], n, out=np.zeros(n.shape, np.float64),
                         where=n > 0).astype(np.float32)

    def root_utility(self):
        """float32 [B]: mean backed-up utility (win/loss value + score utility) of each root."""
        n = self.node_visits[:, ROOT_]
        return np.divide(self.node_value_sum[:, ROOT_], n, out=np.zeros(n.shape, np.float64),
                         where=n > 0).astype(np.float32)

    def root_score(self):
        """float32 [B]: mean backed-up expected score of each root from its player's view (0 without
        scores, or if never visited)."""
        n = self.node_visits[:, ROOT_]
        return np.divide(self.node_score_sum[:, ROOT_], n, out=np.zeros(n.shape, np.float64),
                         where=n > 0).astype(np.float32)

    def root_completed_q(self):
        """float64 [B, A]: completed Q of every root action (Q if visited, else v_mix); 0 where illegal."""
        out = np.zeros((self.batch, self.num_actions), np.float64)
        cdef double[:, ::1] o = out
        cdef Py_ssize_t b, a
        cdef int32_t max_n
        for b in range(self.batch):
            if self._n_state[b * self.capacity + ROOT_] != NODE_EXPANDED_:
                continue
            self._completed_q(b, ROOT_, False, &max_n)
            for a in range(self.num_actions):
                if self._c_index[b * self.capacity * self.num_actions + a] != ILLEGAL_:
                    o[b, a] = self._scratch_q[a] if self._scratch_n[a] > 0 else self._v_mix
        return out

    def gumbel_result(self):
        """(improved policy float32 [B, A], action int32 [B]) of a finished Gumbel search.

        policy = softmax(logit + sigma(completed Q)) over the legal root actions (the training target);
        action = argmax of g + logit + sigma(completed Q) among the most visited actions. A game whose
        root was never expanded gets a zero policy and NO_ACTION.
        """
        if not self.gumbel:
            raise RuntimeError("gumbel_result: this tree runs PUCT")
        policy = np.zeros((self.batch, self.num_actions), np.float32)
        action = np.full(self.batch, NO_ACTION_, np.int32)
        cdef float[:, ::1] pol = policy
        cdef int32_t[::1] act = action
        cdef Py_ssize_t b, a, row
        cdef int32_t max_n, best_a
        cdef double best, score
        cdef const double* s = self._scratch_q
        with nogil:
            for b in range(self.batch):
                row = b * self.capacity * self.num_actions
                if self._n_state[b * self.capacity + ROOT_] != NODE_EXPANDED_:
                    continue
                self._completed_q(b, ROOT_, False, &max_n)
                self._sigma(b, ROOT_, max_n)
                best, best_a = -INFINITY, NO_ACTION_
                for a in range(self.num_actions):
                    if self._c_index[row + a] != ILLEGAL_ and self._scratch_n[a] == max_n:
                        score = self._root_score[b * self.num_actions + a] + s[a]
                        if score > best:
                            best, best_a = score, a
                act[b] = best_a
                self._improved_policy(b, ROOT_, True)
                for a in range(self.num_actions):
                    if self._c_index[row + a] != ILLEGAL_:
                        pol[b, a] = <float>s[a]
        return policy, action
