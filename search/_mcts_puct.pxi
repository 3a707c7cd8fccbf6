# --------------------------------------------------------------------------------------------------
# _mcts_puct.pxi, included by _mcts.pyx (after SearchTree): PUCT selection (AlphaZero).
# Ties go to the lowest action index everywhere.
# PUCT (AlphaZero):  argmax_a  Q(s,a) + c(s) P(s,a) sqrt(N(s)) / (1 + N(s,a)),
#     c(s) = log((1 + N(s) + c_base) / c_base) + c_init, N(s) = node visits;
#     an unvisited child takes Q = V(s) - fpu_reduction (first-play urgency).
# Without virtual loss the child loop is azero_puct_argmax (_mcts_simd.h).
# With the solver (_mcts_backup.pxi) a child that is a proven loss for the mover is never chosen.
# --------------------------------------------------------------------------------------------------

cdef double _puct_c_sqrt_compute(SearchTree self, Py_ssize_t n_parent) noexcept nogil:
    """c(s) sqrt(N(s)), c(s) = log((1 + N(s) + c_base) / c_base) + c_init (the twin's expression)."""
    cdef double c = log((1.0 + n_parent + self.c_base) / self.c_base) + self.c_init
    return c * sqrt(<double>n_parent)


cdef inline double _puct_c_sqrt(SearchTree self, Py_ssize_t n_parent) noexcept nogil:
    if 0 <= n_parent < self._c_sqrt_len:
        return self._c_sqrt[n_parent]
    return _puct_c_sqrt_compute(self, n_parent)


cdef int32_t _choose_puct(SearchTree self, Py_ssize_t b, int32_t node) noexcept nogil:
    cdef Py_ssize_t i = b * self.capacity + node
    cdef Py_ssize_t row = i * self.num_actions
    # This descent already counts in node_in_flight[node]; the other pending ones are in its children.
    cdef int32_t n_parent = self._n_visits[i] + self._n_in_flight[i] - 1
    cdef double c_sqrt = _puct_c_sqrt(self, n_parent)
    cdef double fpu = self._n_value_sum[i] / self._n_visits[i] - self.fpu_reduction
    if self.leaves_per_game > 1:
        return _choose_puct_vl(self, b, node, c_sqrt, fpu)
    # With K = 1 no other descent is ever pending, so the children's in-flight counters (a random
    # access each) are not read at all.
    cdef int32_t a = azero_puct_argmax(self.num_actions, self._c_index + row, self._c_visits + row,
                                       self._c_value_sum + row, self._c_prior + row, c_sqrt, fpu)
    cdef int32_t child
    if self.solver and a != NO_ACTION_:
        child = self._c_index[row + a]
        if child >= 0 and _proven_loss_move(self, b * self.capacity, node, child):
            # Rare (a proven loss keeps backing up -1): the scalar loop skips such children, and with
            # nothing in flight it is the same arithmetic.
            return _choose_puct_vl(self, b, node, c_sqrt, fpu)
    return a


cdef int32_t _choose_puct_vl(SearchTree self, Py_ssize_t b, int32_t node, double c_sqrt, double fpu) noexcept nogil:
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
            if self.solver and _proven_loss_move(self, base, node, child):
                continue
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
