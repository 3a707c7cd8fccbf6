"""azero.search.llm: the LLM-step adapter, tree search over the token sequences of a causal LM.

A language model plus a task with an exact verifier becomes a one-player game for the unchanged
search core (azero.search.mcts.MCTS, PUCT or Gumbel root): a state is prompt + generated tokens,
children are the top-k next tokens (token level) or k sampled steps (step level), priors come
from the LM, values from its value head (or the verifier at terminal nodes, or rollouts).

Only what the tree needs lives here, on numpy and the search core alone; the model is reached
through the PrefixEngine protocol. The layers around it:
    azero.train.llm    the language models (TinyGPT, a local HuggingFace LM), the KV-cache
                       engine (LMEngine) that implements PrefixEngine, LM and value-head training
    azero.llm          decoding baselines, the raw-vs-search comparison, its table and plot,
                       and the `azero llm train | solve | compare` command

Modules, one concept each:
    tasks       vocabulary; Countdown and Arith: seeded generators, train/test splits, verifiers
    protocol    PrefixEngine (what the adapter needs of a model), NO_NODE, ComputeMeter
    decode      greedy and sampling through an engine (step candidates, rollouts, baselines)
    game        LLMGame, LLMStates (the States protocol), LLMEvaluator
    searchers   TreeSearchConfig; mcts_decode: one MCTS per move until every answer is finished
"""
