"""azero.llm: raw decoding vs tree search on a language model, at equal generated-token budgets.

Modules, one concept each:
    baselines   greedy, sampling, best-of-N (value head / majority / oracle), beam
    compare     every method at every budget: accuracy with 95% Wilson CIs (azero.eval.stats), compute
    report      the comparison as a text table, JSON and a PNG plot
    cli         `azero llm train | solve | compare`

The game adapter and the tree searchers are azero.search.llm; the models, their KV-cache engine
and their training are azero.train.llm.
"""
