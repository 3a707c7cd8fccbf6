"""Solve every connect-four opening of 1 and 2 moves with azero's perfect solver and write the
tables azero ships (azero/eval/c4_openings_<plies>.json), which `azero c4-openings` reads instead
of solving them again. Mirrored openings are solved once. Slow: one to two hours of one core for
two moves. Every value is saved as it is solved (c4_openings_<plies>.partial.json beside the
table), so running it again after a kill resumes; the table is written when all are solved.

    python experiments/c4_openings.py [PLIES ...]      (default: 1 2)
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from azero.eval.c4openings import solve_openings, table_file, write  # noqa: E402

for plies in [int(x) for x in sys.argv[1:]] or [1, 2]:
    if table_file(plies).is_file():
        print(f"{table_file(plies)} exists; remove it to solve again", flush=True)
        continue
    t0 = time.perf_counter()
    partial = table_file(plies).with_suffix(".partial.json")
    # 2**26 entries (~400 MB): near the empty board the default 2**23 table keeps re-searching
    values = solve_openings(plies, log=lambda m: print(m, flush=True), progress=partial, tt_entries=1 << 26)
    path = write({"plies": plies, "view": "player to move", "values": values,
                  "solve_seconds": round(time.perf_counter() - t0)}, table_file(plies))
    partial.unlink(missing_ok=True)
    print(f"wrote {path}", flush=True)
