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
                _prepare_root(self, b)
        if node != ROOT_:
            self._sims_done[b] += 1
        _backup(self, b, node, u, v, sc)
    self._pending_leaves = 0
    return OK


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
