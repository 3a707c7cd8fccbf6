# --------------------------------------------------------------------------------------------------
# _mcts_leaf.pxi, included by _mcts.pyx (after SearchTree): the fused batch step.
# bind_leaves binds a native game's leaf API (games/leaf_api.pxd), the roots and the step
# buffers once per search; each leaf_step then expands and backs up the previous step's
# evaluations, selects, and replays / queries / encodes the new leaves in one `with nogil`
# block, so only the evaluator call holds the GIL.
# --------------------------------------------------------------------------------------------------

cdef object _bind_leaves(SearchTree self, leaves, roots, legal, terminal, to_play, outcome, query, obs):
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


cdef object _leaf_step(SearchTree self, priors, values, bint select, scores):
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
                _abort(self)
                raise
            pr = _float32_rows(priors, m, A)
            vl = _float32_rows(values, m, 0)
            if pr == NULL or vl == NULL:
                _abort(self)
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
            err = _expand(self, m, pr, vl, legal, terminal, self._b_to_play, self._b_outcome, &bad,
                               sc, self._final_score)
            if err != OK:
                _abort(self)
        m = 0
        if err == OK and select and _searching(self):
            running = True
            expanding = False
            err = _select_all(self, &m, &length, &bad)
            if err == OK:
                bad = api.load_paths(self._leaves_ctx, self._roots_ctx, self._leaf_game, self._paths, m, length,
                                     &bad_step)
                if bad >= 0:
                    err = ERR_ILLEGAL_PATH
                    _abort(self)
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
        _raise_expand_error(self, err, bad, self._b_outcome[bad] if terminal[bad] else vl[bad],
                                 "the step was rolled back")
    if err == ERR_ILLEGAL_PATH:
        # Let the game's own method find the move again and explain it.
        leaves, roots = self._bound[0], self._bound[1]
        leaves.load_paths(roots, self.leaf_game[:m], self.paths[:m * length].reshape(m, length))
        raise RuntimeError(f"leaf_step: the leaf API rejected the path of leaf {bad} (step {bad_step}), "
                           f"but {type(leaves).__name__}.load_paths accepts it")
    _raise_select_error(self, err, bad)
