"""Everything that chooses moves, behind one protocol (player.py).

    player.py           the Player protocol every match, tournament, GTP engine and human game uses
    simple.py           random moves, the raw network's policy
    mcts.py             the one MCTS player: an evaluator plus search, any batch, a per-call budget
    checkpoints.py      the one checkpoint resolver (--checkpoint's convention) and the one loader
                        from a checkpoint to an evaluator
    spec.py             player spec strings ('mcts:CKPT@200', 'gnugo:1', ...) and their parser
    factory.py          players from specs, sharing one evaluator per network
    passing.py          when to answer the opponent's pass with a pass (Go)
    gtp_player.py       any GTP engine (GNU Go, KataGo, azero itself) as a player
    openspiel_player.py OpenSpiel's C++ MCTS as a player
    human.py            a person at the terminal as a player, and the move reader `azero play` uses
"""
