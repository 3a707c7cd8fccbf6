"""Runners for self-play training: local (one process) and Ray (actors), over the same classes."""
