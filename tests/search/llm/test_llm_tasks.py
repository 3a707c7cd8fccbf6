"""Tasks: verifiers (exact on known answers, 0 and never an exception on malformed text),
seeded generators, disjoint splits, the vocabulary."""

import numpy as np
import pytest

from azero.search.llm.tasks import (BOS, EOS, NEWLINE, VOCAB_SIZE, Countdown, decode_tokens, encode_text,
                                    make_task)


def _problem(task, numbers, target):
    # Build a problem by hand through the generator's own constructor path.
    from azero.search.llm.tasks import Problem

    key = ",".join(map(str, sorted(numbers))) + f":{target}"
    prompt = [BOS] + encode_text(",".join(map(str, numbers)) + f":{target}\n")
    return Problem(key=key, prompt=tuple(prompt), numbers=tuple(numbers), target=target)


@pytest.mark.parametrize("text, error", [
    ("7-5=2\n2*4=8", "number not available"),   # 4 is not a given number
    ("7-5=2\n3*2=6", "misses the target"),      # reaches 6, not the target 8
    ("5+3=8\n8*1=8", "number not available"),   # 1 is not given
    ("7-3=4\n5+4=9", "misses the target"),      # wrong target
    ("5*3=15\n15-7=8", ""),
    ("3*5=15\n15-7=8", ""),                     # operand order is free
    ("7+5=12\n12-3=9", "misses the target"),    # 9 != 8
    ("7-5=2\n2+3=5", "misses the target"),
    ("7-5=3\n3+5=8", "arithmetic"),             # wrong arithmetic
    ("5*3=15\n15-7=8\n", "malformed"),          # a third (empty) line
    ("5*3=15", "malformed"),                     # unfinished
    ("5*3=15\n15-7=08", "malformed"),            # leading zero
    ("15-7=8\n5*3=15", "number not available"),  # uses 15 before it exists
    ("7/3=2\n2+6=8", "arithmetic"),              # inexact division
])
def test_countdown_verifier_known_answers(countdown, text, error):
    p = _problem(countdown, (3, 5, 7), 8)
    assert countdown.first_error(p, text) == error
    assert countdown.verify(p, text) == (0.0 if error else 1.0)


def test_countdown_rejects_zero_and_negative_intermediates(countdown):
    p = _problem(countdown, (4, 4, 9), 9)
    assert countdown.verify(p, "4-4=0\n9+0=9") == 0.0   # results must be positive
    assert countdown.verify(p, "4/4=1\n9*1=9") == 1.0


def test_every_generated_solution_verifies(countdown, arith):
    for task in (countdown, arith, make_task("countdown4")):
        for p in task.problems("train", 40, seed=3):
            sols = task.solutions(p)
            assert sols, p
            for s in sols:
                assert task.verify(p, s) == 1.0, (p, s)
                assert task.verify_tokens(p, encode_text(s) + [EOS]) == 1.0


def test_malformed_outputs_score_zero_and_never_raise(countdown, arith):
    rng = np.random.default_rng(0)
    for task in (countdown, arith):
        problems = task.problems("test", 5, seed=1)
        for trial in range(3000):
            p = problems[trial % 5]
            n = int(rng.integers(0, 40))
            tokens = rng.integers(0, VOCAB_SIZE, size=n).tolist()    # specials included
            r = task.verify_tokens(p, tokens)
            assert r in (0.0, 1.0)
        for junk in ["", "\n", "=", "1+1=", "+++", "9" * 400, "1/0=1\n1+1=2", "=8", "3*5=15\n15-7=8=8",
                     "99999999999999999999*9=1\n1+1=2", "\n\n\n", "5*3=15\n\n15-7=8"]:
            assert task.verify(p, junk) == 0.0
        assert task.verify(p, None) == 0.0  # type: ignore[arg-type]
        assert task.answer_key(p, "garbage") == ""


def test_arith_verifier_reads_the_final_number(arith):
    p = arith.problems("test", 1, seed=0)[0]
    a, b, c = p.numbers
    assert arith.verify(p, f"{a}*{b}={a * b}\n{a * b}+{c}={a * b + c}") == 1.0
    assert arith.verify(p, f"{a}*{b}=1\n1+{c}={a * b + c}") == 1.0      # only the answer counts
    assert arith.verify(p, f"{a}*{b}={a * b}\n{a * b}+{c}={a * b + c + 1}") == 0.0
    assert not arith.self_checkable and Countdown().self_checkable


def test_generators_are_seeded_and_splits_disjoint(countdown, arith):
    for task in (countdown, arith):
        a = task.problems("test", 50, seed=7)
        b = task.problems("test", 50, seed=7)
        c = task.problems("test", 50, seed=8)
        assert [p.key for p in a] == [p.key for p in b]
        assert [p.key for p in a] != [p.key for p in c]
        assert len({p.key for p in a}) == 50
        train = {p.key for p in task.problems("train", 400, seed=7, distinct=False)}
        value = {p.key for p in task.problems("value", 100, seed=7, distinct=False)}
        test = {p.key for p in a + c}
        assert not (train & test) and not (value & test) and not (train & value)
        assert all(task.split_of(p) == "test" for p in a)
    with pytest.raises(ValueError):
        countdown.problems("valid", 3, seed=0)


def test_countdown_problems_are_solvable_and_in_range(countdown):
    for p in countdown.problems("train", 100, seed=0):
        assert len(p.numbers) == 3 and all(1 <= x <= countdown.max_number for x in p.numbers)
        assert 1 <= p.target <= countdown.max_target
        assert decode_tokens(p.prompt) == ",".join(map(str, p.numbers)) + f":{p.target}\n"


def test_vocabulary_roundtrip_and_answer_keys(countdown):
    text = "12*3=36\n36/4=9"
    assert decode_tokens(encode_text(text)) == text
    assert decode_tokens(encode_text(text) + [EOS] + encode_text("1")) == text
    assert NEWLINE == encode_text("\n")[0]
    with pytest.raises(ValueError):
        encode_text("a")
    p = _problem(countdown, (3, 5, 7), 8)
    assert countdown.answer_key(p, "5*3=15\n15-7=8") == countdown.answer_key(p, "3*5=15\n15-7=8")
    assert countdown.answer_key(p, "5*3=15\n15-7=8") != countdown.answer_key(p, "7-3=4\n4+5=9")


def test_finished_rule(countdown):
    assert countdown.finished(3, 0, EOS)
    assert countdown.finished(8, countdown.max_steps, NEWLINE)
    assert countdown.finished(countdown.max_new_tokens, 0, 5)
    assert not countdown.finished(3, 1, NEWLINE)


def test_game24_has_every_solvable_problem_in_a_fixed_split():
    from azero.search.llm.tasks import SPLITS, make_task

    task = make_task("game24")
    sizes = {s: len(task.all_problems(s)) for s in SPLITS}
    assert sum(sizes.values()) == 1346 and sizes["test"] == 500
    keys = {s: {p.key for p in task.all_problems(s)} for s in SPLITS}
    assert not (keys["test"] & keys["train"]) and not (keys["test"] & keys["value"])
    assert task.all_problems("test") == make_task("game24").all_problems("test")  # the split is fixed
    for p in task.all_problems("test")[:50]:
        assert task.split_of(p) == "test" and p.target == 24
        assert all(task.verify(p, s) == 1.0 for s in task.solutions(p)) and task.solutions(p)
    assert "3,3,8,8:24" not in set().union(*keys.values())  # only through a fraction: 8/(3-8/3)


def test_game24_draws_seeded_distinct_problems_and_verifies_exactly():
    from azero.search.llm.tasks import make_task

    task = make_task("game24")
    a, b = task.problems("test", 500, seed=1), task.problems("test", 500, seed=1)
    assert [p.prompt for p in a] == [p.prompt for p in b] and len({p.key for p in a}) == 500
    assert [p.key for p in task.problems("test", 20, seed=2)] != [p.key for p in a[:20]]
    with pytest.raises(ValueError, match="500 problems"):
        task.problems("test", 501, seed=0)
    p = task.all_problems("test")[0]
    good = task.solutions(p)[0]
    assert task.verify(p, good) == 1.0
    assert task.verify(p, good.replace("=24", "=25")) == 0.0
    assert task.verify(p, good.split("\n")[0]) == 0.0  # one line is not an answer
    assert task.answer_key(p, good) == task.answer_key(p, good)
