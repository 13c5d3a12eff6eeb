"""Approval bound to the exact action, and idempotency keys for writes.

A correct argument is not an authorization. Before a side effect runs, a human approves *this*
action: this tool, these arguments, for this user. The action id is a hash of exactly those
three things (argument key order does not matter), so approving A can never authorize B — not
different content, another path, another tool or another user. An approval is used up when the
action takes effect, and expires.

An idempotency key makes a retried write safe: the same key with the same arguments returns the
stored result instead of writing twice; the same key with different arguments is a CONFLICT.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio


def canonical_arguments(arguments: dict[str, Any]) -> str:
    """The arguments as canonical JSON text: sorted keys, no spaces — equal objects, equal text."""
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def action_id(tool: str, arguments: dict[str, Any], user_id: str) -> str:
    """The id of one exact action: tool + canonical arguments + user."""
    digest = hashlib.sha256(f"{tool}\n{canonical_arguments(arguments)}\n{user_id}".encode()).hexdigest()
    return f"act_{digest[:16]}"


@dataclass(frozen=True)
class PendingAction:
    """What a human is asked to approve: the exact tool, arguments and user."""

    action_id: str
    tool: str
    arguments: dict[str, Any]
    user_id: str


@dataclass
class Approvals:
    """Pending actions and granted approvals. `clock` is injectable so expiry can be shown and tested."""

    ttl: float = 300.0
    clock: Callable[[], float] = time.monotonic
    id_for: Callable[[str, dict[str, Any], str], str] = action_id  # replaceable, e.g. to test another rule
    pending: dict[str, PendingAction] = field(default_factory=dict)
    _granted: dict[str, float] = field(default_factory=dict)  # action id → expiry time

    def request(self, tool: str, arguments: dict[str, Any], user_id: str) -> PendingAction:
        """Record that this exact action waits for a decision; returns what to show the human."""
        action = PendingAction(self.id_for(tool, arguments, user_id), tool, dict(arguments), user_id)
        self.pending[action.action_id] = action
        return action

    def approve(self, action_id: str) -> PendingAction:
        """A human approved this pending action: it may run once, before the approval expires.

        Raises:
            KeyError: no such pending action (approve what was shown, not an id from elsewhere).
        """
        action = self.pending.pop(action_id)
        self._granted[action_id] = self.clock() + self.ttl
        return action

    def reject(self, action_id: str) -> PendingAction:
        """A human rejected this pending action.

        Raises:
            KeyError: no such pending action.
        """
        return self.pending.pop(action_id)

    def granted(self, tool: str, arguments: dict[str, Any], user_id: str) -> bool:
        """True if this exact action is approved and the approval has not expired."""
        expires = self._granted.get(self.id_for(tool, arguments, user_id))
        return expires is not None and self.clock() <= expires

    def spend(self, tool: str, arguments: dict[str, Any], user_id: str) -> None:
        """The action took effect: its approval is used up. (A retry of the same action after a
        timeout still finds it granted until it succeeds — the idempotency key keeps that safe.)"""
        self._granted.pop(self.id_for(tool, arguments, user_id), None)


class IdempotencyConflict(Exception):
    """The key was used before with different arguments."""


@dataclass
class IdempotencyStore:
    """Results of writes by idempotency key, so a retried write takes effect once."""

    _results: dict[str, tuple[str, Any]] = field(default_factory=dict)
    _locks: dict[str, anyio.Lock] = field(default_factory=dict)  # one write per key at a time

    async def run(self, key: str, arguments: dict[str, Any], write: Callable[[], Awaitable[Any]]) -> tuple[Any, bool]:
        """Run `write` once per key; returns (result, replayed). A replay returns the stored result.

        Raises:
            IdempotencyConflict: the key was used with different arguments.
        """
        fingerprint = canonical_arguments(arguments)
        # A concurrent duplicate waits for the first and then replays its result.
        async with self._locks.setdefault(key, anyio.Lock()):
            if key in self._results:
                stored_fingerprint, result = self._results[key]
                if stored_fingerprint != fingerprint:
                    raise IdempotencyConflict(f"idempotency key {key!r} was already used with different arguments")
                return result, True
            # In a real store the key and the effect commit in one transaction; here they are
            # kept together in memory, so a cancelled write leaves neither behind.
            result = await write()
            self._results[key] = (fingerprint, result)
            return result, False
