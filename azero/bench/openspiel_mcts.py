"""OpenSpiel's C++ MCTSBot as a benchmark peer.

The C++ side (openspiel_mcts.cc beside this file) is built by setup.py with the other
extensions, as a plain shared library against the headers of the open_spiel wheel, and loaded
here through ctypes. It is optional: where it could not be built, or was built against another
open_spiel than the one installed, `PeerUnavailable` says why and `azero bench mcts` leaves the
OpenSpiel rows out.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import os
import shutil
import sysconfig
from pathlib import Path

LIBRARY = Path(__file__).resolve().parent / f"_openspiel_mcts{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
TRIVIAL, RANDOM_ROLLOUT = 0, 1
REBUILD = "rebuild with `pip install -e .` (or `python setup.py build_ext --inplace`)"


class PeerUnavailable(RuntimeError):
    """The OpenSpiel peer library cannot be used here (the message says why)."""


def _why_not_built(pyspiel_dir: Path) -> str:
    """The likely reason setup.py skipped the peer (its build output says for sure)."""
    if not (pyspiel_dir / "open_spiel" / "algorithms" / "mcts.h").is_file():
        return "the open_spiel package has no C++ headers"
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        return "no C++ compiler (g++, or $CXX) was found"
    return "the build skipped or failed it; its output says why"


def load_library() -> ctypes.CDLL:
    import pyspiel

    pyspiel_path = Path(pyspiel.__file__).resolve()
    if not LIBRARY.is_file():
        raise PeerUnavailable(f"the OpenSpiel peer {LIBRARY.name} was not built ({_why_not_built(pyspiel_path.parent)}); "
                              f"{REBUILD}")
    # The peer's OpenSpiel symbols are defined in pyspiel.so, which Python loaded privately
    # (RTLD_LOCAL); opening it again with RTLD_GLOBAL makes them visible to the peer.
    ctypes.CDLL(str(pyspiel_path), mode=os.RTLD_NOW | os.RTLD_GLOBAL)
    try:
        lib = ctypes.CDLL(str(LIBRARY))
    except OSError as e:
        raise PeerUnavailable(f"the OpenSpiel peer {LIBRARY} does not load ({e}); {REBUILD}") from e
    lib.azero_openspiel_version.restype = ctypes.c_char_p
    built, installed = lib.azero_openspiel_version().decode(), importlib.metadata.version("open_spiel")
    if built != installed:
        raise PeerUnavailable(f"the OpenSpiel peer was built against open_spiel {built}, but {installed} is "
                              f"installed; {REBUILD}")
    return lib


class OpenSpielMCTS:
    """pyspiel.MCTSBot self-play with a C++ trivial or random-rollout evaluator."""

    def __init__(self):
        lib = load_library()
        self._fn = lib.azero_openspiel_mcts
        self._fn.restype = ctypes.c_double
        self._fn.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                             ctypes.POINTER(ctypes.c_longlong)]

    def run(self, game: str, *, simulations: int, moves: int, evaluator: int = TRIVIAL,
            seed: int = 0) -> tuple[int, float]:
        """Play `moves` moves at `simulations` each; return (simulations run, seconds)."""
        total = ctypes.c_longlong(0)
        seconds = self._fn(game.encode(), simulations, moves, evaluator, seed, ctypes.byref(total))
        return int(total.value), float(seconds)
