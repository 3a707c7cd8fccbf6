# cython: language_level=3
"""The leaf API: C calls a native game batch hands the search core, so that a batch step's game
work (copy roots and replay paths, query, encode) runs inside the tree's own `with nogil` block.

A native States class exports it through `_leaf_api()`, a PyCapsule named LEAF_API_NAME around a
LeafApi that lives inside the States object; the capsule holds a reference to that object, so the
pointers stay valid while the capsule (or anything else holding the object) does. The search core
binds one batch of leaves and one batch of roots per search (SearchTree.bind_leaves) and calls the
functions with their `ctx`. The States' own Python methods (load_paths, query, encode) run the same
functions after checking their arguments, so both paths share one implementation.

`ctx` points at fields of the States object, never at its state arrays: apply_paths replaces the
arrays (it plays into a spare buffer and swaps), the fields stay where they are.

Compiled into each module that cimports it (declarations and inline functions only, no runtime
module): setup.py puts games/ on Cython's include path, as the games/ -> azero.games mapping hides
a .pxd from Cython's usual package look-up.
"""

from cpython.pycapsule cimport (PyCapsule_GetContext, PyCapsule_GetPointer, PyCapsule_IsValid, PyCapsule_New,
                                PyCapsule_SetContext)
from cpython.ref cimport Py_INCREF, Py_XDECREF, PyObject
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t

cdef enum:
    LEAF_API_VERSION = 2      # raised whenever LeafApi changes layout or meaning (2: `score`)

# Rows k < m of `dst`: dst[k] = src[games[k]], then play paths[k * length .. (k + 1) * length)
# (NO_ACTION skipped). Returns -1, or the first row whose path has an illegal action; that row then
# holds the position the illegal action was tried in, *bad_step its index in the path, and the rows
# after it are unspecified. The caller guarantees 0 <= games[k] < src size and m <= dst size.
ctypedef Py_ssize_t (*leaf_load_paths_fn)(void* dst, const void* src, const int64_t* games, const int32_t* paths,
                                          Py_ssize_t m, Py_ssize_t length, Py_ssize_t* bad_step) noexcept nogil
# Rows b < n: legal [n, A] (0/1), terminal [n] (0/1), to_play [n], outcome [n] (player 0's view).
ctypedef void (*leaf_query_fn)(const void* ctx, Py_ssize_t n, uint8_t* legal, uint8_t* terminal, int8_t* to_play,
                               float* outcome) noexcept nogil
# Rows b < n: observations, obs_size floats each, back to back.
ctypedef void (*leaf_encode_fn)(const void* ctx, Py_ssize_t n, float* out) noexcept nogil
# Whether states of two batches of this engine may be copied into each other (same rule parameters).
ctypedef bint (*leaf_compatible_fn)(const void* a, const void* b) noexcept nogil
# Rows b < n: score [n], the final score of each terminal position from player 0's view (Go: the
# Tromp-Taylor black area - white area - komi), 0.0 for a position that is not terminal.
ctypedef void (*leaf_score_fn)(const void* ctx, Py_ssize_t n, float* score) noexcept nogil

ctypedef struct LeafApi:
    int version                     # LEAF_API_VERSION
    const char* engine              # the States class, for error messages
    void* ctx                       # this batch; valid for the object's life
    Py_ssize_t size                 # positions in the batch (fixed for the object's life)
    Py_ssize_t num_actions          # A
    Py_ssize_t obs_size             # floats in one observation, C * H * W
    leaf_compatible_fn compatible   # NULL: any two batches of the engine are compatible
    leaf_load_paths_fn load_paths   # also identifies the engine: two batches work together only if equal
    leaf_query_fn query
    leaf_encode_fn encode
    leaf_score_fn score             # NULL: the game has no score beyond its outcome (connect four, tic-tac-toe)


cdef inline const char* leaf_api_name() noexcept nogil:
    return b"azero.games.LeafApi"


cdef inline void _leaf_api_release(object capsule) noexcept:
    Py_XDECREF(<PyObject*>PyCapsule_GetContext(capsule))


cdef inline object leaf_api_capsule(LeafApi* api, object owner):
    """The capsule `owner._leaf_api()` returns: `api` (a field of owner), keeping owner alive."""
    capsule = PyCapsule_New(api, leaf_api_name(), _leaf_api_release)
    Py_INCREF(owner)
    PyCapsule_SetContext(capsule, <void*>owner)
    return capsule


cdef inline LeafApi* leaf_api_of(object capsule) except NULL:
    """The LeafApi inside a capsule from _leaf_api(); TypeError for anything else, ValueError for another version."""
    if not PyCapsule_IsValid(capsule, leaf_api_name()):
        raise TypeError(f"expected an azero leaf API capsule ({leaf_api_name().decode()}), got {capsule!r}")
    cdef LeafApi* api = <LeafApi*>PyCapsule_GetPointer(capsule, leaf_api_name())
    if api.version != LEAF_API_VERSION:
        raise ValueError(f"leaf API version {api.version} of {api.engine.decode()} does not match this build's "
                         f"{LEAF_API_VERSION}: rebuild the extensions together")
    return api
