"""Player specs: parsing, errors that name the spec and the accepted forms, and the players they build."""

from __future__ import annotations

import io

import numpy as np
import pytest

from azero.agents.checkpoints import newest_checkpoint
from azero.agents.factory import PlayerFactory, make_player
from azero.agents.human import HumanPlayer
from azero.agents.mcts import MctsPlayer
from azero.agents.simple import RandomPlayer, RawNetworkPlayer
from azero.agents.spec import ACCEPTED_FORMS, parse_player_spec
from azero.agents.gtp_player import find_gnugo
from azero.games import make_game


def test_parse_every_form():
    s = parse_player_spec("mcts:runs/x@200")
    assert (s.kind, s.checkpoint, s.simulations, s.search) == ("mcts", "runs/x", 200, ())
    assert s.name == "mcts:runs/x@200" and s.search_config().algorithm == "puct"
    s = parse_player_spec("mcts:runs/x@32:gumbel:gumbel_num_considered=8:c_init=1.5")
    cfg = s.search_config(seed=3)
    assert (cfg.algorithm, cfg.gumbel_num_considered, cfg.c_init, cfg.seed, cfg.simulations) == ("gumbel", 8, 1.5, 3, 32)
    assert cfg.dirichlet_weight == 0.0  # evaluation play: no root noise
    assert parse_player_spec("mcts:runs/x@800:solver=true").search_config().solver is True
    assert parse_player_spec("mcts:runs/x@800:policy_temperature=1.4").search_config().policy_temperature == 1.4
    s = parse_player_spec("mcts:a@b/ckpt@16")  # the LAST '@' separates the budget
    assert s.checkpoint == "a@b/ckpt" and s.simulations == 16
    s = parse_player_spec("raw:runs/x")
    assert (s.kind, s.checkpoint, s.temperature) == ("raw", "runs/x", 0.0)
    s = parse_player_spec("raw:C:/weird:path:t=0.5")
    assert (s.checkpoint, s.temperature) == ("C:/weird:path", 0.5)
    assert parse_player_spec("random").kind == "random"
    assert parse_player_spec("human").kind == "human"
    s = parse_player_spec('gtp:"gnugo --mode gtp --level 3"')
    assert (s.kind, s.command) == ("gtp", "gnugo --mode gtp --level 3")
    assert parse_player_spec("gtp:gnugo --mode gtp").command == "gnugo --mode gtp"  # the shell ate the quotes
    assert parse_player_spec("gnugo:10").level == 10


@pytest.mark.parametrize("text, problem", [
    ("", "empty"),
    ("alphago", "unknown player"),
    ("chess:3", "unknown player kind 'chess'"),
    ("mcts:runs/x", "CKPT@SIMS"),
    ("mcts:runs/x@many", "not an integer"),
    ("mcts:runs/x@0", ">= 1"),
    ("mcts:runs/x@8:fast", "unknown option 'fast'"),
    ("mcts:runs/x@8:dirichlet_weight=0.3", "unknown search option"),
    ("mcts:runs/x@8:c_init=abc", "not a valid float"),
    ("mcts:runs/x@8:gumbel_num_considered=0", "gumbel_num_considered"),
    ("mcts:runs/x@8:policy_temperature=0", "policy_temperature"),
    ("raw:", "needs a checkpoint"),
    ("raw:x:t=hot", "not a number"),
    ("raw:x:t=-1", ">= 0"),
    ("gtp:", "needs a command"),
    ('gtp:"unclosed', "cannot split"),
    ("gnugo:strong", "not an integer"),
    ("gnugo:11", "0..10"),
    ("openspiel-mcts", "unknown player"),
    ("openspiel-mcts:", "needs SIMS"),
    ("openspiel-mcts:many", "not an integer"),
    ("openspiel-mcts:0", ">= 1"),
    ("openspiel-mcts:100:rollout=2", "unknown openspiel-mcts option 'rollout=2'"),
    ("openspiel-mcts:100:solve", "unknown openspiel-mcts option 'solve'"),
    ("openspiel-mcts:100:rollouts=two", "not an integer"),
    ("openspiel-mcts:100:rollouts=0", ">= 1"),
    ("openspiel-mcts:100:uct_c=big", "not a number"),
    ("openspiel-mcts:100:uct_c=-1", ">= 0"),
    ("openspiel-mcts:100:uct_c=nan", "finite"),
    ("openspiel-mcts:100:rollouts=1:rollouts=2", "given twice"),
])
def test_bad_specs_name_the_spec_and_the_accepted_forms(text, problem):
    with pytest.raises(ValueError) as e:
        parse_player_spec(text)
    message = str(e.value)
    assert problem in message
    assert repr(text.strip()) in message or text == ""
    for form in ACCEPTED_FORMS:
        assert form in message


def test_checkpoint_resolution(ttt_run, tmp_path):
    newest = ttt_run / "checkpoints" / "ckpt_000000002.safetensors"
    assert newest_checkpoint(ttt_run) == newest  # run directory
    assert newest_checkpoint(ttt_run / "checkpoints") == newest  # checkpoints folder
    older = ttt_run / "checkpoints" / "ckpt_000000001.safetensors"
    assert newest_checkpoint(older) == older
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        newest_checkpoint(tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        newest_checkpoint(tmp_path / "nope")


def test_factory_builds_players_and_shares_one_network(ttt_run):
    game = make_game("tictactoe")
    factory = PlayerFactory(game)
    raw = factory.build(f"raw:{ttt_run}", seed=1)
    mcts = factory.build(f"mcts:{ttt_run}@8:gumbel", seed=2)
    rnd = factory.build("random", seed=3)
    assert isinstance(raw, RawNetworkPlayer) and isinstance(mcts, MctsPlayer) and isinstance(rnd, RandomPlayer)
    assert raw.evaluator is mcts.evaluator  # one network per checkpoint file
    assert mcts.config.algorithm == "gumbel" and mcts.config.simulations == 8
    assert raw.name == f"raw:{ttt_run}"
    states = game.new_states(3)
    for p in (raw, mcts, rnd):
        actions = p.act(np.arange(3), states)
        assert actions.shape == (3,) and actions.dtype == np.int32
        assert states.legal_mask()[np.arange(3), actions].all()


def test_padded_search_matches_an_exact_size_search(ttt_run):
    # Padding 3 positions to a batch of 4 (one inactive row) must not change the moves.
    game = make_game("tictactoe")
    factory = PlayerFactory(game)
    states = game.new_states(3)
    states.apply(np.array([0, 4, 8], np.int32))
    padded = factory.build(f"mcts:{ttt_run}@16", seed=0)
    exact = factory.build(f"mcts:{ttt_run}@16", seed=0)
    a = padded.act(np.arange(3), states)
    b = np.concatenate([exact.act(np.arange(1), states.take(np.array([k]))) for k in range(3)])
    assert padded.last_result.visits.shape[0] == 4 and padded.last_result.simulations[3] == 0
    np.testing.assert_array_equal(a, b)


def test_per_call_budgets_and_batches_share_cached_searches():
    # GTP asks one position at a time with the clock's budget; a match asks sub-batches of any size.
    from azero.search.config import play_config
    from azero.search.evaluators import UniformEvaluator

    game = make_game("tictactoe")
    for algorithm in ("puct", "gumbel"):
        player = MctsPlayer(game.spec, UniformEvaluator(), play_config(8, algorithm=algorithm))
        one = game.new_states(1)
        for sims in (8, 20, 5, 20):
            assert int(player.search(one, simulations=sims).simulations[0]) == sims
        for n in (1, 2, 3, 5, 7):
            assert player.act(np.arange(n), game.new_states(n)).shape == (n,)
        assert len(player._searches) <= player.MAX_CACHED


def test_checkpoint_conventions_in_specs(monkeypatch, tmp_path, ttt_run):
    import azero.models as models

    game = make_game("tictactoe")
    factory = PlayerFactory(game)
    assert factory.checkpoint_file("none") is None
    rollouts = factory.build("mcts:none@8", seed=0)  # search on random rollouts
    assert rollouts.act(np.arange(2), game.new_states(2)).shape == (2,)
    monkeypatch.setattr(models, "MODELS_DIR", tmp_path)
    with pytest.raises(ValueError, match="no network is shipped"):
        factory.build("mcts:shipped@8")
    newest = ttt_run / "checkpoints" / "ckpt_000000002.safetensors"
    (tmp_path / "tictactoe.safetensors").write_bytes(newest.read_bytes())
    assert factory.checkpoint_file("shipped") == (tmp_path / "tictactoe.safetensors").resolve()


def test_network_for_another_game_is_refused(c4_run):
    with pytest.raises(ValueError, match="game tictactoe"):
        make_player(f"raw:{c4_run}", make_game("tictactoe"))


def test_gtp_players_are_go_only_and_built_lazily():
    with pytest.raises(ValueError, match="Go only"):
        make_player("gnugo:1", make_game("connect4"))
    if find_gnugo() is None:
        pytest.skip("GNU Go is not installed (apt-get install gnugo)")
    game = make_game("go", board_size=5)
    p = make_player("gnugo:0", game)
    try:
        assert p.name == "gnugo:0"
        p.start(1)
        assert p.act(np.arange(1), game.new_states(1)).shape == (1,)
    finally:
        p.close()
    q = make_player(f'gtp:"{find_gnugo()} --mode gtp --level 0"', game)
    try:
        q.start(1)
        assert q.act(np.arange(1), game.new_states(1))[0] in range(26)
    finally:
        q.close()


def test_human_spec_builds_the_terminal_player():
    # the reader itself is tested with `azero play` (tests/gtp/test_gtp_human.py)
    game = make_game("connect4")
    p = make_player("human", game)
    assert isinstance(p, HumanPlayer)
    assert make_player("human", game).name == "human"
