# --------------------------------------------------------------------------------------------------
# _mcts_defs.pxi, included by _mcts.pyx (before SearchTree): the names every part shares.
# Sentinels (C enum for nogil code, exported as Python ints), error codes of the nogil
# helpers, the two exceptions, the numpy buffer checks of the Python-facing methods, and
# the C loops of _mcts_simd.h, whose header also defines UNEXPANDED and ILLEGAL.
# --------------------------------------------------------------------------------------------------

# Sentinels (C enum for nogil code; the same values are exported as Python ints below).
cdef enum:
    ROOT_ = 0              # node id of every tree's root
    NO_PARENT_ = -1        # node_parent of a root
    NO_ACTION_ = -1        # node_action of a root; padding in action paths (= azero.games.base.NO_ACTION)
    NODE_PENDING_ = 0      # allocated, waiting for its evaluation
    NODE_EXPANDED_ = 1     # evaluated; its child row is valid
    NODE_TERMINAL_ = 2     # game over here; node_raw_value is the exact outcome

# node_proven (MCTS-Solver): the game-theoretic value of a node, once known, for its player to move.
cdef enum:
    UNPROVEN_ = 0
    PROVEN_LOSS_ = 1       # value code - 2: -1
    PROVEN_DRAW_ = 2       # 0
    PROVEN_WIN_ = 3        # +1

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
UNPROVEN = UNPROVEN_
PROVEN_LOSS = PROVEN_LOSS_
PROVEN_DRAW = PROVEN_DRAW_
PROVEN_WIN = PROVEN_WIN_
UNPROVEN_VALUE = -128      # SearchTree.root_proven() of an action whose value is not proven


class TreeCapacityError(ValueError):
    """A search needs more nodes than the tree was built with (raise SearchConfig.max_nodes)."""


class EvaluatorOutputError(ValueError):
    """An evaluator returned NaN / infinite values or negative / non-finite priors."""


cdef inline void* _data(object arr):
    """Data pointer of an array the tree allocated itself (C-contiguous, its own dtype)."""
    return cnp.PyArray_DATA(<cnp.ndarray>arr)


cdef object _owned(object arr, void** data):
    """arr, a fresh array the tree owns, with its data pointer stored in *data (for the nogil code)."""
    data[0] = _data(arr)
    return arr


cdef object _public(object arr, void** data):
    """_owned, returned as a read-only view for a public field: the raw pointer was taken from the
    writable owner (kept alive as the view's base), and a stray write from Python, e.g. to num_nodes,
    could otherwise send the nogil code outside its buffers."""
    data[0] = _data(arr)
    view = arr.view()
    view.flags.writeable = False
    return view


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




# The child_index sentinels are defined once, in the header, for Cython and C alike.
cdef extern from "_mcts_simd.h":
    enum:
        UNEXPANDED_ "AZERO_UNEXPANDED"   # child_index of a legal action whose child has no node yet
        ILLEGAL_ "AZERO_ILLEGAL"         # child_index of an illegal action (and every slot of a terminal node)
    int32_t azero_puct_argmax(Py_ssize_t A, const int32_t* index, const int32_t* visits,
                              const double* value_sum, const float* prior, double c_sqrt, double fpu) noexcept nogil
    void azero_store_priors(Py_ssize_t A, const float* pr, const uint8_t* lg, double total, int32_t count,
                            int32_t* index, float* prior) noexcept nogil
