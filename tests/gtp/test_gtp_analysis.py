"""GTP live analysis: lz-analyze / kata-analyze and their genmove forms, one update at a time through
handle() and streamed through serve()."""

from __future__ import annotations

import queue
import re
import threading

import pytest

from azero.agents.checkpoints import LoadedEvaluator, load_evaluator
from azero.gtp.engine import GtpEngine, serve

INFO = re.compile(r"info move (\S+) (.*?)(?= info move |$| ownership )")


def infos(line: str) -> list[dict]:
    """The info entries of one update line as {field: value} dicts (pv as a list)."""
    out = []
    for move, rest in INFO.findall(line.split(" ownership ")[0]):
        tokens = rest.split()
        fields = {"move": move}
        k = 0
        while k < len(tokens):
            if tokens[k] in ("pv", "pvVisits"):
                end = next((j for j in range(k + 1, len(tokens)) if tokens[j] == "pvVisits"), len(tokens))
                fields[tokens[k]] = tokens[k + 1:end]
                k = end
            else:
                fields[tokens[k]] = tokens[k + 1]
                k += 2
        out.append(fields)
    return out


@pytest.fixture
def headed_engine(headed_checkpoint):
    loaded = load_evaluator(headed_checkpoint, precision="f32", backend="torch")
    return GtpEngine(loaded, simulations=24)


def test_lz_analyze_reports_leela_zero_units(make_engine, ask):
    engine = make_engine(simulations=30)
    ask(engine, "play b e5")
    ok, _, text = ask(engine, "lz-analyze w 10")
    assert ok
    entries = infos(text)
    assert entries and [int(e["order"]) for e in entries] == list(range(len(entries)))
    assert sum(int(e["visits"]) for e in entries) == 30
    for e in entries:
        assert 0 <= int(e["winrate"]) <= 10000 and 0 <= int(e["prior"]) <= 10000 and int(e["lcb"]) >= 0
        assert e["pv"][0] == e["move"] and e["move"] != "E5"
        assert "scoreLead" not in e and "utility" not in e


def test_kata_analyze_floats_scores_and_ownership(headed_engine, ask):
    ok, _, text = ask(headed_engine, "kata-analyze b 10 ownership true pvVisits true maxmoves 3")
    assert ok
    line = text.strip()
    entries = infos(line)
    assert 1 <= len(entries) <= 3
    for e in entries:
        assert 0 <= float(e["winrate"]) <= 1 and 0 <= float(e["prior"]) <= 1
        assert e["scoreLead"] == e["scoreMean"] and "utility" in e
        assert len(e["pvVisits"]) == len(e["pv"]) and int(e["pvVisits"][0]) == int(e["visits"])
    ownership = line.split(" ownership ")[1].split()
    assert len(ownership) == 81 and all(-1 <= float(v) <= 1 for v in ownership)


def test_kata_analyze_without_heads_leaves_scores_and_ownership_out(make_engine, ask):
    ok, _, text = ask(make_engine(simulations=8), "kata-analyze b 10 ownership true")
    assert ok and "ownership" not in text and "scoreLead" not in text and infos(text)


def test_the_tree_grows_across_updates_and_genmove_plays_from_it(make_engine, ask):
    engine = make_engine(simulations=20)
    first = sum(int(e["visits"]) for e in infos(ask(engine, "lz-analyze b 10")[2]))
    again = sum(int(e["visits"]) for e in infos(ask(engine, "lz-analyze b 10")[2]))
    assert first == 20 and again == 20  # the tree already has the budget: nothing more to search
    search = engine.ponder.search
    best = search.moves(0)[0].action
    ok, _, move = ask(engine, "genmove b")
    assert ok and move == engine.board.game.action_to_str(best)
    assert engine.ponder.key != engine._ponder_key(1)  # a new position: the next analysis starts afresh


def test_genmove_forms_stream_then_play_and_commit_the_move(headed_engine, ask):
    ok, _, text = ask(headed_engine, "kata-genmove_analyze b 1")
    lines = text.split("\n")
    assert ok and lines[-1].startswith("play ")
    move = lines[-1].split()[1]
    assert headed_engine.board.history[-1] == (0, headed_engine.board.game.str_to_action(move))
    ok, _, text = ask(headed_engine, "lz-genmove_analyze w 1")
    assert ok and text.split("\n")[-1].startswith("play ") and len(headed_engine.board.history) == 2


@pytest.mark.parametrize("line", ["lz-analyze x", "lz-analyze b 10 foo 3", "lz-analyze b 10 ownership true",
                                  "kata-analyze b 10 ownership maybe", "kata-analyze b 10 maxmoves",
                                  "kata-analyze b -5", "lz-genmove_analyze", "lz-genmove_analyze 10",
                                  f"lz-analyze b {'9' * 40}"])
def test_bad_arguments_get_a_question_mark(make_engine, ask, line):
    ok, _, text = ask(make_engine(), line)
    assert not ok and text.startswith("syntax error")


def test_the_commands_are_listed_and_known(make_engine, ask):
    engine = make_engine()
    listed = ask(engine, "list_commands")[2].split("\n")
    for name in ("lz-analyze", "kata-analyze", "lz-genmove_analyze", "kata-genmove_analyze"):
        assert name in listed and ask(engine, f"known_command {name}")[2] == "true"


class LineFeed:
    """A blocking readline() fed by the test, like a controller's pipe."""

    def __init__(self):
        self.lines: queue.Queue = queue.Queue()

    def readline(self):
        return self.lines.get(timeout=60)


class Collect:
    def __init__(self):
        self.text = ""
        self.changed = threading.Condition()

    def write(self, s):
        with self.changed:
            self.text += s
            self.changed.notify_all()

    def flush(self):
        pass

    def wait_for(self, predicate):
        with self.changed:
            assert self.changed.wait_for(lambda: predicate(self.text), timeout=60), self.text[-500:]


def test_serve_streams_until_the_next_command_ends_the_response():
    from azero.search.evaluators import UniformEvaluator

    engine = GtpEngine(LoadedEvaluator(UniformEvaluator(), "uniform (test)"), simulations=8)
    feed, out = LineFeed(), Collect()
    server = threading.Thread(target=serve, args=(engine, feed, out), daemon=True)
    server.start()
    feed.lines.put("7 lz-analyze b 1\n")
    out.wait_for(lambda t: t.count("info move") >= 3)  # updates keep coming while nothing is sent
    feed.lines.put("name\n")
    out.wait_for(lambda t: t.endswith("= azero\n\n"))
    feed.lines.put("kata-genmove_analyze w 1\n")
    out.wait_for(lambda t: "play " in t and t.endswith("\n\n"))
    feed.lines.put("quit\n")
    server.join(timeout=60)
    assert not server.is_alive()
    head, rest = out.text.split("\n", 1)
    assert head == "=7"
    stream, after = rest.split("\n\n", 1)
    assert all(line.startswith("info move ") for line in stream.split("\n"))
    assert after.startswith("= azero\n\n=\n")
    assert engine.board.history and engine.board.history[-1][0] == 1
