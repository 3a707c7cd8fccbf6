"""Fixtures of the LLM tests: the tiny models and tasks of tests/llmutil.py."""

from llmutil import arith, countdown, gpt2_dir, hf_model, model  # noqa: F401  (fixtures)
