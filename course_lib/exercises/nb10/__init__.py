"""Checks for notebook 10 (interview prep): seven coding drills and the diagnose-the-trace set.

Each drill is a function (or class) the learner writes from memory; each check runs it on real
objects and prints the first case it gets wrong, why, and a hint:

- `check_pair_call_ids(fn)`: `pair_call_ids(items) -> {call_id: output}` on the input lists the
  loop really sent (three reads at once, their outputs in all six orders; one at a time; one
  failing), then broken ones: an orphan
  output and an unanswered call (both refused by the model API too), a call_id on two calls, two
  outputs for one call.
- `check_responses_loop(fn)`: `run_loop(client, model, task, tools, execute, max_steps)` written
  from scratch, on the offline model and the real files server; then a model that never stops and
  a response cut off at `max_output_tokens` (see `responses_loop`).
- `check_action_id(fn)`: `action_id(tool, arguments, user_id) -> str` plugged into the approvals of
  a real `Executor`: alice's approval of action A must let A run (in any key order) and nothing
  else: another topic, another note inside evidence, another priority, `12` vs `"12"`, bob,
  another tool. A wrong id lets a write run for real.
- `check_idempotency_store(cls)`: `cls().run(key, arguments, write) -> (result, replayed)` inside
  a real write tool that times out after storing, retried by `retry.execute_with_retries`; then
  key order, a conflict, two keys, two concurrent duplicates, a failed write.
- `check_next_step(fn)`: `next_step(error, is_write, has_key) -> str` on real normalized errors
  (the files server, a stale route, slow, flaky, lying and unapproved tools, a version conflict),
  each on every kind of tool (a read, a write with and without an idempotency key): 36 cases.
- `check_run_turn(fn)`: `async run_turn(calls, execute, is_write) -> [Execution]` is *run* with
  timed tools (reads on the real files server) and its start/end events show whether reads
  overlapped and writes ran alone, in order; then every turn of up to four reads and writes.
- `check_parse_arguments(fn)`: `parse_arguments(text) -> dict` on the model's real arguments texts
  and on broken variants (duplicate key, NaN, Infinity, trailing data, not an object, ...), and
  on valid texts whose strings hold those words, compared with `arguments.parse_arguments_text`.
- `check_diagnoses(answers)`: `{trace name: (row, first check)}` for the recorded broken traces of
  `course_lib.drills`, the row and the check read in either edition's words (`D` or its symptom;
  `call trace` or 调用轨迹), see `diagnoses`.

One module per drill, each with its cases, its check and its reference solution: `pairing`,
`action_id`, `idempotency`, `next_step`, `scheduler`, `parser`, `responses_loop`, `diagnoses`;
`_common` holds what several share.
"""

from __future__ import annotations

from course_lib.exercises import Solutions
from course_lib.exercises.nb10.action_id import ACTION_CASES, _action_id_solution, check_action_id, play_approval
from course_lib.exercises.nb10.diagnoses import _diagnoses_solution, check_diagnoses
from course_lib.exercises.nb10.idempotency import _IdempotencyStoreSolution, check_idempotency_store
from course_lib.exercises.nb10.next_step import (NEXT_STEPS, STEP_CASES, _next_step_solution, check_next_step,
                                                 step_cases, step_errors)
from course_lib.exercises.nb10.pairing import _pair_solution, check_pair_call_ids
from course_lib.exercises.nb10.parser import _parse_arguments_solution, check_parse_arguments
from course_lib.exercises.nb10.responses_loop import _loop_solution, check_responses_loop
from course_lib.exercises.nb10.scheduler import _run_turn_solution, check_run_turn, run_scheduler, schedule_cases

__all__ = ["check_action_id", "check_diagnoses", "check_idempotency_store", "check_next_step",
           "check_pair_call_ids", "check_parse_arguments", "check_responses_loop", "check_run_turn", "SOLUTIONS",
           # used by notebook 10 and tests/exercises/test_nb10.py
           "ACTION_CASES", "NEXT_STEPS", "STEP_CASES", "play_approval", "run_scheduler", "schedule_cases",
           "step_cases", "step_errors"]  # fmt: skip

SOLUTIONS: Solutions = {
    "check_pair_call_ids": lambda: _pair_solution,
    "check_action_id": lambda: _action_id_solution,
    "check_idempotency_store": lambda: _IdempotencyStoreSolution,
    "check_next_step": lambda: _next_step_solution,
    "check_run_turn": lambda: _run_turn_solution,
    "check_parse_arguments": lambda: _parse_arguments_solution,
    "check_responses_loop": lambda: _loop_solution,
    "check_diagnoses": _diagnoses_solution,
}
