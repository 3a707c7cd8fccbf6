"""Go Text Protocol (GTP v2): azero as a GTP engine, and the protocol's wire format.

    protocol.py    parsing command lines and formatting responses (both directions)
    board.py       the engine's game record: a batch-of-one GoStates plus the GTP move history
    timecontrol.py time_settings / time_left -> simulations per move
    cleanup.py     kgs-genmove_cleanup: which moves still matter once the game is decided
    options.py     the command-line options of `azero gtp` / `python -m azero.gtp`
    engine.py      GtpEngine (one command line -> one response) and the stdin/stdout loop

The engine's moves come from the one MCTS player (azero.agents.mcts) on the
network --checkpoint names (azero.agents.checkpoints). The other direction,
driving any GTP engine (GNU Go, azero itself) as a match player, is
azero.agents.gtp_player.
"""
