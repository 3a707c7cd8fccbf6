"""Solve and ship the test sets `azero c4-accuracy` reads (azero/eval/c4_testsets/): seed 0, 1,000
positions per depth 8/12/16/20. Depth 8 costs about a quarter of an hour on two cores, the rest a few
minutes; each finished depth is written at once, so a stopped run resumes.

    python experiments/c4_testsets.py [--count 1000] [--depths 8,12,16,20] [--workers 2]
"""

import argparse
import os
import sys

from azero.eval.c4accuracy import SHIPPED_DIR, load_test_set


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--depths", default="8,12,16,20")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    for depth in (int(d) for d in args.depths.split(",")):
        ts, path = load_test_set(0, depth, args.count, cache_dir=SHIPPED_DIR, workers=args.workers,
                                 shipped_dir=None, log=lambda m: print(m, file=sys.stderr, flush=True))
        print(f"depth {depth}: {len(ts)} positions ({int((ts.value == 1).sum())} won, "
              f"{int((ts.value == 0).sum())} drawn) in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
