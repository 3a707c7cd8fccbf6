"""Build the Cython extensions and the OpenSpiel peer; all metadata lives in pyproject.toml.

Every extension is listed explicitly. Bounds checks are off in the normal build
and on when AZERO_DEBUG=1 is set at build time (`AZERO_DEBUG=1 pip install -e .`),
which also compiles without optimisation so gdb and sanitizers are useful.
"""

import glob
import importlib.metadata
import importlib.util
import os
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("AZERO_DEBUG", "0") == "1"

# (module name, source file). Sources live in the mapped folders (games/ -> azero.games).
EXTENSIONS = [
    ("azero.games._go", "games/_go.pyx"),
    ("azero.games._connect4", "games/_connect4.pyx"),
    ("azero.games._tictactoe", "games/_tictactoe.pyx"),
    ("azero.games._c4solver", "games/_c4solver.pyx"),
    ("azero.search._mcts", "search/_mcts.pyx"),
]


def _extensions():
    compile_args = ["-O0", "-g"] if DEBUG else ["-O3"]
    exts = []
    # AZERO_ONLY=_go builds just the extensions whose source path contains "_go"
    # (handy while iterating on one engine); the normal build takes all of them.
    only = os.environ.get("AZERO_ONLY", "")
    for name, source in EXTENSIONS:
        if not os.path.exists(source) or only not in source:
            continue
        # The engines are split by concept into .pxi includes and C headers next to their .pyx (for
        # example search/_mcts_*.pxi, search/_mcts_simd.h): editing one rebuilds its folder's modules.
        folder = os.path.dirname(source)
        parts = sorted(glob.glob(os.path.join(folder, "*.pxi")) + glob.glob(os.path.join(folder, "*.h")))
        exts.append(
            Extension(
                name,
                [source],
                include_dirs=[np.get_include(), folder],
                depends=parts,
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                extra_compile_args=compile_args,
            )
        )
    return [*cythonize(
        exts,
        # games/leaf_api.pxd is cimported as `leaf_api` by the games and the search core (see its docstring).
        include_path=["games"],
        language_level=3,
        compiler_directives={"boundscheck": DEBUG, "initializedcheck": DEBUG},
        annotate=DEBUG,
    ), *_openspiel_peer(only)]


PEER_SOURCE = "azero/bench/openspiel_mcts.cc"


def _openspiel_peer(only: str) -> list[Extension]:
    """The C++ peer of `azero bench mcts`: OpenSpiel's MCTSBot with a C++ evaluator
    (azero/bench/openspiel_mcts.cc), a plain shared library that azero/bench/openspiel_mcts.py
    loads through ctypes. It compiles against the C++ headers in the open_spiel wheel of the build
    environment (pyproject's build requirements) and resolves OpenSpiel's symbols in pyspiel.so
    when it is loaded. It is optional: where it cannot be built (no open_spiel headers, no C++
    compiler, a failed compile) the build says why and goes on, and the bench says so at run time."""
    if only not in PEER_SOURCE:
        return []
    spec = importlib.util.find_spec("pyspiel")
    if spec is None or spec.origin is None:
        print(f"skipping the OpenSpiel peer ({PEER_SOURCE}): open_spiel is not installed in the build environment")
        return []
    site = Path(spec.origin).parent
    if not (site / "open_spiel" / "algorithms" / "mcts.h").is_file():
        print(f"skipping the OpenSpiel peer ({PEER_SOURCE}): the open_spiel package in {site} has no C++ headers")
        return []
    version = importlib.metadata.version("open_spiel")
    return [Extension(
        "azero.bench._openspiel_mcts",
        [PEER_SOURCE],
        language="c++",
        include_dirs=[str(site), str(site / "open_spiel" / "abseil-cpp"), str(site / "open_spiel" / "json" / "include")],
        # The headers' version, checked against the installed pyspiel when the library is loaded:
        # the inline code compiled here must match the pyspiel.so it links to.
        define_macros=[("AZERO_OPENSPIEL_VERSION", f'"{version}"')],
        extra_compile_args=["-std=c++17", *(["-O0", "-g"] if DEBUG else ["-O2"])],
        optional=True,  # a failed compile is reported and skipped, not fatal
    )]


setup(ext_modules=_extensions())
