"""Decoding by tree search: the project's MCTS core (PUCT or Gumbel root) run over LLMGame, one
search per move, until every answer is finished.

    answers = mcts_decode(engine, task, problems, level="token", algorithm="puct", simulations=16)

Per move the search runs `simulations` simulations from the current prefix and plays the search's
deterministic choice (PUCT: most visited; Gumbel: the paper's argmax among the most visited).
PUCT keeps the chosen child's subtree (tree reuse); the Gumbel root needs a fresh tree each move,
and the engine's prefix cache makes the re-expansion of already-computed prefixes free of model
compute. Root noise is off (dirichlet_weight 0): test-time search, not self-play.

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
from azero.search.llm.engine import LMEngine
from azero.search.llm.game import LLMEvaluator, LLMGame
from azero.search.llm.tasks import Problem, Task
from azero.search.mcts import MCTS


@dataclasses.dataclass
class TreeSearchConfig:
    """One tree-search decoding method."""

    level: str = "token"
    """'token' (children = top_k next tokens) or 'step' (children = num_candidates sampled steps)."""
    algorithm: str = "puct"
    """'puct' or 'gumbel' (SearchConfig.algorithm)."""
    simulations: int = 16
    """Simulations per move."""
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
    """Non-terminal leaves: 'value_head' or 'rollout' (a verified sampled completion)."""
    c_init: float = 1.25
    """PUCT exploration constant."""
    gumbel_num_considered: int = 16
    """Gumbel root: m (capped by the legal children)."""
    gumbel_c_scale: float = 1.0
    """Gumbel: c_scale of sigma(q) (SearchConfig.gumbel_c_scale)."""
    gumbel_scale: float = 1.0
    """Gumbel: scale of the root's Gumbel noise (SearchConfig.gumbel_scale; 0 = deterministic)."""
    gumbel_rescale_q: bool = True
    """Gumbel: min-max rescaling of completed Q (SearchConfig.gumbel_rescale_q)."""
    leaves_per_game: int = 1
    """Leaves per problem and batch step (virtual loss); 1 is exact AlphaZero."""
    seed: int = 0


def simulations_for_budget(task: Task, budget: int, cfg: TreeSearchConfig, *, answer_tokens: float,
                           step_tokens: float) -> int:
    """Simulations per move so that a whole answer spends about `budget` generated tokens.

    Token level: one new prefix (one token) per simulation, about answer_tokens moves.
    Step level: num_candidates sampled steps (step_tokens each) per simulation, max_steps moves.
    """
    if cfg.level == "token":
        per_answer = answer_tokens
    else:
        per_answer = task.max_steps * cfg.num_candidates * step_tokens
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


def mcts_decode(engine: LMEngine, task: Task, problems: Sequence[Problem], cfg: TreeSearchConfig) -> list[list[int]]:
    """The answer (generated tokens) of every problem, all problems searched in lockstep."""
    game = LLMGame(engine, task, level=cfg.level, top_k=cfg.top_k, num_candidates=cfg.num_candidates,
                   prior_temperature=cfg.prior_temperature, step_temperature=cfg.step_temperature,
                   terminal_value=cfg.terminal_value, value_source=cfg.value_source, seed=cfg.seed)
    states = game.states(problems)
    puct = cfg.algorithm == "puct"
    search_cfg = SearchConfig(simulations=cfg.simulations, algorithm=cfg.algorithm, c_init=cfg.c_init,
                              dirichlet_weight=0.0, temperature=0.0, tree_reuse=puct,
                              gumbel_num_considered=cfg.gumbel_num_considered, gumbel_c_scale=cfg.gumbel_c_scale,
                              gumbel_scale=cfg.gumbel_scale,
                              gumbel_rescale_q=cfg.gumbel_rescale_q,
                              leaves_per_game=cfg.leaves_per_game, seed=cfg.seed)
    search = MCTS(game.spec, LLMEvaluator(game), search_cfg, batch_size=len(problems))
    for _ in range(game.spec.max_moves + 1):
        if states.terminal().all():
            break
        result = search.run(states)
        actions = search.choose_actions(result, temperature=0.0)
        actions[states.terminal()] = NO_ACTION
        states.apply(actions)
        search.advance(actions)
    return [states.answer(b) for b in range(len(problems))]
