# ---------------------------------------------------------------------------
# _go_leaf.pxi, included by _go.pyx: the leaf API and the fast buffer checks.
#
# What the search core calls per step through games/leaf_api.pxd, and the
# checks that let GoStates' batched methods skip numpy's argument handling.
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# The leaf API (games/leaf_api.pxd): the search's per-step calls, shared with
# GoStates.load_paths / query / encode. ctx is a GoStates' LeafCtx field, which
# points at the object's `buf` field: apply_paths swaps the buffer behind it.
# ---------------------------------------------------------------------------

ctypedef struct LeafCtx:
    char** buf          # &GoStates.buf
    const Geo* g


cdef Py_ssize_t go_load_paths(void* dst, const void* src, const int64_t* games, const int32_t* paths,
                              Py_ssize_t m, Py_ssize_t length, Py_ssize_t* bad_step) noexcept nogil:
    cdef const Geo* g = (<const LeafCtx*>dst).g
    cdef char* d = (<const LeafCtx*>dst).buf[0]
    cdef const char* s = (<const LeafCtx*>src).buf[0]
    cdef Py_ssize_t k, j
    cdef int a
    cdef SV v
    for k in range(m):
        copy_state(d + k * g.stride, s + games[k] * g.stride, g)
        bind(&v, d + k * g.stride, g)
        for j in range(length):
            a = paths[k * length + j]
            if a == NO_ACTION:
                continue
            if check_action(&v, g, a) != MOVE_OK:
                bad_step[0] = j
                return k
            play_action(&v, g, a)
    return -1


cdef void go_query(const void* ctx, Py_ssize_t n, uint8_t* legal, uint8_t* terminal, int8_t* to_play,
                   float* outcome) noexcept nogil:
    cdef const Geo* g = (<const LeafCtx*>ctx).g
    cdef char* buf = (<const LeafCtx*>ctx).buf[0]
    cdef Py_ssize_t b
    cdef SV v
    for b in range(n):
        bind(&v, buf + b * g.stride, g)
        legal_row(&v, g, legal + b * (g.nn + 1))
        terminal[b] = v.h.terminal
        to_play[b] = v.h.num_moves & 1
        outcome[b] = outcome_of(&v)


cdef void go_encode(const void* ctx, Py_ssize_t n, float* out) noexcept nogil:
    cdef const Geo* g = (<const LeafCtx*>ctx).g
    cdef char* buf = (<const LeafCtx*>ctx).buf[0]
    cdef Py_ssize_t b
    cdef SV v
    for b in range(n):
        bind(&v, buf + b * g.stride, g)
        encode_row(&v, g, out + b * (g.planes * g.nn))


cdef void go_final_score(const void* ctx, Py_ssize_t n, float* score) noexcept nogil:
    cdef const Geo* g = (<const LeafCtx*>ctx).g
    cdef char* buf = (<const LeafCtx*>ctx).buf[0]
    cdef const Header* h
    cdef Py_ssize_t b
    for b in range(n):
        h = <const Header*>(buf + b * g.stride)
        score[b] = h.score if h.terminal else 0.0


cdef bint go_compatible(const void* a, const void* b) noexcept nogil:
    # Same rule parameters give the same state layout (GoStates.load_paths / put check the same);
    # the same features give the same observations, so leaves and roots also agree on obs_size.
    cdef const Geo* ga = (<const LeafCtx*>a).g
    cdef const Geo* gb = (<const LeafCtx*>b).g
    return (ga.n == gb.n and ga.komi == gb.komi and ga.max_moves == gb.max_moves
            and ga.features == gb.features)


cdef char* fast_buffer(object arr, int typenum, int ndim, bint writeable):
    """Data pointer of `arr` when it is exactly an ndarray of native-order dtype `typenum`
    with `ndim` dimensions, C-contiguous (and writeable if asked); else NULL.

    The search calls load_paths and query every step with its own preallocated buffers,
    which always pass; checking them here costs nanoseconds where the general Python
    checks (azero.games.base) and typed-memoryview acquisition cost microseconds per
    call, about 150 ns per leaf. Any other argument takes the general path, which
    converts it or raises the documented error, so the fast path accepts nothing the
    general one would refuse. The caller checks shapes (PyArray_DIMS) and keeps `arr`
    alive while it uses the pointer.
    """
    if not cnp.PyArray_CheckExact(arr):
        return NULL
    cdef cnp.ndarray a = <cnp.ndarray>arr
    if (cnp.PyArray_TYPE(a) != typenum or cnp.PyArray_NDIM(a) != ndim
            or not cnp.PyArray_IS_C_CONTIGUOUS(a) or not cnp.PyArray_ISNOTSWAPPED(a)
            or (writeable and not cnp.PyArray_ISWRITEABLE(a))):
        return NULL
    return <char*>cnp.PyArray_DATA(a)


cdef char* fast_bool_buffer(object arr, int ndim):
    # bool or uint8, as azero.games.base.check_query accepts for masks.
    cdef char* p = fast_buffer(arr, cnp.NPY_BOOL, ndim, True)
    return p if p != NULL else fast_buffer(arr, cnp.NPY_UINT8, ndim, True)


cdef inline cnp.npy_intp dim(object arr, int i):
    # Only for arrays fast_buffer accepted.
    return cnp.PyArray_DIMS(<cnp.ndarray>arr)[i]
