# --------------------------------------------------------------------------------------------------
# _mcts_reroot.pxi, included by _mcts.pyx (after SearchTree): the search lifecycle and tree reuse.
# begin_search sets each game's simulation target, noise and Gumbel sample; advance re-roots
# every tree on the child of the move played, compacting the kept subtree in place (a child
# always has a larger id than its parent, so one ascending pass suffices).
# --------------------------------------------------------------------------------------------------

cdef object _begin_search(SearchTree self, targets, noise, double noise_weight, gumbel):
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
            _prepare_root(self, b)
            # KataGo's dynamic centre: a reused root's own search mean of the score.
            self._centre[b] = self._n_score_sum[b * self.capacity + ROOT_] / max(
                self._n_visits[b * self.capacity + ROOT_], 1)
            self._centre_set[b] = 1
        else:
            self._centre_set[b] = 0


cdef object _advance(SearchTree self, actions):
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
            _reset_game(self, b)
            continue
        if not 0 <= a < self.num_actions:
            raise ValueError(f"advance: action {a} of game {b} is out of range [0, {self.num_actions})")
        if self._n_state[base + ROOT_] != NODE_EXPANDED_:
            _reset_game(self, b)
            continue
        child = self._c_index[base * self.num_actions + a]
        if child == ILLEGAL_:
            raise ValueError(f"advance: action {a} is illegal at the root of game {b}")
        if child == UNEXPANDED_ or self._n_state[base + child] == NODE_PENDING_:
            _reset_game(self, b)
        else:
            with nogil:
                _reroot(self, b, child)


cdef void _reroot(SearchTree self, Py_ssize_t b, int32_t new_root) noexcept nogil:
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
        self._n_proven[base + j] = self._n_proven[base + i]
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
