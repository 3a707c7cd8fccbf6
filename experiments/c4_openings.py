"""Solve every connect-four opening of 1 and 2 moves with azero's perfect solver and write the
tables azero ships (azero/eval/c4_openings_<plies>.json), which `azero c4-openings` reads instead
of solving them again. Mirrored openings are solved once. Slow: about an hour on one core.

    python experiments/c4_openings.py [PLIES ...]      (default: 1 2)
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from azero.eval.c4openings import solve_openings, table_file, write  # noqa: E402

for plies in [int(x) for x in sys.argv[1:]] or [1, 2]:
    t0 = time.perf_counter()
    values = solve_openings(plies, log=lambda m: print(m, flush=True))
    path = write({"plies": plies, "view": "player to move", "values": values,
                  "solve_seconds": round(time.perf_counter() - t0)}, table_file(plies))
    print(f"wrote {path}", flush=True)
