# --------------------------------------------------------------------------------------------------
# _mcts_gumbel.pxi, included by _mcts.pyx (after SearchTree): Gumbel AlphaZero (Danihelka et al., ICLR 2022).
# Ties go to the lowest action index everywhere.
# Gumbel (Danihelka et al., ICLR 2022): at the root, sequential halving over
#     g(a) + logit(a) + sigma(completed Q(a)) (the visit schedule is a table
#     from search/gumbel.py); elsewhere the deterministic rule
#     argmax_a  pi'(a) - N(s,a) / (1 + sum_b N(s,b)),  pi' = softmax(logit + sigma(completed Q)),
#     sigma(q) = (c_visit + max_b N(s,b)) * c_scale * q, completed Q = Q(s,a) if
#     visited else v_mix (eq. 33 of the paper).
#
# Also the results of a finished Gumbel search (improved policy, chosen action).
# --------------------------------------------------------------------------------------------------

cdef int32_t _completed_q(SearchTree self, Py_ssize_t b, int32_t node, bint in_flight, int32_t* max_n) noexcept nogil:
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


cdef void _sigma(SearchTree self, Py_ssize_t b, int32_t node, int32_t max_n) noexcept nogil:
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


cdef double _improved_policy(SearchTree self, Py_ssize_t b, int32_t node, bint normalise) noexcept nogil:
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


cdef int32_t _choose_gumbel_interior(SearchTree self, Py_ssize_t b, int32_t node) noexcept nogil:
    """argmax_a pi'(a) - N(a) / (1 + sum_b N(b)): deterministic, steers visits towards pi'."""
    cdef const int32_t* index = self._c_index + (b * self.capacity + node) * self.num_actions
    cdef const double* e = self._scratch_q
    cdef const int32_t* ns = self._scratch_n
    cdef int32_t max_n, a, best_a = NO_ACTION_
    cdef int32_t sum_n = _completed_q(self, b, node, True, &max_n)
    cdef double best = -INFINITY, score, z
    _sigma(self, b, node, max_n)
    z = _improved_policy(self, b, node, False)
    for a in range(self.num_actions):
        if index[a] != ILLEGAL_:
            score = e[a] / z - ns[a] / (1.0 + sum_n)
            if score > best:
                best = score
                best_a = a
    return best_a


cdef int32_t _choose_gumbel_root(SearchTree self, Py_ssize_t b) noexcept nogil:
    cdef const int32_t* index = self._c_index + b * self.capacity * self.num_actions
    cdef const double* base_score = self._root_score + b * self.num_actions
    cdef const double* s = self._scratch_q
    cdef const int32_t* ns = self._scratch_n
    cdef int32_t max_n, a, target, best_a = NO_ACTION_
    cdef int32_t sum_n = _completed_q(self, b, ROOT_, True, &max_n)
    cdef Py_ssize_t considered = self._root_num_legal[b]
    cdef Py_ssize_t step = sum_n
    cdef double best = -INFINITY, score
    _sigma(self, b, ROOT_, max_n)
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


cdef void _prepare_root(SearchTree self, Py_ssize_t b) noexcept nogil:
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


cdef object _root_completed_q(SearchTree self):
    out = np.zeros((self.batch, self.num_actions), np.float64)
    cdef double[:, ::1] o = out
    cdef Py_ssize_t b, a
    cdef int32_t max_n
    for b in range(self.batch):
        if self._n_state[b * self.capacity + ROOT_] != NODE_EXPANDED_:
            continue
        _completed_q(self, b, ROOT_, False, &max_n)
        for a in range(self.num_actions):
            if self._c_index[b * self.capacity * self.num_actions + a] != ILLEGAL_:
                o[b, a] = self._scratch_q[a] if self._scratch_n[a] > 0 else self._v_mix
    return out


cdef object _gumbel_result(SearchTree self):
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
            _completed_q(self, b, ROOT_, False, &max_n)
            _sigma(self, b, ROOT_, max_n)
            best, best_a = -INFINITY, NO_ACTION_
            for a in range(self.num_actions):
                if self._c_index[row + a] != ILLEGAL_ and self._scratch_n[a] == max_n:
                    score = self._root_score[b * self.num_actions + a] + s[a]
                    if score > best:
                        best, best_a = score, a
            act[b] = best_a
            _improved_policy(self, b, ROOT_, True)
            for a in range(self.num_actions):
                if self._c_index[row + a] != ILLEGAL_:
                    pol[b, a] = <float>s[a]
    return policy, action
