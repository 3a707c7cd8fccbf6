"""Benchmarks: azero and a peer measured side by side in one run, with ratios."""
