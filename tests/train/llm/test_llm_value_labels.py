"""The value head's labels: outcome (every prefix gets the rollout's reward) or process (a wrong
rollout's prefixes are 1 until the line that breaks the task's rules, as a PRM's step labels)."""

import numpy as np
import pytest

from azero.search.llm.tasks import EOS, Problem, encode_text, make_task
from azero.search.llm.vocab import CHAR_VOCAB
from azero.train.llm.train import TrainConfig, _prefix_labels, label_cut, roc_auc, train_value


def _countdown_problem(task, numbers, target):
    return Problem(key=f"{','.join(map(str, sorted(numbers)))}:{target}",
                   prompt=tuple(encode_text(f"{','.join(map(str, numbers))}:{target}\n")), numbers=numbers,
                   target=target)


@pytest.mark.parametrize("text, line", [
    ("3/9=3\n1*3=7", 0),      # the first line's arithmetic is wrong
    ("1*3=3\n3*3=7", 1),      # the second uses 3 twice
    ("1+3=4\n4+9=13", 1),     # right arithmetic, wrong target: the last line
    ("1*9=9\n9-3=6", None),   # correct
    ("1*9=9", 0),             # stopped short
    ("1*9=9\n9-3=6\n6", 2),   # a line too many
])
def test_broken_line_names_the_first_line_that_makes_an_answer_wrong(text, line):
    task = make_task("countdown")
    p = _countdown_problem(task, (1, 3, 9), 6)
    assert task.broken_line(p, text) == line
    assert (task.verify(p, text) == 1.0) == (line is None)


def test_label_cut_outcome_and_process():
    task = make_task("countdown")
    p = _countdown_problem(task, (1, 3, 9), 7)
    wrong = encode_text("3/9=3\n1*3=7") + [EOS]  # 12 tokens: the first line and its newline are 6
    assert label_cut(task, p, wrong, 0.0, CHAR_VOCAB, "outcome") == 0
    assert label_cut(task, p, wrong, 0.0, CHAR_VOCAB, "process") == 6
    # prefixes of 0..5 answer tokens hold the unfinished first line: 1; from its newline on: 0
    assert _prefix_labels(6, len(wrong) + 1).tolist() == [1.0] * 6 + [0.0] * 7
    late = encode_text("9-3=6\n6+1=8") + [EOS]  # wrong only in its last line: 0 at the finished answer only
    assert label_cut(task, p, late, 0.0, CHAR_VOCAB, "process") == len(late)
    assert _prefix_labels(len(late), len(late) + 1)[-1] == 0.0
    right = encode_text("9-3=6\n6+1=7") + [EOS]
    for labels in ("outcome", "process"):
        assert label_cut(task, p, right, 1.0, CHAR_VOCAB, labels) == len(right) + 1
    # a task that cannot tell which line broke falls back to the outcome
    sums = make_task("sum3")
    q = sums.problems("test", 1, seed=0)[0]
    assert label_cut(sums, q, encode_text("1+1=3\n3+1=4") + [EOS], 0.0, CHAR_VOCAB, "process") == 0


def test_process_labels_train_a_value_head(model):
    task = make_task("countdown")
    cfg = TrainConfig(value_problems=16, rollouts=2, value_steps=5, value_mode="head", seed=1,
                      value_labels="process")
    summary = train_value(model, task, cfg, log=lambda s: None)
    assert summary["labels"] == "process" and np.isfinite(summary["train_bce"])
    with pytest.raises(ValueError, match="value_labels must be one of"):
        train_value(model, task, TrainConfig(value_problems=4, value_steps=1, value_labels="steps"),
                    log=lambda s: None)


def test_roc_auc_counts_pairs_with_ties_half():
    rng = np.random.default_rng(0)
    scores, labels = rng.integers(0, 5, 60).astype(float), rng.integers(0, 2, 60).astype(float)
    pos, neg = scores[labels == 1], scores[labels == 0]
    pairs = np.mean([1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg])
    assert roc_auc(scores, labels) == pytest.approx(pairs)
    assert roc_auc(np.array([0.9, 0.1]), np.array([1.0, 0.0])) == 1.0
    assert np.isnan(roc_auc(np.array([0.3, 0.4]), np.array([1.0, 1.0])))  # one class: undefined
