"""Shared helpers of the search tests."""

from __future__ import annotations

import numpy as np
import pytest

from azero.games import make_game


from searchutil import random_roots  # noqa: F401  (re-exported for fixtures)


@pytest.fixture(scope="session")
def tictactoe():
    return make_game("tictactoe")


@pytest.fixture(scope="session")
def connect4():
    return make_game("connect4")


@pytest.fixture(scope="session")
def go9():
    return make_game("go9x9")
