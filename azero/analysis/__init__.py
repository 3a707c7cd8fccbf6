"""Position analysis for clients: a search that grows in steps over a batch of positions (growing.py),
KataGo's JSON analysis protocol (katago.py) and its engine loop (engine.py). GTP's lz-analyze /
kata-analyze (azero/gtp/analysis.py) use the same growing search."""
