"""Small pictures of a state, read from an observation's sentences: Blocksworld stacks, Gripper rooms.

A registry (domain name -> reader) so that another domain gets a picture by one entry. A reader returns a
plain dict the page draws, or None when the text holds no state (an error message, a valid-action list);
the page then keeps the previous picture.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..registry import Registry

__all__ = ["PICTURES", "picture_of"]

Picture = dict[str, Any]

_SENTENCE = re.compile(r"[^.]+")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text or "") if s.strip()]


_ON_TABLE = re.compile(r"^(\S+) is on the table$")
_ON = re.compile(r"^(\S+) is on (\S+)$")
_HOLDING = re.compile(r"^the robot arm is holding (\S+)$", re.IGNORECASE)


def blocksworld(text: str) -> Picture | None:
    """Stacks bottom-up and the block in hand, from "b1 is on the table. b2 is on b1. ..."."""
    on: dict[str, str] = {}
    table: list[str] = []
    holding: str | None = None
    seen = False
    for sentence in _sentences(text):
        if m := _ON_TABLE.match(sentence):
            table.append(m.group(1))
            seen = True
        elif m := _ON.match(sentence):
            on[m.group(1)] = m.group(2)
            seen = True
        elif m := _HOLDING.match(sentence):
            holding = m.group(1)
            seen = True
        elif sentence.lower() == "the robot arm is empty":
            seen = True
    if not seen or not (table or holding):
        return None
    above = {below: top for top, below in on.items()}
    stacks = []
    for bottom in sorted(table):
        stack, block, guard = [bottom], bottom, 0
        while block in above and guard < len(on) + 1:
            block = above[block]
            stack.append(block)
            guard += 1
        stacks.append(stack)
    return {"kind": "blocksworld", "stacks": stacks, "holding": holding}


_ROOM = re.compile(r"^(\S+) is a room$")
_ROBBY = re.compile(r"^Robby is at (\S+)$")
_AT = re.compile(r"^(\S+) is at (\S+)$")
_CARRY = re.compile(r"^(\S+) is carrying (\S+)$")
_GRIPPER = re.compile(r"^(\S+) is a gripper$")
_FREE = re.compile(r"^(\S+) is free$")


def gripper(text: str) -> Picture | None:
    """Rooms with their balls, where Robby is, and what each gripper carries."""
    rooms: list[str] = []
    grippers: dict[str, str | None] = {}
    balls: dict[str, list[str]] = {}
    robby: str | None = None
    at: list[tuple[str, str]] = []
    for sentence in _sentences(text):
        if m := _ROOM.match(sentence):
            rooms.append(m.group(1))
        elif m := _ROBBY.match(sentence):
            robby = m.group(1)
        elif m := _CARRY.match(sentence):
            grippers[m.group(1)] = m.group(2)
        elif (m := _GRIPPER.match(sentence)) or (m := _FREE.match(sentence)):
            grippers.setdefault(m.group(1), None)
        elif m := _AT.match(sentence):
            at.append((m.group(1), m.group(2)))
    if robby is None or not rooms:
        return None
    for room in rooms:
        balls[room] = []
    for ball, room in at:
        balls.setdefault(room, []).append(ball)
    return {
        "kind": "gripper",
        "rooms": [{"name": r, "balls": sorted(b), "robby": r == robby} for r, b in balls.items()],
        "grippers": [{"name": g, "carrying": c} for g, c in sorted(grippers.items())],
    }


#: Domain name -> reader of a picture from an observation's text.
PICTURES: Registry[Callable[[str], Picture | None]] = Registry(
    "picture reader", {"blocksworld": blocksworld, "gripper": gripper}
)


def picture_of(domain: str, text: str) -> Picture | None:
    """The picture of `text` in `domain`, or None (no reader for the domain, or no state in the text)."""
    reader = PICTURES.get(domain)
    return reader(text) if reader else None
