"""azero.search: the batched MCTS core (see DESIGN.md).

    from azero.search import MCTS, SearchConfig, UniformEvaluator
    result = MCTS(game.spec, UniformEvaluator(), SearchConfig(simulations=200), batch_size=B).run(states)

Modules: config (SearchConfig), mcts (the driver, MCTS), _mcts (the Cython tree),
evaluators (protocol + uniform / random-rollout / fake), reference (the pure-Python
twin), graph (Monte-Carlo graph search for players; make_search picks it or MCTS),
gumbel (sequential-halving schedule), noise (root noise draws), result.
Names are imported on first use, so `import azero.search.config` never needs the
compiled extension.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "SearchConfig": "azero.search.config",
    "MCTS": "azero.search.mcts",
    "SearchResult": "azero.search.result",
    "TreeCapacityError": "azero.search._mcts",
    "EvaluatorOutputError": "azero.search._mcts",
    "Evaluator": "azero.search.evaluators",
    "UniformEvaluator": "azero.search.evaluators",
    "RandomRolloutEvaluator": "azero.search.evaluators",
    "FakeEvaluator": "azero.search.evaluators",
    "ReferenceMCTS": "azero.search.reference",
    "GraphSearch": "azero.search.graph",
    "make_search": "azero.search.graph",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'azero.search' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
