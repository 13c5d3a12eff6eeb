"""Approval bound to the exact action, and idempotency keys for writes.

A correct argument is not an authorization. Before a side effect runs, a human approves *this*
action: this tool, these arguments, for this user. The action id is a hash of exactly those
three things (argument key order does not matter), so approving A can never authorize B — not
different content, another path, another tool or another user. An approval is used up when the
action takes effect, and expires.

An idempotency key makes a retried write safe: the same key with the same arguments returns the
stored result instead of writing twice; the same key with different arguments is a CONFLICT.
Which key? The action id is a *content* key: two real saves with identical content share it, so
the second is silently merged into the first. A key the client issues once per operation
(`OperationKeys`), reused only by that operation's retries, keeps them apart. Either way the
server remembers a key only for its retention window (`IdempotencyStore.retention`).

Who decides that a call needs approval at all: the app's own contract, plus MCP tool annotations
(`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`). Annotations are *hints*
from the server, not guarantees: `approval_policy` believes them only from a server the app
trusts, fills each missing one with the cautious default, lets them add caution but never remove
the app's own, and names the untrusted tool output (`Provenance`) a proposed call came after.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from mcp.types import ToolAnnotations

from course_lib.lang import say


def canonical_arguments(arguments: dict[str, Any]) -> str:
    """The arguments as canonical JSON text: sorted keys, no spaces — equal objects, equal text."""
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def action_id(tool: str, arguments: dict[str, Any], user_id: str) -> str:
    """The id of one exact action: tool + canonical arguments + user."""
    digest = hashlib.sha256(f"{tool}\n{canonical_arguments(arguments)}\n{user_id}".encode()).hexdigest()
    return f"act_{digest[:16]}"


ActionState = Literal["pending", "approved", "expired", "spent", "rejected", "dropped", "unknown"]
"""Where one action stands (`Approvals.state`)."""

MAX_PENDING = 1000
"""Actions that may wait for a decision at once (`Approvals.max_pending`); one more drops the oldest."""


class ApprovalDropped(KeyError):
    """The action is no longer pending: it waited longest when `max_pending` others came after
    it, and was dropped unanswered. Approving it now would approve something nobody is looking
    at any more: ask again."""

    def __str__(self) -> str:  # KeyError's own str() would show the message quoted
        return str(self.args[0])


@dataclass(frozen=True)
class PendingAction:
    """What a human is asked to approve: the exact tool, arguments and user."""

    action_id: str
    tool: str
    arguments: dict[str, Any]
    user_id: str


@dataclass
class Approvals:
    """Pending actions and granted approvals. `clock` is injectable so expiry can be shown and tested.

    At most `max_pending` actions wait for a decision: every unapproved call adds one, and a loop
    (or a model) that keeps proposing writes nobody answers must not grow the app's memory without
    end. One more drops the oldest (its panel, if any, now says so), and a later approval of a
    dropped action is refused with `ApprovalDropped` instead of authorizing something nobody is
    looking at. The last `max_pending` dropped ids are remembered for that message.
    """

    ttl: float = 300.0
    clock: Callable[[], float] = time.monotonic
    id_for: Callable[[str, dict[str, Any], str], str] = action_id  # replaceable, e.g. to test another rule
    pending: dict[str, PendingAction] = field(default_factory=dict)  # oldest first
    max_pending: int = MAX_PENDING
    _granted: dict[str, float] = field(default_factory=dict)  # action id → expiry time
    _decided: dict[str, str] = field(default_factory=dict)  # action id → "approved" / "rejected" / "spent"
    _dropped: dict[str, None] = field(default_factory=dict)  # action ids dropped unanswered, oldest first

    def request(self, tool: str, arguments: dict[str, Any], user_id: str) -> PendingAction:
        """Record that this exact action waits for a decision; returns what to show the human.
        Asking again for an action already waiting moves it to the newest place.

        Raises:
            ValueError: `max_pending` is not at least 1.
        """
        if self.max_pending < 1:
            raise ValueError(f"max_pending must be at least 1, not {self.max_pending}")
        action = PendingAction(self.id_for(tool, arguments, user_id), tool, dict(arguments), user_id)
        self.pending.pop(action.action_id, None)
        self._dropped.pop(action.action_id, None)  # asked for again: it waits once more
        while len(self.pending) >= self.max_pending:
            oldest = next(iter(self.pending))
            del self.pending[oldest]
            self._dropped[oldest] = None
            while len(self._dropped) > self.max_pending:
                del self._dropped[next(iter(self._dropped))]
        self.pending[action.action_id] = action
        return action

    def _take(self, action_id: str) -> PendingAction:
        """Remove and return a pending action, for a decision.

        Raises:
            ApprovalDropped: it was dropped unanswered (see the class docstring).
            KeyError: no such pending action.
        """
        if action_id not in self.pending and action_id in self._dropped:
            raise ApprovalDropped(f"{action_id} is no longer waiting for a decision: it was the oldest of "
                                  f"{self.max_pending} pending actions and was dropped unanswered; nothing was "
                                  "approved — ask for it again if it is still wanted")  # fmt: skip
        return self.pending.pop(action_id)

    def approve(self, action_id: str) -> PendingAction:
        """A human approved this pending action: it may run once, before the approval expires.

        Raises:
            ApprovalDropped: the action was dropped unanswered (more than `max_pending` waited).
            KeyError: no such pending action (approve what was shown, not an id from elsewhere).
        """
        action = self._take(action_id)
        self._granted[action_id] = self.clock() + self.ttl
        self._decided[action_id] = "approved"
        return action

    def reject(self, action_id: str) -> PendingAction:
        """A human rejected this pending action.

        Raises:
            ApprovalDropped: the action was dropped unanswered.
            KeyError: no such pending action.
        """
        action = self._take(action_id)
        self._granted.pop(action_id, None)
        self._decided[action_id] = "rejected"
        return action

    def state(self, action_id: str) -> ActionState:
        """Where this action stands now, read from the records (not from any screen):

        pending   waiting for a decision      approved  may run once, not expired yet
        expired   approved, but too late now  spent     approved and took effect
        rejected  a person said no            dropped   waited too long among too many (max_pending)
        unknown   never asked for (or dropped long ago)
        """
        if action_id in self.pending:
            return "pending"
        if action_id in self._dropped:
            return "dropped"
        decided = self._decided.get(action_id, "unknown")
        if decided == "approved" and self.clock() > self._granted.get(action_id, float("-inf")):
            return "expired"
        return decided  # type: ignore[return-value]

    def granted(self, tool: str, arguments: dict[str, Any], user_id: str) -> bool:
        """True if this exact action is approved and the approval has not expired."""
        expires = self._granted.get(self.id_for(tool, arguments, user_id))
        return expires is not None and self.clock() <= expires

    def spend(self, tool: str, arguments: dict[str, Any], user_id: str) -> None:
        """The action took effect: its approval is used up. (A retry of the same action after a
        timeout still finds it granted until it succeeds — the idempotency key keeps that safe.)"""
        the_id = self.id_for(tool, arguments, user_id)
        if self._granted.pop(the_id, None) is not None:
            self._decided[the_id] = "spent"



class IdempotencyConflict(Exception):
    """The key was used before with different arguments."""


@dataclass
class IdempotencyStore:
    """Results of writes by idempotency key, so a retried write takes effect once.

    A key is remembered for `retention` seconds after its write (None: for ever). A retry that
    arrives later is not recognised and writes again, so the window must outlast the client's
    longest retry. Real servers forget keys (Stripe may prune a key once it is 24 hours old, and
    then treats a reuse as a new request), or their table would only grow.
    """

    retention: float | None = None
    clock: Callable[[], float] = time.monotonic
    _results: dict[str, tuple[str, Any, float]] = field(default_factory=dict)  # key → (fingerprint, result, stored at)
    _locks: dict[str, anyio.Lock] = field(default_factory=dict)  # one write per key at a time

    async def run(self, key: str, arguments: dict[str, Any], write: Callable[[], Awaitable[Any]]) -> tuple[Any, bool]:
        """Run `write` once per key; returns (result, replayed). A replay returns the stored result.

        Raises:
            IdempotencyConflict: the key was used with different arguments (within the retention window).
        """
        fingerprint = canonical_arguments(arguments)
        # A concurrent duplicate waits for the first and then replays its result.
        async with self._locks.setdefault(key, anyio.Lock()):
            if key in self._results:
                stored_fingerprint, result, stored_at = self._results[key]
                if self.retention is not None and self.clock() - stored_at > self.retention:
                    del self._results[key]  # forgotten: this call is treated as new
                else:
                    if stored_fingerprint != fingerprint:
                        raise IdempotencyConflict(f"idempotency key {key!r} was already used with different arguments")
                    return result, True
            # In a real store the key and the effect commit in one transaction; here they are
            # kept together in memory, so a cancelled write leaves neither behind.
            result = await write()
            self._results[key] = (fingerprint, result, self.clock())
            return result, False


@dataclass
class OperationKeys:
    """Idempotency keys issued by the client, one per *operation* (not per content).

    `for_operation(name)` gives an operation its key the first time and the same key on every
    retry of it; a second operation gets a new key even if its content is identical. A real client
    uses `uuid.uuid4()`; here a counter keeps notebook output stable.
    """

    prefix: str = "op"
    _issued: dict[str, str] = field(default_factory=dict)

    def for_operation(self, operation: str) -> str:
        """The key of `operation` (issued on first use, then reused by its retries)."""
        if operation not in self._issued:
            self._issued[operation] = f"{self.prefix}-{len(self._issued) + 1:04d}"
        return self._issued[operation]


# ---- who needs approval: the app's contract, annotations as hints, provenance -------------------


@dataclass(frozen=True)
class ToolHints:
    """MCP tool annotations with every missing hint at its default — the cautious one (spec and
    `mcp.types.ToolAnnotations`: not read-only, destructive, not idempotent, open world)."""

    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = True

    @classmethod
    def from_annotations(cls, annotations: ToolAnnotations | None) -> ToolHints:
        """The hints a server declared, defaults for the ones it left out."""
        a = annotations or ToolAnnotations()
        return cls(_or(a.read_only_hint, False), _or(a.destructive_hint, True),
                   _or(a.idempotent_hint, False), _or(a.open_world_hint, True))  # fmt: skip


def _or(hint: bool | None, default: bool) -> bool:
    """A hint as declared, or its default when the server left it out."""
    return default if hint is None else hint


@dataclass(frozen=True)
class Provenance:
    """A tool output the model had read before it proposed a call: untrusted text (a file, an
    email, a web page) that may have written the proposal. `source` says where that text came
    from when the tool's output alone does not (e.g. which note), else None."""

    call_id: str
    tool: str
    source: str | None = None

    def __str__(self) -> str:
        return f"{self.tool} {self.source} ({self.call_id})" if self.source else f"{self.tool} ({self.call_id})"


@dataclass(frozen=True)
class Policy:
    """What `approval_policy` decided for one proposed call, and why."""

    needs_approval: bool
    reasons: tuple[str, ...]
    after: tuple[Provenance, ...] = ()  # the untrusted outputs to show the person beside the call


def approval_policy(
    annotations: ToolAnnotations | None,
    *,
    trusted_server: bool,
    side_effect: bool = False,
    after: Sequence[Provenance] = (),
) -> Policy:
    """Does this call need a person's approval? Hints never loosen the app's own contract.

    - `side_effect`: the app's own contract for the tool. True always needs approval, whatever the
      server's annotations say.
    - `annotations` are believed only if `trusted_server`; otherwise (and for every missing hint)
      the cautious defaults apply, so a server cannot talk its way out of approval with
      `readOnlyHint: true`.
    - not read-only → approval. A read-only tool that is open world right `after` untrusted output
      → approval too: a read of the outside world can carry data out (in its URL or query).
    - `after` (the untrusted outputs the model had read) is kept, to be shown beside the call.
    """
    hints = ToolHints.from_annotations(annotations if trusted_server else None)
    reasons = []
    if annotations is None:
        reasons.append(say("no annotations: the cautious defaults apply", "没有注解：采用谨慎的默认值"))
    elif not trusted_server:
        reasons.append(say("annotations ignored: the server is not trusted, so the cautious defaults apply",
                           "注解被忽略：这个服务器不受信任，所以采用谨慎的默认值"))
    if side_effect:
        reasons.append(say("the app's own contract: it changes data", "应用自己定的契约：它会改变数据"))
    if not hints.read_only:
        reasons.append(say("not read-only and destructive", "不是只读的，而且有破坏性") if hints.destructive
                       else say("not read-only (additive only)", "不是只读的（只做添加）"))  # fmt: skip
    elif hints.open_world and after:
        reasons.append(say("read-only but open world, right after untrusted output: a read can carry data out",
                           "只读，但面向开放世界，而且紧跟在不可信的输出之后：一次读取也能把数据带出去"))
    needs = side_effect or not hints.read_only or (hints.open_world and bool(after))
    if after:
        reasons.append(say("proposed after untrusted output of {outputs}", "在读过不可信的输出之后提出：{outputs}",
                           outputs=", ".join(map(str, after))))
    if not needs:
        reasons.append(say("read-only, as a trusted server says", "只读，这是受信任的服务器说的") if hints.open_world
                       else say("read-only and closed world, as a trusted server says",
                                "只读且面向封闭世界，这是受信任的服务器说的"))  # fmt: skip
    return Policy(needs, tuple(reasons), tuple(after))
