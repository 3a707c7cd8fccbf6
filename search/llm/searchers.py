"""Decoding by tree search: the project's MCTS core (PUCT or Gumbel root) run over LLMGame, one
search per move, until every answer is finished.

    cfg = tree_search_config(level="token", algorithm="puct", simulations=16)
    answers = mcts_decode(engine, task, problems, cfg)

TreeSearchConfig holds what makes the LM a game (level, children, priors, values) and embeds the
core's own SearchConfig for how each move is searched. Per move the search runs
`search.simulations` simulations from the current prefix and plays the search's choice; by
default the deterministic one (PUCT: most visited; Gumbel: the paper's argmax among the most
visited), with root noise off (dirichlet_weight 0): test-time search, not self-play. PUCT keeps
the chosen child's subtree (tree reuse); the Gumbel root needs a fresh tree each move, and the
engine's prefix cache makes the re-expansion of already-computed prefixes free of model compute.

Budgets: `simulations_for_budget` turns a generated-token budget per problem into simulations per
move from the task's typical answer shape; what a run actually spent is measured by the engine's
meter and reported next to the nominal budget.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

import numpy as np

from azero.games.base import NO_ACTION
from azero.search.config import SearchConfig
from azero.search.llm.game import LLMEvaluator, LLMGame
from azero.search.llm.protocol import PrefixEngine
from azero.search.llm.tasks import Problem, Task
from azero.search.mcts import MCTS

SEARCH_FIELDS = frozenset(f.name for f in dataclasses.fields(SearchConfig))


def _test_time_search() -> SearchConfig:
    # Test-time search, not self-play: no root noise, the most visited move.
    return SearchConfig(simulations=16, dirichlet_weight=0.0, temperature=0.0)


@dataclasses.dataclass
class TreeSearchConfig:
    """One tree-search decoding method: how the LM becomes a game, and how each move is searched."""

    level: str = "token"
    """'token' (children = top_k next tokens) or 'step' (children = num_candidates sampled steps)."""
    top_k: int = 4
    """Token level: legal children per node."""
    num_candidates: int = 4
    """Step level: sampled candidate steps per node."""
    prior_temperature: float = 1.0
    """Priors = softmax(log p / prior_temperature) over the legal children."""
    step_temperature: float = 1.0
    """Step level: sampling temperature of the candidate steps."""
    terminal_value: str = "value_head"
    """'value_head' (verifier-free) or 'verifier' (self-checkable tasks only)."""
    value_source: str = "value_head"
    """Non-terminal leaves: 'value_head', 'rollout' (a verified sampled completion) or
    'rollout_value' (a sampled completion valued by the value head: verifier-free)."""
    search: SearchConfig = dataclasses.field(default_factory=_test_time_search)
    """The search core's config (16 simulations per move, no Dirichlet noise, the most visited
    move); search.seed also seeds the step candidates. tree_reuse is set by mcts_decode: PUCT
    keeps the chosen child's subtree, the Gumbel root needs a fresh tree."""

    def get(self, name: str):
        """The field `name` of this config or of its SearchConfig (ValueError if neither has it)."""
        if name in SEARCH_FIELDS:
            return getattr(self.search, name)
        if name in _OWN_FIELDS:
            return getattr(self, name)
        raise ValueError(f"TreeSearchConfig has no field {name!r}")

    def replace(self, **fields) -> "TreeSearchConfig":
        """A copy with `fields` set, each by name on this config or on its SearchConfig (validated)."""
        for name in fields:
            self.get(name)
        search = {k: v for k, v in fields.items() if k in SEARCH_FIELDS}
        own = {k: v for k, v in fields.items() if k not in SEARCH_FIELDS}
        return dataclasses.replace(self, search=dataclasses.replace(self.search, **search), **own)


_OWN_FIELDS = frozenset(f.name for f in dataclasses.fields(TreeSearchConfig)) - {"search"}


def tree_search_config(**fields) -> TreeSearchConfig:
    """TreeSearchConfig().replace(**fields): e.g. tree_search_config(level="step", algorithm="gumbel",
    simulations=8)."""
    return TreeSearchConfig().replace(**fields)


def simulations_for_budget(task: Task, budget: int, cfg: TreeSearchConfig, *, answer_tokens: float,
                           step_tokens: float) -> int:
    """Simulations per move so that a whole answer spends about `budget` generated tokens.

    Token level: one new prefix (one token) per simulation, about answer_tokens moves.
    Step level: num_candidates sampled steps (step_tokens each) per simulation, max_steps moves.
    Rollout values add one completion per simulation, about half an answer from a leaf inside it.
    """
    if cfg.level == "token":
        per_answer = answer_tokens
    else:
        per_answer = task.max_steps * cfg.num_candidates * step_tokens
    if cfg.value_source != "value_head":
        moves = answer_tokens if cfg.level == "token" else task.max_steps
        per_answer += moves * answer_tokens / 2
    return max(1, int(budget // max(per_answer, 1.0)))


def candidates_for_budget(task: Task, budget: int, cfg: TreeSearchConfig, *, step_tokens: float) -> int:
    """Step level: sampled candidates per node so that a `budget` can be spent.

    With k candidates per node a step-level tree is only k + k^2 + ... nodes deep into the few
    steps of an answer, so a fixed k saturates: past a few hundred tokens further simulations
    revisit the same nodes and generate nothing. Growing k and the simulations per move together
    (k = sqrt(budget / (max_steps x step_tokens)), simulations = k) spends the budget on both
    width and depth. Never below cfg.num_candidates.
    """
    k = int(round(math.sqrt(budget / max(task.max_steps * step_tokens, 1.0))))
    return max(cfg.num_candidates, k)


def mcts_decode(engine: PrefixEngine, task: Task, problems: Sequence[Problem], cfg: TreeSearchConfig) -> list[list[int]]:
    """The answer (generated tokens) of every problem, all problems searched in lockstep."""
    return mcts_search(engine, task, problems, cfg)[0]


Final = tuple[list[int], list[float]]
"""A finished answer and its step values (here one: the value head's P(correct) at its end)."""


def mcts_search(engine: PrefixEngine, task: Task, problems: Sequence[Problem],
                cfg: TreeSearchConfig) -> tuple[list[list[int]], list[list[Final]]]:
    """(the answer each problem's moves reached, every finished answer its searches reached).

    The second list is what a vote over the tree reads: each finished answer as often as the
    searches arrived at it (a simulation ending there, or a rollout: the tree's own preference, as
    the frequency of i.i.d. samples is the vote's), grouped in the order first reached, the path's
    own answer included, with the value head's P(correct) (never the verifier's reward: a test-time
    vote must not see the answer). Reading it spends nothing: the searches evaluated those leaves
    already (the path's end, if a move reached it unevaluated, costs one value lookup)."""
    game = LLMGame(engine, task, level=cfg.level, top_k=cfg.top_k, num_candidates=cfg.num_candidates,
                   prior_temperature=cfg.prior_temperature, step_temperature=cfg.step_temperature,
                   terminal_value=cfg.terminal_value, value_source=cfg.value_source, seed=cfg.search.seed)
    states = game.states(problems)
    search_cfg = dataclasses.replace(cfg.search, tree_reuse=cfg.search.algorithm == "puct")
    search = MCTS(game.spec, LLMEvaluator(game), search_cfg, batch_size=len(problems))
    for _ in range(game.spec.max_moves + 1):
        if states.terminal().all():
            break
        result = search.run(states)
        actions = search.choose_actions(result)
        actions[states.terminal()] = NO_ACTION
        states.apply(actions)
        search.advance(actions)
    done = np.flatnonzero(states.terminal())
    if done.size:
        states._record_finished(done, None)
    finals = [[(toks, [v]) for toks, v, count in game.finished.get(p.key, {}).values() for _ in range(count)]
              for p in problems]
    return [states.answer(b) for b in range(len(problems))], finals
