"""Reading the engine's board back through GTP (showboard), for the engine tests."""

from __future__ import annotations


def showboard(engine, ask) -> tuple[list[str], str]:
    """(rows of showboard, top row first, as strings of '.', 'X', 'O'; the whole answer)."""
    ok, _, text = ask(engine, "showboard")
    assert ok
    n = engine.board.board_size
    rows = []
    for line in text.split("\n"):
        parts = line.split()
        if len(parts) == n + 2 and parts[0].isdigit():
            assert parts[0] == parts[-1]
            rows.append("".join(parts[1:-1]))
    assert len(rows) == n, text
    return rows, text
