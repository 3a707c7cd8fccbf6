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

Where things live (one module, textual includes by concept, as mctx splits tree.py / search.py /
policies.py):
  _mcts.pyx          this file: the tree storage (SearchTree's fields), its allocation and the
                     Python-facing methods, each a thin entry into the files below;
  _mcts_defs.pxi     sentinels, error codes, exceptions, numpy buffer checks;
  _mcts_simd.h       the SSE2 PUCT argmax and prior store, and the child_index sentinels;
  _mcts_backup.pxi   node bookkeeping, expansion (evaluator output checks, score utility), backup;
  _mcts_puct.pxi     PUCT selection;
  _mcts_gumbel.pxi   Gumbel: completed Q, sigma, improved policy, sequential halving at the root;
  _mcts_select.pxi   the descents of one batch step (virtual loss, collisions, terminals);
  _mcts_leaf.pxi     the fused leaf step over a game's leaf API (bind_leaves / leaf_step);
  _mcts_reroot.pxi   search lifecycle: begin_search, tree reuse by re-rooting (advance).

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


include "_mcts_defs.pxi"


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
    cdef readonly bint solver               # MCTS-Solver: prove wins / losses / draws up the tree (PUCT only)

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
    cdef readonly object node_proven        # int8: UNPROVEN, or PROVEN_LOSS / _DRAW / _WIN for the node's player
                                            #   to move (a terminal node, or with solver=True one whose children
                                            #   decide it: see _prove_up)
    cdef int8_t* _n_proven
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
                 double score_div=1.0, bint solver=False):
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
        if solver and gumbel:
            raise ValueError("SearchTree: solver=True needs PUCT (gumbel=False)")
        self.solver = solver
        self.noise_weight = 0.0

        node_shape = (batch, capacity)
        self.node_visits = _public(np.zeros(node_shape, np.int32), <void**>&self._n_visits)
        self.node_value_sum = _public(np.zeros(node_shape, np.float64), <void**>&self._n_value_sum)
        self.node_raw_value = _public(np.zeros(node_shape, np.float64), <void**>&self._n_raw_value)
        self.node_parent = _public(np.zeros(node_shape, np.int32), <void**>&self._n_parent)
        self.node_action = _public(np.zeros(node_shape, np.int32), <void**>&self._n_action)
        self.node_to_play = _public(np.zeros(node_shape, np.int8), <void**>&self._n_to_play)
        self.node_state = _public(np.zeros(node_shape, np.uint8), <void**>&self._n_state)
        self.node_in_flight = _public(np.zeros(node_shape, np.int32), <void**>&self._n_in_flight)
        self.node_win_sum = _public(np.zeros(node_shape, np.float64), <void**>&self._n_win_sum)
        self.node_score_sum = _public(np.zeros(node_shape, np.float64), <void**>&self._n_score_sum)
        self.node_raw_win = _public(np.zeros(node_shape, np.float64), <void**>&self._n_raw_win)
        self.node_raw_score = _public(np.zeros(node_shape, np.float64), <void**>&self._n_raw_score)
        self.node_proven = _public(np.zeros(node_shape, np.int8), <void**>&self._n_proven)

        # A child row is (re)written in full when its node is expanded and never read before.
        child_shape = (batch, capacity, num_actions)
        self.child_index = _public(np.full(child_shape, ILLEGAL_, np.int32), <void**>&self._c_index)
        self.child_prior = _public(np.zeros(child_shape, np.float32), <void**>&self._c_prior)
        self.child_visits = _public(np.zeros(child_shape, np.int32), <void**>&self._c_visits)
        self.child_value_sum = _public(np.zeros(child_shape, np.float64), <void**>&self._c_value_sum)

        self.num_nodes = _public(np.zeros(batch, np.int32), <void**>&self._num_nodes)
        self.sims_target = _public(np.zeros(batch, np.int32), <void**>&self._sims_target)
        self.sims_done = _public(np.zeros(batch, np.int32), <void**>&self._sims_done)
        self.root_noised = _public(np.zeros(batch, np.uint8), <void**>&self._root_noised)
        self._centre_arr = _owned(np.zeros(batch, np.float64), <void**>&self._centre)
        self._centre_set_arr = _owned(np.zeros(batch, np.uint8), <void**>&self._centre_set)
        self._per_game_u8 = _owned(np.zeros(batch, np.uint8), <void**>&self._noise_pending)
        self._root_num_legal_arr = _owned(np.zeros(batch, np.int32), <void**>&self._root_num_legal)
        self._noise_arr = _owned(np.zeros((batch, num_actions), np.float64), <void**>&self._noise)
        self._gumbel_arr = _owned(np.zeros((batch, num_actions), np.float64), <void**>&self._gumbel)
        self._root_score_arr = _owned(np.zeros((batch, num_actions), np.float64), <void**>&self._root_score)

        if gumbel:
            table = np.ascontiguousarray(gumbel_table, dtype=np.int32) if gumbel_table is not None else None
            if table is None or table.ndim != 2 or table.shape[0] < 2 or table.shape[1] < 1:
                raise ValueError("SearchTree: gumbel=True needs gumbel_table, int32 [m + 1, n] "
                                 "(azero.search.gumbel.considered_visits_table)")
            self._table_arr = table
            self._table_m, self._table_n = table.shape[0] - 1, table.shape[1]
            self._table = <int32_t*>_data(self._table_arr)

        slots = batch * leaves_per_game
        self.paths = _public(np.full(slots * max_depth, NO_ACTION_, np.int32), <void**>&self._paths)
        self.leaf_game = _public(np.zeros(slots, np.int64), <void**>&self._leaf_game)
        self.leaf_node = _public(np.zeros(slots, np.int32), <void**>&self._leaf_node)
        self._path_len_arr = _owned(np.zeros(slots, np.int32), <void**>&self._path_len)
        self._leaf_total_arr = _owned(np.zeros(slots, np.float64), <void**>&self._leaf_total)
        self._final_score_arr = _owned(np.zeros(slots, np.float32), <void**>&self._final_score)
        self._leaf_count_arr = _owned(np.zeros(slots, np.int32), <void**>&self._leaf_count)
        self._scratch_q_arr = _owned(np.zeros(num_actions, np.float64), <void**>&self._scratch_q)
        self._scratch_n_arr = _owned(np.zeros(num_actions, np.int32), <void**>&self._scratch_n)
        self._remap_arr = _owned(np.zeros(capacity, np.int32), <void**>&self._remap)
        # c(s) sqrt(N(s)) depends on N(s) alone: tabulate it once instead of a log and a sqrt per
        # descent step. N(s) < capacity + K almost always (visits beyond that only come from repeated
        # terminal visits); larger counts fall back to computing it.
        self._c_sqrt_len = min(capacity + leaves_per_game, 1 << 20)
        self._c_sqrt_arr = _owned(np.zeros(self._c_sqrt_len, np.float64), <void**>&self._c_sqrt)
        cdef Py_ssize_t n
        for n in range(self._c_sqrt_len):
            self._c_sqrt[n] = _puct_c_sqrt_compute(self, n)
        self._pending_leaves = 0
        self.reset()

    # ------------------------------------------------------------------ node bookkeeping




    # ------------------------------------------------------------------ selection rules










    # ------------------------------------------------------------------ one batch step



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
            err = _select_all(self, &m, &length, &bad_game)
        if err != OK:
            _raise_select_error(self, err, bad_game)
        return m, length



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
            err = _expand(self, m, &priors[0, 0], &values[0], &legal[0, 0], &terminal[0], &to_play[0], oc, &bad,
                               sc, fs)
        if err != OK:
            _raise_expand_error(self, err, bad, oc[bad] if oc != NULL and terminal[bad] else values[bad],
                                     "nothing was written, call abort_step() or reset() before searching on")


    def abort_step(self):
        """Forget the leaves of the last select() (after an evaluator error): the tree is as before it."""
        _abort(self)

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
        _bind_leaves(self, leaves, roots, legal, terminal, to_play, outcome, query, obs)

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
        return _leaf_step(self, priors, values, select, scores)

    # ------------------------------------------------------------------ search lifecycle
    def reset(self, index=None):
        """Fresh single-node trees for the games in `index` (all when None)."""
        if self._pending_leaves:
            raise RuntimeError("reset: a batch step is in progress (expand_and_backup or abort_step first)")
        games = range(self.batch) if index is None else np.asarray(index, dtype=np.int64).reshape(-1)
        for b in games:
            if not 0 <= b < self.batch:
                raise IndexError(f"reset: game index {b} out of range [0, {self.batch})")
            _reset_game(self, b)

    def begin_search(self, targets, noise=None, double noise_weight=0.0, gumbel=None):
        """Start a search of targets[b] simulations in game b (0 = leave it alone).

        noise: float64 [B, A] Dirichlet sample mixed into each root's priors once (weight
        noise_weight), when the root is (or becomes) expanded; a root already noised keeps its priors.
        gumbel: float64 [B, A] Gumbel sample g(a), required for a Gumbel tree.
        """
        _begin_search(self, targets, noise, noise_weight, gumbel)


    def searching(self):
        """Whether some game has not reached its simulation target yet (called once per batch step)."""
        return _searching(self)

    def advance(self, actions):
        """Re-root every game b on the child reached by actions[b], keeping that subtree (tree reuse).

        The kept subtree is compacted to the front of the game's arrays (root at id 0, order
        and statistics preserved), so its room is the capacity minus the kept nodes.
        NO_ACTION resets game b; an action whose child was never visited starts a fresh tree.
        """
        _advance(self, actions)


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

    def root_proven(self):
        """int8 [B, A]: the proven value of every root action from the root player's view (+1 win, 0 draw,
        -1 loss), UNPROVEN_VALUE where not proven, unexpanded or illegal. Only terminal children are
        proven unless the tree was built with solver=True."""
        return _root_proven(self)

    def root_completed_q(self):
        """float64 [B, A]: completed Q of every root action (Q if visited, else v_mix); 0 where illegal."""
        return _root_completed_q(self)

    def gumbel_result(self):
        """(improved policy float32 [B, A], action int32 [B]) of a finished Gumbel search.

        policy = softmax(logit + sigma(completed Q)) over the legal root actions (the training target);
        action = argmax of g + logit + sigma(completed Q) among the most visited actions. A game whose
        root was never expanded gets a zero policy and NO_ACTION.
        """
        return _gumbel_result(self)



# The algorithms, by concept (textual includes: one extension module, one C namespace).
include "_mcts_backup.pxi"
include "_mcts_puct.pxi"
include "_mcts_gumbel.pxi"
include "_mcts_select.pxi"
include "_mcts_leaf.pxi"
include "_mcts_reroot.pxi"
