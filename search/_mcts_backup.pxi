# --------------------------------------------------------------------------------------------------
# _mcts_backup.pxi, included by _mcts.pyx (after SearchTree): node bookkeeping, expansion and backup.
# A node is initialised when a descent allocates it and expanded when its evaluation arrives:
# _expand validates the whole step's evaluator output first, then stores priors and backs up
# u = v + score_lambda * 2/pi * atan((score - c) / score_div) (KataGo's score utility, centre c
# from the root) with the win/loss value and score tracked alongside; _revert / _abort undo the
# virtual loss of a step that is dropped.
# --------------------------------------------------------------------------------------------------

cdef void _init_node(SearchTree self, Py_ssize_t b, int32_t node, int32_t parent, int32_t action) noexcept nogil:
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
    self._n_proven[i] = UNPROVEN_


cdef void _reset_game(SearchTree self, Py_ssize_t b) noexcept nogil:
    _init_node(self, b, ROOT_, NO_PARENT_, NO_ACTION_)
    self._num_nodes[b] = 1
    self._root_noised[b] = 0
    self._noise_pending[b] = 0
    self._centre_set[b] = 0
    self._root_num_legal[b] = 0
    self._sims_target[b] = 0
    self._sims_done[b] = 0


cdef void _backup(SearchTree self, Py_ssize_t b, int32_t leaf, double value, double win, double score) noexcept nogil:
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


cdef void _revert(SearchTree self, Py_ssize_t b, int32_t leaf) noexcept nogil:
    """Undo the in-flight marks of a descent that ended at `leaf` without an evaluation."""
    cdef Py_ssize_t base = b * self.capacity
    cdef int32_t node = leaf
    while node != NO_PARENT_:
        self._n_in_flight[base + node] -= 1
        node = self._n_parent[base + node]


cdef int _expand(SearchTree self, Py_ssize_t m, const float* priors, const float* values, const uint8_t* legal,
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
        self._n_to_play[base + node] = to_play[i]
        if utility:
            if node == ROOT_ and not self._centre_set[b]:
                self._centre[b] = sc
                self._centre_set[b] = 1
            u = v + _score_term(self, b, to_play[i], sc)
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
                _prepare_root(self, b)
        if node != ROOT_:
            self._sims_done[b] += 1
        _backup(self, b, node, u, v, sc)
        if terminal[i]:
            self._n_proven[base + node] = PROVEN_WIN_ if v > 0 else (PROVEN_LOSS_ if v < 0 else PROVEN_DRAW_)
            if self.solver:
                _prove_up(self, b, node)
    self._pending_leaves = 0
    return OK


cdef inline double _score_term(SearchTree self, Py_ssize_t b, int8_t to_play, double sc) noexcept nogil:
    """The score utility's term for a node whose player to move is `to_play` and expected score `sc`
    (that player's view): the centre c is kept in the root player's view."""
    cdef double c = self._centre[b] if to_play == self._n_to_play[b * self.capacity + ROOT_] else -self._centre[b]
    return self.score_lambda * M_2_PI * atan((sc - c) / self.score_div)


# ---- MCTS-Solver (Winands, Bjornsson & Saito 2008, "Monte-Carlo Tree Search Solver") ----------------
# A terminal node is proven with its exact outcome. With solver=True proofs travel up: a node is a
# proven win for its player to move as soon as one child is a proven win from that player's view,
# and proven with the best of its children's values once every legal child is proven (a loss, or a
# draw). A descent that reaches a proven node backs up its proven value as it would a terminal's, and
# PUCT never chooses a child that is a proven loss for the mover (an unproven node always has an
# unproven child, so a choice remains). So search stops spending simulations where the outcome is
# known, and a proven win or loss is exact, not an average of network values.

cdef inline bint _proven_loss_move(SearchTree self, Py_ssize_t base, int32_t node, int32_t child) noexcept nogil:
    """Whether moving from `node` to its expanded `child` is proven to lose for node's player to move."""
    cdef int8_t p = self._n_proven[base + child]
    if p == UNPROVEN_:
        return False
    if self._n_to_play[base + child] != self._n_to_play[base + node]:
        return p == PROVEN_WIN_
    return p == PROVEN_LOSS_


cdef void _prove_up(SearchTree self, Py_ssize_t b, int32_t node) noexcept nogil:
    """`node` was just proven: prove each ancestor that now is, stopping at the first that is not."""
    cdef Py_ssize_t base = b * self.capacity, A = self.num_actions, a
    cdef const int32_t* index
    cdef int32_t parent, child
    cdef int best, v
    cdef bint open_child
    while True:
        parent = self._n_parent[base + node]
        if parent == NO_PARENT_ or self._n_proven[base + parent] != UNPROVEN_:
            return
        index = self._c_index + (base + parent) * A
        best = -2
        open_child = False
        for a in range(A):
            child = index[a]
            if child == ILLEGAL_:
                continue
            if child == UNEXPANDED_ or self._n_proven[base + child] == UNPROVEN_:
                open_child = True
                continue
            v = self._n_proven[base + child] - PROVEN_DRAW_
            if self._n_to_play[base + child] != self._n_to_play[base + parent]:
                v = -v
            if v > best:
                best = v
        if best < 1 and open_child:
            return
        self._n_proven[base + parent] = <int8_t>(best + PROVEN_DRAW_)
        node = parent


cdef void _backup_proven(SearchTree self, Py_ssize_t b, int32_t node) noexcept nogil:
    """A descent reached the proven, expanded `node`: back up its proven value, with the node's mean
    score for the score utility (the win/loss value is exact, the score is not)."""
    cdef Py_ssize_t i = b * self.capacity + node
    cdef double v = self._n_proven[i] - PROVEN_DRAW_
    cdef double sc = self._n_score_sum[i] / self._n_visits[i]
    cdef double u = v
    if self.score_lambda > 0:
        u = v + _score_term(self, b, self._n_to_play[i], sc)
    _backup(self, b, node, u, v, sc)


cdef object _root_proven(SearchTree self):
    B, A = self.batch, self.num_actions
    index = self.child_index[:, ROOT_, :]
    rows = np.arange(B)[:, None]
    child = np.maximum(index, 0)
    code = self.node_proven[rows, child].astype(np.int8)
    value = code - PROVEN_DRAW_
    flip = self.node_to_play[rows, child] != self.node_to_play[:, ROOT_][:, None]
    value = np.where(flip, -value, value).astype(np.int8)
    known = (index >= 0) & (code != UNPROVEN_)
    return np.where(known, value, UNPROVEN_VALUE).astype(np.int8)


cdef _raise_expand_error(SearchTree self, int err, Py_ssize_t bad, double value, str after):
    what = {ERR_VALUE: f"value {value!r} is not finite",
            ERR_PRIOR: "priors contain NaN, infinite or negative entries",
            ERR_NO_LEGAL: "the game reports no legal action in a non-terminal position"}[err]
    raise EvaluatorOutputError(f"leaf {bad} of this step (game {self.leaf_game[bad]}): {what}; {after}")


cdef void _abort(SearchTree self) noexcept nogil:
    cdef Py_ssize_t i, b, node, base
    for i in range(self._pending_leaves):
        b, node = self._leaf_game[i], self._leaf_node[i]
        base = b * self.capacity
        _revert(self, b, node)
        if node != ROOT_:
            # The leaf was the last node allocated in its game's tree (leaves are allocated in order).
            self._c_index[(base + self._n_parent[base + node]) * self.num_actions + self._n_action[base + node]] \
                = UNEXPANDED_
    for i in range(self._pending_leaves - 1, -1, -1):
        b, node = self._leaf_game[i], self._leaf_node[i]
        if node != ROOT_ and self._num_nodes[b] == node + 1:
            self._num_nodes[b] = node
    self._pending_leaves = 0
