# --------------------------------------------------------------------------------------------------
# _mcts_select.pxi, included by _mcts.pyx (after SearchTree): the descents of one batch step.
# Virtual loss (K > 1 leaves per game and step): a descent increments
# node_in_flight on every node it reaches; selection then sees each pending
# descent as one visit valued -virtual_loss. The counters are integers and W
# itself is never touched, so reverting them is exact and K = 1 is exactly
# AlphaZero. A descent that reaches a node another descent of the same step is
# already evaluating (a collision) is dropped, not evaluated twice.
#
# --------------------------------------------------------------------------------------------------

cdef int _select_game(SearchTree self, Py_ssize_t b, Py_ssize_t* m) noexcept nogil:
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
                _backup(self, b, node, self._n_raw_value[base + node], self._n_raw_win[base + node],
                             self._n_raw_score[base + node])
                self._sims_done[b] += 1
                self.terminal_visits += 1
                break
            if state == NODE_PENDING_:
                _revert(self, b, node)
                self.collisions += 1
                break
            if self.solver and self._n_proven[base + node] != UNPROVEN_:
                _backup_proven(self, b, node)
                self._sims_done[b] += 1
                self.terminal_visits += 1
                break
            if node == ROOT_ and self.gumbel:
                a = _choose_gumbel_root(self, b)
            elif self.gumbel:
                a = _choose_gumbel_interior(self, b, node)
            else:
                a = _choose_puct(self, b, node)
            if a == NO_ACTION_:
                # Unreachable with validated inputs (an expanded node has a legal action and finite
                # statistics); checked so that a bug can never index slot -1.
                _revert(self, b, node)
                return ERR_NO_CHOICE
            if depth == self.max_depth:
                _revert(self, b, node)
                return ERR_DEPTH
            child = self._c_index[(base + node) * self.num_actions + a]
            if child == UNEXPANDED_:
                if self._num_nodes[b] >= self.capacity:
                    _revert(self, b, node)
                    return ERR_CAPACITY
                child = self._num_nodes[b]
                self._num_nodes[b] += 1
                _init_node(self, b, child, node, a)
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


cdef int _select_all(SearchTree self, Py_ssize_t* m_out, Py_ssize_t* length_out, Py_ssize_t* bad_game) noexcept nogil:
    """select() without the GIL: on success M and L (the leaves are pending); on an error code the
    step's leaves are already dropped and *bad_game names the game."""
    cdef Py_ssize_t b, i, j, length = 0, m = 0
    cdef int err = OK
    cdef int32_t* src
    for b in range(self.batch):
        err = _select_game(self, b, &m)
        if err != OK:
            # The failing descent was reverted; drop the leaves this step had already allocated.
            bad_game[0] = b
            self._pending_leaves = m
            _abort(self)
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


cdef _raise_select_error(SearchTree self, int err, Py_ssize_t b):
    if err == ERR_CAPACITY:
        raise TreeCapacityError(
            f"search tree of game {b} is full ({self.capacity} nodes): raise SearchConfig.max_nodes "
            f"(a search of n simulations needs n + 1 nodes, plus any reused subtree)")
    if err == ERR_NO_CHOICE:
        raise RuntimeError(f"select: no selectable action in game {b} (non-finite statistics?)")
    raise ValueError(f"select: a path in game {b} is longer than max_depth={self.max_depth}; "
                     f"the game's max_moves must bound the depth of its tree")


cdef bint _searching(SearchTree self) noexcept nogil:
    cdef Py_ssize_t b
    for b in range(self.batch):
        if self._sims_done[b] < self._sims_target[b]:
            return True
    return False
