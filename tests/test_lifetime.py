"""Processes exit by themselves: a host nobody closes is closed when it is collected and at
interpreter exit (issue 22: a script with `NotesAssistant` hung at shutdown in the host's portal).

Each script runs in its own interpreter, as a learner's script or a CI job does; the timeout only
guards against the hang being back (a hang fails the test instead of stalling the run).
"""

import gc
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from course_lib.host import McpHost, files_host

GUARD = 120  # seconds: generous, a loaded machine runs these in a few


def run_script(tmp_path, source: str) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "OPENAI_API_KEY"}  # the offline model
    try:
        return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=GUARD,
                              env=env, cwd=tmp_path)  # fmt: skip
    except subprocess.TimeoutExpired as hung:
        pytest.fail(f"the script did not exit by itself within {GUARD} s (stdout: {hung.stdout!r})")


def test_a_script_that_asks_the_notes_assistant_and_closes_nothing_exits_by_itself(tmp_path):
    done = run_script(tmp_path, """
        from course_lib.assistant import NotesAssistant

        assistant = NotesAssistant()
        result = assistant.ask("Where is my understanding of retries incomplete?")
        print("answered:", result.status, result.reason)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("answered: ") and done.stderr == ""


def test_a_script_that_runs_start_course_and_closes_nothing_exits_by_itself(tmp_path):
    done = run_script(tmp_path, """
        from course_lib.course import start_course

        course = start_course(quiet=True)
        result = course.run("Show the first 2 lines of /workspace/notes.txt")
        print("answered:", result.status)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "answered: completed\n" and done.stderr == ""


def test_a_stdio_server_left_open_is_stopped_and_the_script_exits(tmp_path):
    done = run_script(tmp_path, """
        import sys

        from mcp.client.stdio import StdioServerParameters

        from course_lib.host import McpHost
        from course_lib.paths import workspace_dir

        host = McpHost()
        host.add_stdio_server("fs", StdioServerParameters(
            command=sys.executable, args=["-m", "course_lib.fs_server", "--root", str(workspace_dir())]))
        call = host.call("fs__read_text_file", {"path": "/workspace/notes.txt", "head": 1})
        print("read:", call.result.is_error)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "read: False\n"


def test_a_thread_still_waiting_on_the_host_at_exit_does_not_hold_the_process(tmp_path):
    # A non-daemon thread blocked in a host call: Python joins non-daemon threads before it runs
    # `atexit` callbacks, so only a close that runs before that join lets this process end.
    done = run_script(tmp_path, """
        import threading

        import anyio

        from course_lib.host import files_host

        host = files_host()

        def wait_forever():
            try:
                host.run(anyio.sleep_forever)
            except BaseException as stopped:
                print("the waiting call ended at exit:", type(stopped).__name__, flush=True)

        threading.Thread(target=wait_forever).start()  # non-daemon
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("the waiting call ended at exit: ")


def test_the_private_hook_runs_before_python_joins_non_daemon_threads(tmp_path):
    # `host._close_at_exit` relies on `threading._register_atexit` (private, CPython's own hook for
    # concurrent.futures): if it goes or runs later, this fails loudly instead of scripts hanging.
    assert callable(getattr(threading, "_register_atexit", None)), "threading._register_atexit is gone"
    done = run_script(tmp_path, """
        import atexit
        import threading

        release = threading.Event()
        threading.Thread(target=release.wait).start()  # non-daemon: the join at exit waits for it
        threading._register_atexit(lambda: (print("hook", flush=True), release.set()))
        atexit.register(lambda: print("atexit", flush=True))
    """)
    assert (done.returncode, done.stdout) == (0, "hook\natexit\n"), done.stderr


def _threads_named(prefix: str) -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith(prefix)]


def test_a_host_nobody_closes_is_closed_when_it_is_garbage_collected():
    before = set(threading.enumerate())
    host = files_host()
    assert not host.call("fs__read_text_file", {"path": "/workspace/notes.txt", "head": 1}).result.is_error
    started = [thread for thread in threading.enumerate() if thread not in before]
    assert any(thread.name.startswith("asyncio-portal-") for thread in started)
    del host
    gc.collect()
    deadline = time.monotonic() + 10
    while any(thread.is_alive() for thread in started) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [thread.name for thread in started if thread.is_alive()] == []  # the loop and its workers ended


def test_close_twice_is_harmless_and_a_closed_host_is_no_longer_kept_for_exit():
    from course_lib import host as module

    host = McpHost()
    held = host._held
    assert held in module._UNCLOSED
    host.close()
    host.close()
    assert held not in module._UNCLOSED
