"""Nothing lost across processes: two servers on one gaps folder, two stores on one notes folder,
and a process killed with SIGKILL in the middle of its saves (issue 12, part D).

Before the stores were SQLite, two `notes_server` processes saving 100 gaps each kept 101 of
the 200 they acknowledged and handed out 99 record ids twice; four `NotesStore` processes doing
300 versioned appends each lost 560 to 831 of 1200 acknowledged writes.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from course_lib.execution import ToolError
from course_lib.notes_server import GapStore, notes_dir
from course_lib.notes_store import SCRATCH_SUFFIX, NotesStore
from course_lib.paths import workspace_dir

REPO = Path(__file__).resolve().parent.parent
TODO = "/workspace/todo.md"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    target = tmp_path / "workspace"
    shutil.copytree(workspace_dir(), target)
    return target


def gap(process: str, i: int) -> dict[str, str]:
    return {"topic": f"topic {process} {i}", "evidence": "e", "suggestion": "s", "idempotency_key": f"key-{process}-{i:04d}"}


# ---- two notes_server processes over stdio, one --gaps folder -------------------------------------


@pytest.mark.anyio
async def test_two_server_processes_on_one_gaps_folder_lose_nothing_and_never_share_an_id(tmp_path):
    gaps = tmp_path / "gaps"
    gaps.mkdir()
    acknowledged: dict[str, str] = {}  # idempotency key → record id the server answered
    shared: list[dict] = []  # both processes save the same gap under one key

    async def one_server(process: str) -> None:
        params = StdioServerParameters(command=sys.executable, cwd=str(REPO),
                                       args=["-m", "course_lib.notes_server", "--root", str(notes_dir()), "--gaps", str(gaps)])  # fmt: skip
        with (tmp_path / f"stderr-{process}.txt").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                for i in range(30):
                    result = await client.call_tool("save_learning_gap", gap(process, i))
                    assert not result.is_error, result.content[0].text
                    acknowledged[gap(process, i)["idempotency_key"]] = result.structured_content["record_id"]
                    if i == 15:
                        shared.append((await client.call_tool("save_learning_gap", gap("both", 0))).structured_content)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(one_server, "a")
            group.start_soon(one_server, "b")
    store = GapStore(gaps)
    stored = {record["idempotency_key"]: record["id"] for record in store.records}
    store.close()
    assert len(acknowledged) == 60
    assert {key: stored.get(key) for key in acknowledged} == acknowledged  # zero lost, ids as answered
    ids = [record_id for record_id in stored.values()]
    assert len(ids) == len(set(ids)) == 61  # zero duplicate ids: 60 gaps and the shared one, once
    assert sorted(s["replayed"] for s in shared) == [False, True] and shared[0]["record_id"] == shared[1]["record_id"]
    assert (tmp_path / "stderr-a.txt").read_text() == (tmp_path / "stderr-b.txt").read_text() == ""


# ---- two NotesStores in two processes, one notes folder ---------------------------------------------


def append_lines(root: str, process: str, count: int, done: multiprocessing.Queue) -> None:
    """Append `count` lines to todo.md, each a read, then a write at the version read; retry a
    CONFLICT (another process wrote in between). Report the (line, version) acknowledged."""
    store = NotesStore(Path(root))
    acknowledged = []
    for i in range(count):
        while True:
            text, version = store.read(TODO)
            try:
                written = store.write(TODO, f"{text}{process}{i}\n", version)
            except ToolError as conflict:
                assert conflict.code == "CONFLICT"
                continue
            acknowledged.append((f"{process}{i}", written["version"]))
            break
    # The same approved action from both processes: one effect, one replay.
    result, replayed = anyio.run(lambda: store.apply("/workspace/notes.txt", "shared\n", 1, key="act_shared"))
    done.put((acknowledged, result, replayed))
    store.close()


def test_two_stores_in_two_processes_agree_on_versions_and_lose_no_acknowledged_write(root):
    context = multiprocessing.get_context("spawn")  # a fresh interpreter each, as two kernels
    done = context.Queue()
    workers = [context.Process(target=append_lines, args=(str(root), name, 20, done)) for name in "ab"]
    for worker in workers:
        worker.start()
    reports = [done.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=10)
        assert worker.exitcode == 0
    acknowledged = [entry for report in reports for entry in report[0]]
    lines = (root / "todo.md").read_text().splitlines()
    assert len(acknowledged) == 40 and all(line in lines for line, _ in acknowledged)  # zero lost
    versions = sorted(version for _, version in acknowledged)
    assert versions == list(range(2, 42))  # each version handed out once, in every process the same
    store = NotesStore(root)
    assert store.read(TODO)[1] == 41 and store.writes == 41  # 40 appends and the one shared write
    assert sorted(report[2] for report in reports) == [False, True] and reports[0][1] == reports[1][1]
    assert (root / "notes.txt").read_text() == "shared\n"


# ---- kill -9 in the middle of saves, then restart -------------------------------------------------

NOTES_LOOP = """
import sys
import time
from pathlib import Path
from course_lib.notes_store import SCRATCH_SUFFIX, NotesStore
store = NotesStore(Path(sys.argv[1]))
text, version = store.read("todo.md")
store.write("todo.md", text + "x" * 400_000 + "\\n", version)  # a big note: the kill lands mid-write
for i in range(10_000):
    text, version = store.read("todo.md")
    store.write("todo.md", text + f"line {i}\\n", version)
    print(i, flush=True)  # acknowledged
"""
GAPS_LOOP = """
import sys
import time
from pathlib import Path
from course_lib.notes_server import GapStore
store = GapStore(Path(sys.argv[1]))
for i in range(10_000):
    saved = store.save(f"topic {i}", "e", "s", f"key-{i:08d}")
    print(i, saved.record_id, flush=True)  # acknowledged
"""


def killed_after(program: str, folder: Path, acknowledged: int, *, until=lambda: True) -> list[list[str]]:
    """Run `program` on `folder` and SIGKILL it once it acknowledged `acknowledged` saves and
    `until()` is true (or 10 s have passed); return the lines it printed."""
    child = subprocess.Popen([sys.executable, "-c", program, str(folder)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    lines = []
    try:
        while len(lines) < acknowledged:
            line = child.stdout.readline()
            assert line, "the child stopped before it was killed"
            lines.append(line.split())
        deadline = time.monotonic() + 10
        while not until() and time.monotonic() < deadline:
            pass  # a tight loop: the moment to kill lasts a few milliseconds
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=10)
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    return lines


def scratch(root: Path) -> Path:
    return root.with_name(root.name + SCRATCH_SUFFIX)


def writing(root: Path) -> bool:
    """A store is in the middle of a write: its temporary file exists (beside the notes folder)."""
    with os.scandir(scratch(root)) as entries:
        return any(entry.name.startswith(".notes-store-") for entry in entries)


@pytest.mark.parametrize("acknowledged", [3, 12])
def test_a_store_killed_mid_write_loses_no_acknowledged_write_and_leaves_no_temporary_file(root, acknowledged):
    files = sorted(root.rglob("*"))
    lines = killed_after(NOTES_LOOP, root, acknowledged, until=lambda: writing(root))
    caught = writing(root)  # killed with its temporary file half written (almost always)...
    assert sorted(root.rglob("*")) == files  # ...and never inside the notes folder
    store = NotesStore(root)  # ...then the restart
    assert store.removed_temporary_files == caught and not list(scratch(root).iterdir())
    text, version = store.read(TODO)
    assert all(f"line {i}" in text.splitlines() for i, in lines)  # every acknowledged write present
    assert version >= len(lines) + 2  # the original, the big line, then one per write
    assert store.write(TODO, text + "after the restart\n", version)["version"] == version + 1


def test_a_gap_store_killed_mid_save_loses_no_acknowledged_gap_and_hands_out_no_id_twice(tmp_path):
    acknowledged = killed_after(GAPS_LOOP, tmp_path, 40)  # in the middle of the 41st transaction, or between two
    store = GapStore(tmp_path)
    stored = {record["idempotency_key"]: record["id"] for record in store.records}
    assert all(stored[f"key-{int(i):08d}"] == record_id for i, record_id in acknowledged)
    assert len(set(stored.values())) == len(stored) >= 40
    assert store.save("after", "e", "s", "key-after-restart").record_id == f"gap-{len(stored) + 1:04d}"
    store.close()


# ---- kill -9 with the whole new text written, just before the rename (issue 22) ------------------

HELD_BEFORE_RENAME = """
import os
import sys
import time
from pathlib import Path
from course_lib.notes_store import NotesStore

def held(*args, **kwargs):  # the moment a kill leaves the most behind: all of the text, no rename yet
    print("written", flush=True)
    time.sleep(600)

store = NotesStore(Path(sys.argv[1]))
text, version = store.read("todo.md")
os.replace = held
store.write("todo.md", "INJECTED full text of the new note\\n" * 1000, version)
"""


def test_a_kill_just_before_the_rename_leaves_the_new_text_only_outside_the_notes_folder(root):
    from course_lib.fs_server import ReadTextFileArgs, ToolFailure, Workspace
    from course_lib.notes_server import KnowledgeBase

    before = {path: path.read_bytes() for path in root.rglob("*") if path.is_file()}
    child = subprocess.Popen([sys.executable, "-c", HELD_BEFORE_RENAME, str(root)], cwd=REPO, stdout=subprocess.PIPE,
                             text=True)  # fmt: skip
    try:
        assert child.stdout.readline() == "written\n"
        [temporary] = scratch(root).iterdir()  # the whole new text, fsynced, waiting for its rename
        assert temporary.read_text() == "INJECTED full text of the new note\n" * 1000
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        child.kill()
        child.wait(timeout=10)
        child.stdout.close()
    # Nothing a server over the notes folder could serve or index: the folder is as it was.
    assert {path: path.read_bytes() for path in root.rglob("*") if path.is_file()} == before
    files = Workspace(root)
    for path in (f"/workspace/../{scratch(root).name}/{temporary.name}", f"{temporary.name}"):
        with pytest.raises(ToolFailure) as refused:
            files.read(ReadTextFileArgs(path=path))
        assert refused.value.code in ("FORBIDDEN", "NOT_FOUND")
    assert all("INJECTED" not in note.text for note in KnowledgeBase(root).index.notes)
    store = NotesStore(root)  # the restart removes what the killed write left
    assert store.removed_temporary_files == 1 and not list(scratch(root).iterdir())
    assert store.read(TODO)[0] == before[root / "todo.md"].decode()
