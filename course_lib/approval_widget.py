"""A person in the loop: an Approve / Reject panel for one exact pending action.

    execution = await executor.execute("call_1", "apply_note_update", arguments_text, session)
    panel = ApprovalPanel(executor, execution, preview=preview_execution)
    panel            # in Jupyter: the tool, the exact arguments, the diff, two buttons, a status line
    panel.approve()  # what the Approve button does: executor.approvals.approve(action_id)

The panel shows what will run — the tool, the user, the action id and the exact arguments as
pretty JSON, plus the diff from a preview when there is one — and nothing else can be approved
from it: the buttons act on that action id only. Clicking Approve calls
`executor.approvals.approve(action_id)` (the action may then run once, until the approval
expires); Reject calls `executor.approvals.reject(action_id)`.

The same decision can be made from code — `panel.approve()`, `panel.reject()`, or
`panel.approve_button.click()` — which is how tests and stored notebook runs drive it.

The first decision counts; a later click (the other button, the same one twice, or a cell that
clicks from code after a person clicked live) changes nothing and says so. A cell after the
panel should not assume what was clicked:

    panel.click_if_undecided("approve")   # the stored run's click; live, the person's click stands
    print(panel.status)                   # the real state, read from executor.approvals
    applied = await panel.execute(session)  # runs only if approved; else a FORBIDDEN result, not a new request

`panel.state` is the action's real state (`Approvals.state`: pending, approved, expired, spent,
rejected), so it stays true after the action ran or the approval expired. After `panel.execute`
the status says what running it did: "executed", with the result, or the error that stopped it;
the widget's status line is brought up to date whenever the status is read.

Safe to re-run: building a panel for an action that already has one (the cell that shows the panel
run again, after a click or after `execute`) returns that same panel, decided as it was, instead of
raising because the action is no longer pending. Nothing is sent by building or showing a panel,
so a re-run writes nothing; only `execute` sends, and only an approved action, once.

Where widgets cannot render (a notebook viewed on GitHub, a terminal, a test), the panel still
shows readable text: its plain-text form (`panel.text()`, also used by `repr` and by the
`text/plain` part of what Jupyter stores) lists the same action, arguments, diff and status.

Every label, button, status line and the plain text speak the edition's language
(`course_lib.lang.say`), and so do the two header labels of the diff (`notes_store.diff_for_edition`;
the preview's tool result itself stays English); the refusal `execute` returns is a tool result for
the model and stays as the other tool errors are written.
"""

from __future__ import annotations

import html
import json
import weakref
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets

from course_lib.approval import ActionState, PendingAction, Provenance
from course_lib.execution import Execution, Executor, Session, Step
from course_lib.lang import say
from course_lib.notes_store import diff_for_edition
from course_lib.results import failure
from course_lib.show import TextFallback

WAITING = "waiting for a decision"
WAITING_ZH = "等待决定"


def pending_action(executor: Executor, pending: Execution | PendingAction) -> PendingAction:
    """The `PendingAction` behind an execution that stopped at APPROVAL_REQUIRED (or `pending`
    itself), as `executor.approvals` recorded it.

    Raises:
        ValueError: the execution did not stop for approval, or its action is no longer pending.
    """
    if isinstance(pending, PendingAction):
        return pending
    if pending.error_code != "APPROVAL_REQUIRED":
        raise ValueError(f"{pending.tool} did not stop for approval (result: {pending.error_code or 'ok'})")
    the_id = pending.result["error"]["action_id"]
    try:
        return executor.approvals.pending[the_id]
    except KeyError:
        raise ValueError(f"action {the_id} is not pending any more: it was already approved or rejected") from None


def _diff_text(preview: Any) -> str | None:
    """The diff from a preview: its text, a preview result dict, or a preview `Execution`."""
    if isinstance(preview, Execution):
        preview = preview.result.get("data") if preview.ok else None
    if isinstance(preview, dict):
        preview = preview.get("diff")
    return preview if isinstance(preview, str) else None


_PANELS: weakref.WeakValueDictionary[tuple[int, str], ApprovalPanel] = weakref.WeakValueDictionary()
"""(id of the executor, action id) → the panel built for it. A panel holds its executor, so the id
cannot be reused while the entry lives; an entry goes when its panel does."""


def _action_id_of(pending: Any) -> str | None:
    """The action id an execution stopped at, or a `PendingAction`'s; None for anything else."""
    if isinstance(pending, PendingAction):
        return pending.action_id
    if isinstance(pending, Execution) and pending.error_code == "APPROVAL_REQUIRED":
        the_id = pending.result["error"].get("action_id")
        return the_id if isinstance(the_id, str) else None
    return None


def _earlier_panel(executor: Executor, pending: Any) -> ApprovalPanel | None:
    """The panel already built for this action, if showing it again is right: the action is no
    longer pending (decided, run or expired: the earlier panel knows what it was), or it is still the
    very request that panel shows and nobody has decided it. A request made again after a decision
    (the same action asked for anew) gets a new panel."""
    the_id = _action_id_of(pending)
    earlier = _PANELS.get((id(executor), the_id)) if the_id is not None else None
    if earlier is None or earlier.executor is not executor:
        return None
    waiting = executor.approvals.pending.get(the_id)
    if waiting is None or (waiting is earlier.action and earlier.decision is None):
        return earlier
    return None


class ApprovalPanel(TextFallback):
    """Approve or reject one exact pending action of `executor` (see the module docstring)."""

    def __new__(cls, executor: Executor, pending: Execution | PendingAction, **options: Any) -> ApprovalPanel:
        # A re-run cell builds the panel again: give it the panel that already shows this action.
        earlier = _earlier_panel(executor, pending)
        return earlier if earlier is not None else super().__new__(cls)

    def __init__(self, executor: Executor, pending: Execution | PendingAction, *, preview: Any = None,
                 after: Sequence[Provenance] = ()) -> None:  # fmt: skip
        """`after`: the untrusted tool outputs the model had read before proposing this action
        (e.g. `GuardedResult.untrusted`), shown so a person sees where the proposal came from.

        Building a panel for an action that already has one returns that panel as it is (see the
        module docstring); `preview` and `after` are then those it was built with.

        Raises:
            ValueError: see `pending_action` (raised only when no panel shows this action yet).
        """
        if getattr(self, "_built", False):
            return  # the panel that already shows this action: keep its state and its widget
        self.executor = executor
        self.action = pending_action(executor, pending)
        self.diff = _diff_text(preview)
        self.after = tuple(after)
        self.decision: str | None = None  # "approved" or "rejected": the first decision made here
        self.ignored: list[str] = []  # later clicks, which changed nothing
        self.executed: Execution | None = None  # what `execute` got back when it sent the action

        self.approve_button = widgets.Button(description=_click("approved"), button_style="success", icon="check")
        self.reject_button = widgets.Button(description=_click("rejected"), button_style="danger", icon="times")
        self.approve_button.on_click(lambda _: self.approve())
        self.reject_button.on_click(lambda _: self.reject())
        self._status_line = widgets.HTML()
        tool, user = f"<code>{html.escape(self.action.tool)}</code>", f"<code>{html.escape(self.action.user_id)}</code>"
        parts = [
            widgets.HTML(say(f"<b>Approval needed:</b> {tool} for user {user} · action <code>{self.action.action_id}</code>",
                             f"<b>需要批准：</b>用户 {user} 的 {tool} · 动作 <code>{self.action.action_id}</code>")),
            widgets.HTML(say("<b>Exact arguments</b>", "<b>确切的参数</b>") + _pre(self.arguments_json())),
        ]  # fmt: skip
        if self.after:
            parts.append(widgets.HTML(say("<b>⚠ Proposed after reading untrusted output:</b> ",
                                          "<b>⚠ 在读过不可信的输出之后提出：</b>") + html.escape(self._after_text())))
        if self.diff is not None:
            parts.append(widgets.HTML(say("<b>Effect (diff from the preview)</b>", "<b>效果（来自预览的 diff）</b>")
                                      + _pre(diff_for_edition(self.diff))))
        parts += [widgets.HBox([self.approve_button, self.reject_button]), self._status_line]
        self.widget = widgets.VBox(parts)
        self.refresh()
        _PANELS[(id(executor), self.action.action_id)] = self
        self._built = True

    def arguments_json(self) -> str:
        """The exact arguments, as pretty JSON."""
        return json.dumps(self.action.arguments, indent=2, ensure_ascii=False)

    @property
    def state(self) -> ActionState:
        """The action's real state now, from `executor.approvals` (not from the buttons)."""
        return self.executor.approvals.state(self.action.action_id)

    @property
    def status(self) -> str:
        """One line saying where the action stands — after `execute`, what running it did — and what
        a later click did (nothing). Reading it also brings the widget's status line up to date."""
        return self.refresh()

    def refresh(self) -> str:
        """Bring the widget's status line up to date with the real state (it may have moved on
        elsewhere: a `resume`, an expiry) and return the status."""
        line = self._status_text()
        self._status_line.value = _status_html(line)
        return line

    def _status_text(self) -> str:
        the_id, state = self.action.action_id, self.state
        if self.decision == "rejected" or (self.decision is None and state == "rejected"):
            line = say(f"✗ rejected: {the_id} will not run", f"✗ 已拒绝：{the_id} 不会运行")
            if state == "pending":  # the same action was sent again after the rejection
                line += say(" (the same action was asked for again: it waits for a new decision, in a new panel)",
                            "（同一个动作又被请求了一次：它在一个新的面板里等待新的决定）")
        elif self.executed is not None and self.executed.ok:
            line = say(f"✓ executed: {the_id} ran once → {_summary(self.executed)}; its approval is used up",
                       f"✓ 已执行：{the_id} 运行了一次 → {_summary(self.executed)}；它的批准已经用掉")
        elif self.executed is not None:
            error = self.executed.result["error"]
            line = say(f"✗ approved and sent, but it failed: {error['code']}: {error['message']}",
                       f"✗ 已批准并已发送，但它失败了：{error['code']}：{error['message']}")
            if state == "approved":  # not spent: the same action may be sent again (a retry)
                line += say(" (the approval still holds until it expires)", "（批准在过期之前仍然有效）")
        else:
            line = {
                "pending": say(WAITING, WAITING_ZH),
                "approved": say(f"✓ approved: {the_id} may run once, before the approval expires",
                                f"✓ 已批准：{the_id} 可以在批准过期之前运行一次"),
                "expired": say(f"✗ approved, but the approval expired before {the_id} ran: ask again",
                               f"✗ 已批准，但批准在 {the_id} 运行之前就过期了：请重新询问"),
                "spent": say(f"✓ approved and done: {the_id} ran once; its approval is used up",
                             f"✓ 已批准并完成：{the_id} 运行了一次；它的批准已经用掉"),
                "unknown": say(f"? no record of {the_id}: never asked for, or no longer kept",
                               f"? 没有 {the_id} 的记录：从未请求过，或者记录已不再保留"),
                "dropped": say(f"✗ dropped unanswered: {the_id} waited while too many others came after it "
                               "(Approvals.max_pending); nothing was approved: ask again",
                               f"✗ 未作答就被丢弃：{the_id} 等待期间又来了太多别的请求（Approvals.max_pending）；"
                               "什么都没有批准：请重新请求"),
            }.get(state, state)
        if self.decision is None and state not in ("pending", "unknown", "dropped"):
            line += say(" (decided elsewhere, not in this panel)", "（在别处决定，不是在这个面板里）")
        if self.ignored:
            clicks = ", ".join(self.ignored)
            line += say(f" · later click ignored: {clicks} (the first decision counts)",
                        f" · 之后的点击被忽略：{clicks}（第一次决定算数）")
        return line

    def approve(self) -> bool:
        """Approve this action (what the Approve button does). Returns True if this click decided it."""
        return self._decide("approved", self.executor.approvals.approve)

    def reject(self) -> bool:
        """Reject this action (what the Reject button does). Returns True if this click decided it."""
        return self._decide("rejected", self.executor.approvals.reject)

    def click_if_undecided(self, button: str) -> str:
        """Click `button` ("approve" or "reject") from code unless the action is already decided —
        by a person clicking live, or elsewhere. Returns the state afterwards (see `state`).

        Raises:
            ValueError: `button` is neither "approve" nor "reject".
        """
        if button not in ("approve", "reject"):
            raise ValueError(f"button must be 'approve' or 'reject', not {button!r}")
        if self.decision is None and self.state == "pending":
            (self.approve_button if button == "approve" else self.reject_button).click()
        return self.state

    async def execute(self, session: Session, call_id: str = "call_approved") -> Execution:
        """Run the action through the executor if it is approved now; otherwise do not send it
        again (that would only ask for a new approval) and return a refusal the model can read.
        The status then says what happened (executed, with the result, or the error). Calling it
        again after the action ran sends nothing: its approval is used up.

        Raises:
            ValueError: `session` is not the user the action was approved for.
        """
        if not isinstance(session, Session) or session.user_id != self.action.user_id:
            who = session.user_id if isinstance(session, Session) else repr(session)
            raise ValueError(f"this action was shown to {self.action.user_id}, not {who}")
        text = json.dumps(self.action.arguments, ensure_ascii=False)
        if self.state == "approved":
            execution = await self.executor.execute(call_id, self.action.tool, text, session)
            self.executed = execution  # sent: what it did is now part of the status
        else:
            execution = Execution(call_id, self.action.tool, text, trace_id="(not executed)",
                                  arguments=dict(self.action.arguments))  # fmt: skip
            execution.result = failure("FORBIDDEN", _REFUSALS.get(self.state, f"{self.action.action_id} is {self.state}: not run"))
            execution.steps.append(Step("decision", "FORBIDDEN"))
        self.refresh()
        return execution

    def _decide(self, decision: str, act: Any) -> bool:
        try:
            act(self.action.action_id)
        except KeyError:  # decided already, here or elsewhere: the first decision stands
            if self.state not in ("unknown", "dropped"):  # (neither was decided: the status says why)
                self.ignored.append(_click(decision))
            ok = False
        else:
            self.decision = decision
            ok = True
        self.approve_button.disabled = self.reject_button.disabled = True
        self.refresh()
        return ok

    def _after_text(self) -> str:
        return ", ".join(map(str, self.after))

    def text(self) -> str:
        """The panel as plain text: what a person is asked to approve, and the status."""
        tool, user = self.action.tool, self.action.user_id
        lines = [
            say(f"Approval needed: {tool} for user {user}", f"需要批准：用户 {user} 的 {tool}"),
            say(f"action id: {self.action.action_id}", f"action id：{self.action.action_id}"),
            say("exact arguments:", "确切的参数："),
            *("  " + line for line in self.arguments_json().splitlines()),
        ]
        if self.after:
            lines.append(say(f"⚠ proposed after reading untrusted output: {self._after_text()}",
                             f"⚠ 在读过不可信的输出之后提出：{self._after_text()}"))
        if self.diff is not None:
            lines += [say("effect (diff from the preview):", "效果（来自预览的 diff）："),
                      *("  " + line for line in diff_for_edition(self.diff).rstrip("\n").splitlines())]
        decided = self.decision is not None or self.state != "pending"
        buttons = f"[ {_click('approved')} ]  [ {_click('rejected')} ]"
        lines += [buttons + (say("  (decided)", "（已决定）") if decided else ""), say("status: ", "状态：") + self.status]
        return "\n".join(lines)


def _status_html(line: str) -> str:
    return say("<b>Status:</b> ", "<b>状态：</b>") + html.escape(line)


def _summary(execution: Execution, limit: int = 120) -> str:
    """The data of a successful result, as compact JSON cut to `limit` characters."""
    text = json.dumps(execution.result.get("data"), ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _click(decision: str) -> str:
    """The button that makes `decision`, as the edition names it."""
    return say("Approve", "批准") if decision == "approved" else say("Reject", "拒绝")


_REFUSALS = {
    "rejected": "the user rejected this action; do not retry it",
    "pending": "nobody has approved this action yet; it was not run",
    "expired": "the approval expired before the action ran; it was not run",
    "spent": "this approval was already used: the action ran once; it was not run again",
    "dropped": "nobody approved this action: it waited among too many others and was dropped unanswered; it was not run",
}


def _pre(text: str) -> str:
    return f"<pre style='margin:2px 0 6px 0'>{html.escape(text)}</pre>"
