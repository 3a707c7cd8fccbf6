"""Evaluation: matches, ratings and reports (the players themselves live in azero.agents).

    arena.py        many games between two players at once: openings, results, game files
    tournament.py   resumable round robins and gauntlets of player specs
    elo.py          maximum-likelihood Elo with intervals; elo_curve.py: Elo against a run's clock
    compare.py      the test-time compute curve: one network at each search budget
    c4accuracy.py   connect four against the perfect solver; c4curve.py: over a run's checkpoints
    analyze.py      `azero analyze`: positions from stdin, one search result per line
    report.py       a run's static HTML report; training_plot.py: its loss curves
    stats.py        the Wilson interval, once for the whole project
"""
