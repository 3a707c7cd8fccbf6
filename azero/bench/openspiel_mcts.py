"""OpenSpiel's C++ MCTSBot as a benchmark peer.

The C++ shim (openspiel_mcts.cc beside this file) is compiled on first use against the
headers that ship in the open_spiel wheel and linked against pyspiel.so; the
result is cached under ~/.cache/azero keyed by the source and pyspiel.so, so
later runs start at once. Needs a C++17 compiler (g++).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "openspiel_mcts.cc"
TRIVIAL, RANDOM_ROLLOUT = 0, 1


class PeerBuildError(RuntimeError):
    """The OpenSpiel peer could not be compiled (message says why)."""


def _site_packages() -> Path:
    import pyspiel

    return Path(pyspiel.__file__).resolve().parent


def build_library(cache_dir: Path | None = None) -> Path:
    site = _site_packages()
    pyspiel_so = site / Path(__import__("pyspiel").__file__).name
    key = hashlib.sha256(SOURCE.read_bytes() + str(pyspiel_so.stat().st_mtime_ns).encode()).hexdigest()[:16]
    cache_dir = cache_dir or Path(os.path.expanduser("~/.cache/azero"))
    out = cache_dir / f"openspiel_mcts_{key}{sysconfig.get_config_var('SHLIB_SUFFIX') or '.so'}"
    if out.exists():
        return out
    cxx = shutil.which(os.environ.get("CXX", "g++"))
    if cxx is None:
        raise PeerBuildError("no C++ compiler found (set CXX or install g++) to build the OpenSpiel peer")
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.so")
    cmd = [cxx, "-O2", "-std=c++17", "-shared", "-fPIC",
           f"-I{site}", f"-I{site / 'open_spiel' / 'abseil-cpp'}", f"-I{site / 'open_spiel' / 'json' / 'include'}",
           str(SOURCE), "-o", str(tmp), str(pyspiel_so), f"-Wl,-rpath,{site}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise PeerBuildError(f"building the OpenSpiel MCTS peer failed:\n{' '.join(cmd)}\n{r.stderr[-3000:]}")
    os.replace(tmp, out)  # atomic: a concurrent run never loads a half-written library
    return out


class OpenSpielMCTS:
    """pyspiel.MCTSBot self-play with a C++ trivial or random-rollout evaluator."""

    def __init__(self, cache_dir: Path | None = None):
        import pyspiel  # noqa: F401  (loads pyspiel.so before the shim that links to it)

        lib = ctypes.CDLL(str(build_library(cache_dir)))
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
