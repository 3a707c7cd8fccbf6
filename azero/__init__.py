"""azero: AlphaZero self-play and search."""

__version__ = "0.1.0"
