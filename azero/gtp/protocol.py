"""The GTP v2 wire format, both directions (Farnebäck, "Specification of the Go Text Protocol,
version 2, draft 2", sections 2 and 3).

Command lines are preprocessed as section 2.2-2.5 require, in this order:
control characters other than HT and LF are removed, HT becomes a space,
everything from '#' on is a comment and dropped; a line left empty (or only
whitespace) is ignored and gets no response. What remains is

    [id] command_name [arguments]

with id an unsigned decimal integer. Responses are

    =[id] result\\n\\n        success (result may be empty or span several lines)
    ?[id] error message\\n\\n failure

The id is echoed exactly as sent. An empty line ends a response, so no line
inside a result may be empty: `format_response` drops such lines rather than
let a caller's text cut a response short.
"""

from __future__ import annotations

import dataclasses
import math
import re

_ID = re.compile(r"[0-9]+")
# Control characters (C0 except HT and LF, plus DEL) are removed before parsing (spec 2.2).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclasses.dataclass(frozen=True)
class Command:
    """One parsed command line."""

    id: str | None
    """The id as sent (ASCII digits), or None when the line had none."""
    name: str
    """The command name; may be '' when the line held only an id."""
    args: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Response:
    """One parsed response (client side)."""

    ok: bool
    """True for '=', False for '?'."""
    id: str | None
    text: str
    """The result or error message: the lines after '=id' / '?id', joined by newlines, stripped."""


def preprocess(raw: str) -> str:
    """Apply the spec's preprocessing (control characters, tabs, comments); returns the stripped line."""
    line = _CONTROL.sub("", raw.replace("\r", ""))
    line = line.replace("\t", " ")
    line = line.split("#", 1)[0]
    return line.strip()


def parse_command(raw: str) -> Command | None:
    """Parse one command line; None for a line the spec says to ignore (empty or comment only)."""
    line = preprocess(raw)
    if not line:
        return None
    # split(" ") rather than split(): only spaces (and tabs, now spaces) separate tokens in GTP;
    # exotic Unicode whitespace stays inside a token, where it makes that token invalid.
    tokens = [t for t in line.split(" ") if t]
    ident = None
    if _ID.fullmatch(tokens[0]):
        ident = tokens.pop(0)
    name = tokens[0] if tokens else ""
    return Command(ident, name, tuple(tokens[1:]))


def format_response(ok: bool, text: str = "", ident: str | None = None) -> str:
    """'=id text\\n\\n' or '?id text\\n\\n', with empty lines and control characters removed from text."""
    lines = [_CONTROL.sub("", line).rstrip() for line in str(text).replace("\r", "").split("\n")]
    # The first line may be empty (a result that starts on the next line, like showboard's
    # '= \n<board>'); later empty lines would end the response early, so they go.
    body = lines[0] + "".join("\n" + line for line in lines[1:] if line)
    return f"{'=' if ok else '?'}{ident or ''} {body}\n\n"


def parse_response(lines: list[str]) -> Response:
    """Parse the lines of one response (without the terminating empty line); ValueError if malformed."""
    if not lines or not lines[0] or lines[0][0] not in "=?":
        raise ValueError(f"not a GTP response: {lines[:1]!r}")
    first = lines[0]
    m = re.match(r"[=?]([0-9]*)", first)
    ident = m.group(1) or None
    rest = first[m.end():]
    text = "\n".join([rest] + lines[1:]).strip()
    return Response(first[0] == "=", ident, text)
