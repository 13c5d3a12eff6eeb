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
rejected), so it stays true after the action ran or the approval expired.

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


class ApprovalPanel(TextFallback):
    """Approve or reject one exact pending action of `executor` (see the module docstring)."""

    def __init__(self, executor: Executor, pending: Execution | PendingAction, *, preview: Any = None,
                 after: Sequence[Provenance] = ()) -> None:  # fmt: skip
        """`after`: the untrusted tool outputs the model had read before proposing this action
        (e.g. `GuardedResult.untrusted`), shown so a person sees where the proposal came from.

        Raises:
            ValueError: see `pending_action`.
        """
        self.executor = executor
        self.action = pending_action(executor, pending)
        self.diff = _diff_text(preview)
        self.after = tuple(after)
        self.decision: str | None = None  # "approved" or "rejected": the first decision made here
        self.ignored: list[str] = []  # later clicks, which changed nothing

        self.approve_button = widgets.Button(description=_click("approved"), button_style="success", icon="check")
        self.reject_button = widgets.Button(description=_click("rejected"), button_style="danger", icon="times")
        self.approve_button.on_click(lambda _: self.approve())
        self.reject_button.on_click(lambda _: self.reject())
        self._status_line = widgets.HTML(self._status_html())
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

    def arguments_json(self) -> str:
        """The exact arguments, as pretty JSON."""
        return json.dumps(self.action.arguments, indent=2, ensure_ascii=False)

    @property
    def state(self) -> ActionState:
        """The action's real state now, from `executor.approvals` (not from the buttons)."""
        return self.executor.approvals.state(self.action.action_id)

    @property
    def status(self) -> str:
        """One line saying where the action stands, and what a later click did (nothing)."""
        the_id, state = self.action.action_id, self.state
        if self.decision == "rejected" or (self.decision is None and state == "rejected"):
            line = say(f"✗ rejected: {the_id} will not run", f"✗ 已拒绝：{the_id} 不会运行")
            if state == "pending":  # the same action was sent again after the rejection
                line += say(" (the same action was asked for again: it waits for a new decision, in a new panel)",
                            "（同一个动作又被请求了一次：它在一个新的面板里等待新的决定）")
        else:
            line = {
                "pending": say(WAITING, WAITING_ZH),
                "approved": say(f"✓ approved: {the_id} may run once, before the approval expires",
                                f"✓ 已批准：{the_id} 可以在批准过期之前运行一次"),
                "expired": say(f"✗ approved, but the approval expired before {the_id} ran: ask again",
                               f"✗ 已批准，但批准在 {the_id} 运行之前就过期了：请重新询问"),
                "spent": say(f"✓ approved and done: {the_id} ran once; its approval is used up",
                             f"✓ 已批准并完成：{the_id} 运行了一次；它的批准已经用掉"),
                "unknown": say(f"? {the_id} was never asked for", f"? 从未请求过 {the_id}"),
            }.get(state, state)
        if self.decision is None and state != "pending":
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

        Raises:
            ValueError: `session` is not the user the action was approved for.
        """
        if session.user_id != self.action.user_id:
            raise ValueError(f"this action was shown to {self.action.user_id}, not {session.user_id}")
        text = json.dumps(self.action.arguments, ensure_ascii=False)
        if self.state == "approved":
            return await self.executor.execute(call_id, self.action.tool, text, session)
        execution = Execution(call_id, self.action.tool, text, trace_id="(not executed)", arguments=dict(self.action.arguments))
        execution.result = failure("FORBIDDEN", _REFUSALS.get(self.state, f"{self.action.action_id} is {self.state}: not run"))
        execution.steps.append(Step("decision", "FORBIDDEN"))
        return execution

    def _decide(self, decision: str, act: Any) -> bool:
        try:
            act(self.action.action_id)
        except KeyError:  # decided already, here or elsewhere: the first decision stands
            self.ignored.append(_click(decision))
            ok = False
        else:
            self.decision = decision
            ok = True
        self.approve_button.disabled = self.reject_button.disabled = True
        self._status_line.value = self._status_html()
        return ok

    def _after_text(self) -> str:
        return ", ".join(map(str, self.after))

    def _status_html(self) -> str:
        return say("<b>Status:</b> ", "<b>状态：</b>") + html.escape(self.status)

    def text(self) -> str:
        """The panel as plain text: what a person is asked to approve, and the status."""
        self._status_line.value = self._status_html()  # the state may have moved on (spent, expired)
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


def _click(decision: str) -> str:
    """The button that makes `decision`, as the edition names it."""
    return say("Approve", "批准") if decision == "approved" else say("Reject", "拒绝")


_REFUSALS = {
    "rejected": "the user rejected this action; do not retry it",
    "pending": "nobody has approved this action yet; it was not run",
    "expired": "the approval expired before the action ran; it was not run",
    "spent": "this approval was already used: the action ran once; it was not run again",
}


def _pre(text: str) -> str:
    return f"<pre style='margin:2px 0 6px 0'>{html.escape(text)}</pre>"
