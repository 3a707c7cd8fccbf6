"""Evaluation: players and matches between them."""
