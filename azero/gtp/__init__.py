"""Go Text Protocol (GTP v2): azero as a GTP engine, and the protocol's wire format.

    protocol.py    parsing command lines and formatting responses (both directions)
    board.py       the engine's game record: a batch-of-one GoStates plus the GTP move history
    timecontrol.py time_settings / time_left -> simulations per move
    cleanup.py     kgs-genmove_cleanup: which moves still matter once the game is decided
    agent.py       evaluator (checkpoint or random rollouts) + MCTS for one position
    engine.py      GtpEngine (one command line -> one response) and the stdin/stdout loop

The other direction, driving any GTP engine (GNU Go, azero itself) as a match
player, is azero.eval.gtp_player.
"""
