"""azero.search.llm: the LLM-step adapter, tree search over the token sequences of a small causal LM.

A language model plus a task with an exact verifier becomes a one-player game for the unchanged
search core (azero.search.mcts.MCTS, PUCT or Gumbel root): a state is prompt + generated tokens,
children are the top-k next tokens (token level) or k sampled steps (step level), priors come
from the LM, values from its value head (or the verifier at terminal nodes, or rollouts).

Modules, one concept each:
    tasks       vocabulary; Countdown and Arith: seeded generators, train/test splits, verifiers
    model       TinyGPT with an explicit KV-cache API and a value head; safetensors checkpoints
    hf          HFCausalLM: a local HuggingFace causal LM (GPT-2, ...) behind TinyGPT's cache API
    engine      LMEngine: prefix trie of cached keys/values + the shared ComputeMeter
    decode      greedy / sampling / beam search through an engine
    game        LLMGame, LLMStates (the States protocol), LLMEvaluator
    searchers   mcts_decode: one MCTS per move until every answer is finished
    baselines   greedy, sampling, best-of-N (value head / majority / oracle), beam
    train       LM training on generated solutions; value head on verified own rollouts
    compare     every method at every budget: accuracy with 95% CIs, compute, table, PNG, JSON

Command line: `azero llm train | solve | compare` (azero/llm_cli.py).
"""
