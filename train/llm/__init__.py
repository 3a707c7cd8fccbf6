"""azero.train.llm: the language models behind the LLM-step adapter (azero.search.llm), their
KV-cache engine and their training.

Modules, one concept each:
    model    TinyGPT with an explicit KV-cache API and a value head; safetensors checkpoints
    hf       HFCausalLM: a local HuggingFace causal LM (GPT-2, ...) behind TinyGPT's cache API
    engine   LMEngine: prefix trie of cached keys/values (azero.search.llm.protocol.PrefixEngine)
    train    LM training on generated solutions; value head on verified own rollouts
"""
