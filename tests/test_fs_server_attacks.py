"""The files server against a full path-attack corpus, one case at a time.

Every case asserts the exact error code, that nothing from outside the root comes back, and that
the real location of the root never appears in a message. Forbidden shapes are tried twice, once
at a target that exists and once at one that does not: the answer must be the same, so a refusal
never reveals what lies outside.

Decisions the cases pin down (see course_lib/fs_server.py):
- Only logical paths are understood. The real absolute path of the root (or of a file in it) is
  not an alias: it is FORBIDDEN like any other absolute path outside /workspace.
- Control, format and bidi characters (U+0000-U+001F, U+007F-U+009F, U+202E, U+200B, U+FEFF,
  U+2028, lone surrogates, ...) are refused with INVALID_INPUT: a name a person cannot read on
  screen is not one a model should be steering towards.
- Backslashes, drive letters, `%2e`, fullwidth dots/slashes and `~` are ordinary characters on
  POSIX: never decoded, normalized or expanded, so they cannot climb out.
- A whole read is capped at MAX_WHOLE_FILE_BYTES; head/tail read bounded blocks and their answer
  is capped at MAX_LINES_BYTES, so no request can make the server load a huge file.
- A regular file with more than one hard link is FORBIDDEN: its other name may be outside the
  root, and nothing in the file says where. A link removed or replaced while being resolved or
  opened is NOT_FOUND (or FORBIDDEN if a link appeared on the way), never an internal error.
"""

from __future__ import annotations

import collections
import contextlib
import os
import threading
import tracemalloc
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp import Client

from course_lib.arguments import ReadTextFileArgs, quote
from course_lib.fs_server import MAX_LINES_BYTES, MAX_WHOLE_FILE_BYTES, ToolFailure, Workspace, build_server

MARKER = "OUTSIDE-MARKER-5b1e9c"  # in every file outside the root; must never come back
NOTES = "alpha\nbeta\ngamma\n"
TOOL = "read_text_file"


@dataclass
class Env:
    tmp: Path  # holds the root and everything around it
    root: Path
    ws: Workspace


@pytest.fixture
def env(tmp_path: Path) -> Env:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / "notes.txt").write_text(NOTES)
    (root / "docs" / "guide.md").write_text("# guide\n")
    # The world around the root: an outside folder and two siblings whose names start like it.
    for name in ("outside", "root_evil", "rootevil"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "secret.txt").write_text(f"{MARKER} in {name}\n")
        (tmp_path / name / "notes.txt").write_text(f"{MARKER} notes in {name}\n")
    return Env(tmp_path.resolve(), root.resolve(), Workspace(root))


def assert_no_leak(env: Env, text: str) -> None:
    assert MARKER not in text
    for real in (str(env.root), str(env.tmp)):
        assert real not in text


def outcome(env: Env, path: str, **options: int) -> tuple[str, str]:
    """("OK", text) or (code, message) for reading `path`, with the leak checks every case shares."""
    try:
        text = env.ws.read_text_file(ReadTextFileArgs(path=path, **options))
    except ToolFailure as failure:
        assert_no_leak(env, failure.message)
        assert failure.code in ("INVALID_INPUT", "FORBIDDEN", "NOT_FOUND")
        return failure.code, failure.message
    assert MARKER not in text
    return "OK", text


def code_of(env: Env, path: str, **options: int) -> str:
    return outcome(env, path, **options)[0]


def real_form(env: Env, path: str) -> str:
    """What the OS itself would open for `path` if /workspace were the root: for existence checks."""
    if path == "/workspace" or path.startswith("/workspace/"):
        path = str(env.root) + path[len("/workspace"):]
    return os.path.join(env.root, path)


def quote_logical(path: str) -> str:
    """The quoted logical path that messages start with, for a relative `path` without `..`."""
    return quote("/workspace/" + "/".join(part for part in path.split("/") if part not in ("", ".")))


# --- `..` chains ------------------------------------------------------------------------------


def dotdot_shapes(depth: int) -> list[str]:
    up = "../" * depth
    return [
        f"{up}outside/secret.txt",
        "./" + ".//./..//" * depth + "outside//secret.txt",  # `.`, repeated slashes, `..`
        f"/workspace/{up}etc/passwd",
        f"/workspace//./{up}",
        "a/" * depth + "../" * (depth + 1) + "x",  # a/../../x and deeper
        "docs/" + "x/" * depth + "../" * (depth + 2) + "outside/secret.txt",
        f"{up[:-1]}",  # ending in `..` itself
    ]


@pytest.mark.parametrize(
    "path", [pytest.param(path, id=f"depth{depth}-shape{n}") for depth in range(1, 21) for n, path in enumerate(dotdot_shapes(depth))]
)
def test_dotdot_chains_of_any_depth_are_forbidden(env, path):
    assert outcome(env, path) == ("FORBIDDEN", "path climbs out of /workspace with '..'")


def test_dotdot_that_stays_inside_still_reads(env):
    assert outcome(env, "docs/./x/../../notes.txt") == ("OK", NOTES)
    assert outcome(env, "/workspace//docs///..//notes.txt") == ("OK", NOTES)


# --- absolute paths, sibling prefixes, the real root path ---------------------------------------


@pytest.mark.parametrize("path", ["/etc/passwd", "/etc/absent-7f3a", "/", "/root", "/root/absent", "//", "///etc/passwd"])
def test_absolute_paths_outside_are_forbidden(env, path):
    assert outcome(env, path) == ("FORBIDDEN", "path is outside /workspace")


@pytest.mark.parametrize(
    "template",
    [
        "/workspace_evil/{name}",
        "/workspaceevil/{name}",
        "/workspace-evil/{name}",
        "/workspace.bak/{name}",
        "{tmp}/root_evil/{name}",  # the REAL absolute path of a real sibling
        "{tmp}/rootevil/{name}",
        "{tmp}/outside/{name}",
        "{root}/{name}",  # the real absolute path of the root itself ...
        "{root}/notes.txt",  # ... and of a file inside it: not an alias, refused
        "{root}",
        "{root}/",
    ],
)
def test_sibling_prefixes_and_real_paths_are_forbidden(env, template):
    for name in ("secret.txt", "absent.txt"):
        path = template.format(tmp=env.tmp, root=env.root, name=name)
        assert outcome(env, path) == ("FORBIDDEN", "path is outside /workspace"), path


def test_relative_sibling_paths_are_forbidden(env):
    for name in ("secret.txt", "absent.txt"):
        for sibling in ("root_evil", "rootevil"):
            assert outcome(env, f"../{sibling}/{name}") == ("FORBIDDEN", "path climbs out of /workspace with '..'")


def test_cve_2025_53110_shape_when_the_logical_root_is_the_real_path(env):
    # The advisory's exact shape: the allowed folder is a real path, the sibling shares its prefix.
    ws = Workspace(env.root, logical_root=str(env.root))
    assert ws.read_text_file(ReadTextFileArgs(path=f"{env.root}/notes.txt")) == NOTES  # mapped: it is the root
    for name in ("secret.txt", "absent.txt"):
        for sibling in ("root_evil", "rootevil"):
            with pytest.raises(ToolFailure) as caught:
                ws.resolve(f"{env.tmp}/{sibling}/{name}")
            assert caught.value.code == "FORBIDDEN"


# --- paths that name the same place in two ways: existence is never revealed -------------------


@pytest.mark.parametrize(
    "template",
    [
        "../outside/{name}",
        "docs/../../outside/{name}",
        "/workspace/../outside/{name}",
        "/workspace/docs/../../rootevil/{name}",
        "{tmp}/outside/{name}",
        "{tmp}/root_evil/{name}",
        "{root}/../outside/{name}",
        "out_dir/{name}",  # a symlinked directory pointing out
        "out_file_{name}",  # a symlink to an outside file (dangling for the absent one)
        "chain_{name}",  # a chain of links ending outside
    ],
)
def test_forbidden_is_the_same_whether_the_target_exists_or_not(env, template):
    (env.root / "out_dir").symlink_to(env.tmp / "outside")
    codes = {}
    for name in ("secret.txt", "absent.txt"):
        (env.root / f"out_file_{name}").symlink_to(env.tmp / "outside" / name)
        (env.root / f"chain_{name}").symlink_to(f"docs/hop_{name}")
        (env.root / "docs" / f"hop_{name}").symlink_to(f"../out_file_{name}")
        path = template.format(tmp=env.tmp, root=env.root, name=name)
        assert os.path.exists(real_form(env, path)) == (name == "secret.txt"), path  # the pair is real
        codes[name] = code_of(env, path)
    assert codes == {"secret.txt": "FORBIDDEN", "absent.txt": "FORBIDDEN"}


# --- symbolic links (CVE-2025-53109 shape) ------------------------------------------------------

LINK_OUT = "'{path}': leads outside /workspace through a symbolic link"


@pytest.mark.parametrize(
    ("links", "path", "expected"),
    [
        ({"leak.txt": "{tmp}/outside/secret.txt"}, "leak.txt", "FORBIDDEN"),
        ({"leak.txt": "../outside/secret.txt"}, "leak.txt", "FORBIDDEN"),  # relative target
        ({"outdir": "{tmp}/outside"}, "outdir/secret.txt", "FORBIDDEN"),
        ({"outdir": "{tmp}/outside"}, "outdir/absent.txt", "FORBIDDEN"),
        ({"evil": "{tmp}/root_evil"}, "evil/secret.txt", "FORBIDDEN"),  # link to the prefix sibling
        ({"slash": "/"}, "slash/etc/passwd", "FORBIDDEN"),
        ({"up": ".."}, "up/outside/secret.txt", "FORBIDDEN"),
        ({"a": "b", "b": "docs/c", "docs/c": "{tmp}/outside/secret.txt"}, "a", "FORBIDDEN"),  # chain out
        ({"a": "b", "b": "docs/c", "docs/c": "../notes.txt"}, "a", "OK"),  # chain ending inside
        ({"a": "{root}/docs/guide.md"}, "a", "OK"),  # absolute target inside
        ({"ghost": "{tmp}/outside/absent.txt"}, "ghost", "FORBIDDEN"),  # dangling, pointing out
        ({"ghost": "{tmp}/nowhere/deeper"}, "ghost", "FORBIDDEN"),
        ({"ghost": "absent.txt"}, "ghost", "NOT_FOUND"),  # dangling, pointing inside
        ({"ghost": "docs/absent/deeper.txt"}, "ghost", "NOT_FOUND"),
        ({"loop_a": "loop_b", "loop_b": "loop_a"}, "loop_a", "INVALID_INPUT"),
        ({"self": "self"}, "self", "INVALID_INPUT"),
        ({"loop": "loop/x"}, "loop/y", "INVALID_INPUT"),
        ({"dirlink": "docs"}, "dirlink", "INVALID_INPUT"),  # a link to a directory is a directory
    ],
)
def test_symlinks(env, links, path, expected):
    for link, target in links.items():
        (env.root / link).symlink_to(target.format(tmp=env.tmp, root=env.root))
    code, text = outcome(env, path)
    assert code == expected, text
    if expected == "FORBIDDEN":
        assert text == LINK_OUT.format(path=f"/workspace/{path}")
    if expected == "OK":
        assert text in (NOTES, "# guide\n")


def test_symlink_read_reports_the_target_logical_path(env):
    (env.root / "alias").symlink_to("docs/guide.md")
    assert env.ws.read(ReadTextFileArgs(path="alias")) == ("/workspace/docs/guide.md", "# guide\n")


# --- NUL, control and bidi characters -----------------------------------------------------------


@pytest.mark.parametrize("path", ["notes.txt\x00", "\x00", "../\x00", "/etc/passwd\x00", "notes.txt\x00.md"])
def test_nul_bytes_are_invalid(env, path):
    assert outcome(env, path) == ("INVALID_INPUT", "path contains a NUL byte")


@pytest.mark.parametrize(
    "char",
    ["\n", "\r", "\t", "\x1b", "\x7f", "\x85", "\x9b", "\u202e", "\u202d", "\u2066", "\u2069", "\u200b",
     "\u200d", "\u200e", "\ufeff", "\u2028", "\u2029", "\u00ad", "\ud800", "\udc80"],
)
def test_control_and_bidi_characters_are_invalid(env, char):
    assert unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp")
    expected = ("INVALID_INPUT", f"path contains a control or invisible character (U+{ord(char):04X})")
    for path in (f"notes.txt{char}", f"{char}notes.txt", f"no{char}tes.txt", f"missing{char}.txt",
                 f"../outside/secret{char}.txt", f"docs/{char}/guide.md"):
        assert outcome(env, path) == expected, repr(path)


def test_bidi_name_is_not_read_even_if_it_exists(env):
    name = "evil\u202etxt.md"  # displays as "evildm.txt"
    (env.root / name).write_text("hidden\n")
    assert code_of(env, name) == "INVALID_INPUT"


# --- backslashes, drive letters, UNC: literal names on POSIX ------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("..\\..\\etc\\passwd", "NOT_FOUND"),
        ("..\\outside\\secret.txt", "NOT_FOUND"),
        ("docs\\..\\..\\outside\\secret.txt", "NOT_FOUND"),
        ("\\..\\outside\\secret.txt", "NOT_FOUND"),
        ("C:\\Windows\\win.ini", "NOT_FOUND"),
        ("C:/x", "NOT_FOUND"),
        ("C:", "NOT_FOUND"),
        ("C:..\\outside", "NOT_FOUND"),
        ("\\\\server\\share\\x", "NOT_FOUND"),
        ("\\\\?\\C:\\x", "NOT_FOUND"),
        ("//server/share/x", "FORBIDDEN"),  # POSIX keeps a leading "//": absolute, not /workspace
        ("/workspace\\..\\..\\etc\\passwd", "FORBIDDEN"),  # "/workspace\.." is one name, not /workspace
        ("/workspace/..\\outside\\secret.txt", "NOT_FOUND"),
    ],
)
def test_windows_shapes_never_climb_out(env, path, expected):
    assert code_of(env, path) == expected


def test_backslash_name_is_read_literally(env):
    (env.root / "..\\outside\\secret.txt").write_text("literal backslash name\n")
    assert outcome(env, "..\\outside\\secret.txt") == ("OK", "literal backslash name\n")


# --- URL-encoding and fullwidth lookalikes: never decoded or normalized ------------------------


@pytest.mark.parametrize(
    "path",
    ["%2e%2e%2f", "%2e%2e/outside/secret.txt", "..%2foutside%2fsecret.txt", "..%2f..%2fetc%2fpasswd",
     "%252e%252e%252f", "%2E%2E/%2E%2E/etc/passwd", "%c0%ae%c0%ae/outside/secret.txt",
     "．．／outside／secret.txt", "．．/outside/secret.txt", "\uff0e\uff0e\uff0f\uff0e\uff0e\uff0fetc\uff0fpasswd",
     "\u2024\u2024/outside/secret.txt", "\ufe52\ufe52/outside/secret.txt", "..\u2215outside\u2215secret.txt",
     "..\u2044outside"],
)
def test_encoded_and_lookalike_dots_stay_literal(env, path):
    assert outcome(env, path) == ("NOT_FOUND", f"{quote_logical(path)}: no such file")


def test_a_file_literally_named_percent_2e_percent_2e_is_what_gets_read(env):
    (env.root / "%2e%2e").write_text("percent name\n")
    (env.root / "%2e%2e%2fnotes.txt").write_text("percent slash name\n")
    assert outcome(env, "%2e%2e") == ("OK", "percent name\n")
    assert outcome(env, "%2e%2e%2fnotes.txt") == ("OK", "percent slash name\n")


def test_fullwidth_names_are_read_literally_not_nfkc_normalized(env):
    assert unicodedata.normalize("NFKC", "．．／") == "../"  # what a careless normalizer would make
    (env.root / "．．").mkdir()
    (env.root / "．．" / "secret.txt").write_text("fullwidth dir\n")
    (env.root / "．．／secret.txt").write_text("fullwidth name\n")
    assert outcome(env, "．．/secret.txt") == ("OK", "fullwidth dir\n")
    assert outcome(env, "．．／secret.txt") == ("OK", "fullwidth name\n")
    assert env.ws.read(ReadTextFileArgs(path="．．/secret.txt"))[0] == "/workspace/．．/secret.txt"


# --- tilde, whitespace, trailing slashes: no expansion, no trimming ------------------------------


@pytest.mark.parametrize("path", ["~/x", "~root/x", "~", "~/notes.txt", "~root/.ssh/id_rsa", "/workspace/~/x"])
def test_tilde_is_not_expanded(env, path):
    assert code_of(env, path) == "NOT_FOUND"


@pytest.mark.parametrize("path", [" notes.txt", "notes.txt ", "notes.txt  ", "\u00a0notes.txt", "notes.txt\u3000",
                                  "notes.txt.", "NOTES.TXT", "notes.txt::$DATA", " "])
def test_lookalike_names_are_not_trimmed_into_notes_txt(env, path):
    assert code_of(env, path) == "NOT_FOUND"


@pytest.mark.parametrize("path", ["notes.txt\n", "notes.txt\r\n", "\tnotes.txt"])
def test_control_whitespace_is_refused_not_trimmed(env, path):
    assert code_of(env, path) == "INVALID_INPUT"


@pytest.mark.parametrize("path", ["notes.txt/", "notes.txt/.", "/workspace/notes.txt//", "notes.txt/./"])
def test_a_trailing_slash_is_not_silently_dropped(env, path):
    # POSIX: "notes.txt/" names a directory, and notes.txt is not one.
    assert outcome(env, path) == ("INVALID_INPUT", "'/workspace/notes.txt': is a file, but the path ends with '/'")


def test_a_trailing_slash_on_a_missing_name_is_not_found(env):
    assert code_of(env, "absent/") == "NOT_FOUND"


# --- empty, over-long, directories --------------------------------------------------------------


def test_empty_path_is_invalid(env):
    assert outcome(env, "") == ("INVALID_INPUT", "path is empty")


@pytest.mark.parametrize(
    "path",
    ["a" * 10_000, "a/" * 5_000, "../" * 3_334, "/workspace/" + "x/" * 5_000, "notes.txt" + "/" * 10_000,
     "./" * 5_000 + "notes.txt", "é" * 10_000],
)
def test_a_10000_character_path_is_invalid(env, path):
    assert outcome(env, path) == ("INVALID_INPUT", f"path is too long: {len(path)} characters (limit 4096)")


@pytest.mark.parametrize("name", ["a" * 256, "é" * 128, "€" * 86, "../" + "b" * 300, "docs/" + "c" * 1000 + "/x"])
def test_a_component_over_255_bytes_is_invalid(env, name):
    code, message = outcome(env, name)
    assert (code, message.endswith("…': name too long")) == ("INVALID_INPUT", True)
    assert len(message) < 80


def test_a_path_too_long_for_the_os_once_joined_to_the_root_is_invalid(env):
    path = "/".join(["é" * 127] * 17)  # 2,175 characters but 4,334 bytes: over PATH_MAX with the root
    code, message = outcome(env, path)
    assert (code, message.endswith("…': name too long")) == ("INVALID_INPUT", True)


@pytest.mark.parametrize("name", ["a" * 255, "é" * 127 + "a"])
def test_a_component_of_255_bytes_is_fine(env, name):
    assert len(name.encode()) == 255
    assert code_of(env, name) == "NOT_FOUND"
    (env.root / name).write_text("long name\n")
    assert outcome(env, name) == ("OK", "long name\n")


@pytest.mark.parametrize("path", ["docs", "docs/", "/workspace/docs/.", ".", "./", "/workspace", "/workspace/", "docs/.."])
def test_directories_are_invalid(env, path):
    code, message = outcome(env, path)
    assert code == "INVALID_INPUT" and message.endswith(": is a directory")


# --- FIFOs: refused without hanging -------------------------------------------------------------


@pytest.mark.anyio
async def test_fifo_is_refused_without_hanging(env):
    os.mkfifo(env.root / "pipe")
    (env.root / "pipe_link").symlink_to("pipe")
    with anyio.fail_after(5):
        async with Client(build_server(env.ws)) as client:
            await client.list_tools()
            for path in ("pipe", "pipe_link", "/workspace/pipe"):
                result = await client.call_tool(TOOL, {"path": path})
                assert result.is_error
                assert result.content[0].text.startswith("INVALID_INPUT: ") and result.structured_content is None
    assert env.ws.reads == 0


@pytest.mark.anyio
async def test_fifo_swapped_in_after_the_check_does_not_hang(env, monkeypatch):
    # As if a checked regular file were replaced by a FIFO between the check and the open.
    fifo = env.ws.root / "pipe"
    os.mkfifo(fifo)
    monkeypatch.setattr(env.ws, "_real_parts", lambda path: ("pipe",))  # read()'s check (resolve() is built on it)
    try:
        with anyio.fail_after(5), pytest.raises(ToolFailure) as caught:
            await anyio.to_thread.run_sync(env.ws.read, ReadTextFileArgs(path="pipe"), abandon_on_cancel=True)
    finally:
        try:  # if the read did block, a writer appearing releases it
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    assert (caught.value.code, caught.value.message) == ("INVALID_INPUT", "'/workspace/pipe': not a regular file")


# --- a path changed between the check and the open ---------------------------------------------


def _swap_after_resolve(env: Env, monkeypatch, swap) -> None:
    """Make read()'s check (`_real_parts`, which resolve() is built on) do its real work, then
    change the tree: a race won by an attacker."""
    checked = env.ws._real_parts

    def resolve_then_swap(path):
        real = checked(path)
        swap()
        return real

    monkeypatch.setattr(env.ws, "_real_parts", resolve_then_swap)


def _read_failure(env: Env, path: str) -> ToolFailure:
    with pytest.raises(ToolFailure) as caught:
        env.ws.read(ReadTextFileArgs(path=path))
    assert_no_leak(env, caught.value.message)
    return caught.value


def test_a_folder_swapped_for_a_link_out_after_the_check_is_not_followed(env, monkeypatch):
    (env.tmp / "outside" / "guide.md").write_text(f"{MARKER} guide\n")

    def swap():
        (env.root / "docs" / "guide.md").unlink()
        (env.root / "docs").rmdir()
        (env.root / "docs").symlink_to(env.tmp / "outside", target_is_directory=True)

    _swap_after_resolve(env, monkeypatch, swap)
    failure = _read_failure(env, "docs/guide.md")
    assert (failure.code, failure.message) == (
        "FORBIDDEN", "'/workspace/docs/guide.md': changed while being opened (a symbolic link appeared on the "
                     "way); not followed")  # fmt: skip
    assert env.ws.reads == 0


def test_a_file_swapped_for_a_link_out_after_the_check_is_not_followed(env, monkeypatch):
    def swap():
        (env.root / "notes.txt").unlink()
        (env.root / "notes.txt").symlink_to(env.tmp / "outside" / "notes.txt")

    _swap_after_resolve(env, monkeypatch, swap)
    assert _read_failure(env, "notes.txt").code == "FORBIDDEN"


def test_a_folder_removed_after_the_check_is_not_found(env, monkeypatch):
    def swap():
        (env.root / "docs" / "guide.md").unlink()
        (env.root / "docs").rmdir()

    _swap_after_resolve(env, monkeypatch, swap)
    failure = _read_failure(env, "/workspace/docs/guide.md")
    assert (failure.code, failure.message) == ("NOT_FOUND", "'/workspace/docs/guide.md': no such file")


def test_links_inside_the_root_still_work_when_opened_component_by_component(env):
    (env.root / "shortcut").symlink_to(env.root / "docs", target_is_directory=True)
    assert env.ws.read(ReadTextFileArgs(path="shortcut/guide.md")) == ("/workspace/docs/guide.md", "# guide\n")


# --- very large files: bounded memory, whole reads capped --------------------------------------

BIG = 50 * 1024 * 1024


def bounded_peak(func, *args):
    """Run func(*args); return (its result or the ToolFailure it raised, peak traced bytes)."""
    tracemalloc.start()
    try:
        try:
            value = func(*args)
        except ToolFailure as failure:
            value = failure
        return value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture
def big_file(env) -> Path:
    """~50 MB (sparse): ten lines, 50 MB of NUL bytes without a newline, ten lines."""
    path = env.root / "big.log"
    with path.open("wb") as file:
        file.write(b"".join(f"head {n}\n".encode() for n in range(10)))
        file.seek(BIG)
        file.write(b"".join(f"tail {n}\n".encode() for n in range(10)))
    return path


@pytest.mark.parametrize(
    ("options", "expected"),
    [({"head": 5}, "".join(f"head {n}\n" for n in range(5))), ({"tail": 5}, "".join(f"tail {n}\n" for n in range(5, 10)))],
)
def test_head_and_tail_of_a_50_mb_file_read_bounded_blocks(env, big_file, options, expected):
    text, peak = bounded_peak(env.ws.read_text_file, ReadTextFileArgs(path="big.log", **options))
    assert text == expected
    assert peak < 5 * 1024 * 1024


@pytest.mark.parametrize("options", [{}, {"head": 11}, {"tail": 11}, {"head": 10**9}, {"tail": 10**9}])
def test_reading_across_50_mb_without_newlines_is_refused_in_bounded_memory(env, big_file, options):
    failure, peak = bounded_peak(env.ws.read_text_file, ReadTextFileArgs(path="big.log", **options))
    assert isinstance(failure, ToolFailure), "a 50 MB answer came back"
    assert failure.code == "INVALID_INPUT"
    assert peak < 5 * 1024 * 1024
    if not options:
        assert failure.message == (
            f"'/workspace/big.log': file is too large to read whole; use head or tail (limit {MAX_WHOLE_FILE_BYTES} bytes)"
        )
    else:
        assert failure.message == f"'/workspace/big.log': the lines asked for are too large; ask for fewer (limit {MAX_LINES_BYTES} bytes)"


def test_tail_of_an_unterminated_last_line_does_not_read_the_line_before(env):
    path = env.root / "one_long_line.txt"
    with path.open("wb") as file:
        file.seek(BIG)  # 50 MB of NUL bytes, then a short last line without "\n"
        file.write(b"\nlast")
    text, peak = bounded_peak(env.ws.read_text_file, ReadTextFileArgs(path="one_long_line.txt", tail=1))
    assert text == "last"
    assert peak < 5 * 1024 * 1024


def test_the_whole_file_cap_is_exact(env):
    (env.root / "at_cap.txt").write_bytes(b"x" * (MAX_WHOLE_FILE_BYTES - 1) + b"\n")
    (env.root / "over_cap.txt").write_bytes(b"x" * MAX_WHOLE_FILE_BYTES + b"\n")
    assert len(outcome(env, "at_cap.txt")[1]) == MAX_WHOLE_FILE_BYTES
    assert code_of(env, "over_cap.txt") == "INVALID_INPUT"
    assert outcome(env, "over_cap.txt", tail=1)[0] == "INVALID_INPUT"  # that one line is too long too
    assert outcome(env, "at_cap.txt", head=1)[0] == "OK"


@pytest.mark.anyio
async def test_whole_read_of_a_big_file_is_refused_through_the_server(env, big_file):
    async with Client(build_server(env.ws)) as client:
        await client.list_tools()
        whole = await client.call_tool(TOOL, {"path": "/workspace/big.log"})
        tail = await client.call_tool(TOOL, {"path": "/workspace/big.log", "tail": 2})
    assert whole.is_error and whole.content[0].text.startswith("INVALID_INPUT: ")
    assert "use head or tail" in whole.content[0].text
    assert not tail.is_error and tail.structured_content["text"] == "tail 8\ntail 9\n"


# --- a representative subset through the MCP server ----------------------------------------------

SERVER_CASES = [
    ("../outside/secret.txt", "FORBIDDEN"),
    ("../../../../../../../../../../etc/passwd", "FORBIDDEN"),
    ("/etc/passwd", "FORBIDDEN"),
    ("/workspace_evil/secret.txt", "FORBIDDEN"),
    ("{tmp}/root_evil/secret.txt", "FORBIDDEN"),
    ("{root}/notes.txt", "FORBIDDEN"),
    ("leak.txt", "FORBIDDEN"),
    ("outdir/secret.txt", "FORBIDDEN"),
    ("ghost.txt", "FORBIDDEN"),
    ("gone.txt", "NOT_FOUND"),
    ("loop", "INVALID_INPUT"),
    ("notes.txt\x00", "INVALID_INPUT"),
    ("notes.txt\n", "INVALID_INPUT"),
    ("evil\u202etxt.md", "INVALID_INPUT"),
    ("..\\..\\etc\\passwd", "NOT_FOUND"),
    ("C:\\Windows\\win.ini", "NOT_FOUND"),
    ("//server/share/x", "FORBIDDEN"),
    ("%2e%2e%2foutside%2fsecret.txt", "NOT_FOUND"),
    ("．．／outside／secret.txt", "NOT_FOUND"),
    ("~root/x", "NOT_FOUND"),
    ("notes.txt ", "NOT_FOUND"),
    ("", "INVALID_INPUT"),
    ("a" * 10_000, "INVALID_INPUT"),
    ("b" * 256, "INVALID_INPUT"),
    ("docs", "INVALID_INPUT"),
    ("notes.txt/", "INVALID_INPUT"),
]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_attack_subset_through_the_server(env, mode):
    (env.root / "leak.txt").symlink_to(env.tmp / "outside" / "secret.txt")
    (env.root / "outdir").symlink_to(env.tmp / "outside")
    (env.root / "ghost.txt").symlink_to(env.tmp / "outside" / "absent.txt")
    (env.root / "gone.txt").symlink_to("absent.txt")
    (env.root / "loop").symlink_to("loop")
    async with Client(build_server(env.ws), mode=mode) as client:
        await client.list_tools()
        for template, code in SERVER_CASES:
            path = template.format(tmp=env.tmp, root=env.root)
            result = await client.call_tool(TOOL, {"path": path})
            assert result.is_error, path
            assert result.structured_content is None  # an error is text only
            assert result.content[0].text.startswith(f"{code}: "), (path, result.content[0].text)
            assert_no_leak(env, result.content[0].text)
        ok = await client.call_tool(TOOL, {"path": "/workspace/docs/../notes.txt", "head": 2})
    assert ok.structured_content == {"path": "/workspace/notes.txt", "text": "alpha\nbeta\n", "lines": 2}
    assert env.ws.reads == 1



# --- a link changed while it is being resolved ---------------------------------------------------


def _change_link_when_followed(env: Env, monkeypatch, link: Path, change) -> None:
    """Let realpath find `link` a link (its lstat), then change it before realpath reads it."""
    real_readlink = os.readlink

    def readlink_after_change(path, *args, **kwargs):
        if os.fspath(path) == str(link):
            change()
        return real_readlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "readlink", readlink_after_change)


@pytest.mark.parametrize("change", ["removed", "replaced by a file", "replaced by a folder"])
def test_a_link_changed_while_being_resolved_is_not_found(env, monkeypatch, change):
    link = env.root / "shortcut.txt"
    link.symlink_to("notes.txt")

    def swap():
        link.unlink()
        if change == "replaced by a file":
            link.write_text("new\n")
        elif change == "replaced by a folder":
            link.mkdir()

    _change_link_when_followed(env, monkeypatch, link, swap)
    failure = _read_failure(env, "shortcut.txt")
    assert (failure.code, failure.message) == ("NOT_FOUND", "'/workspace/shortcut.txt': no such file")


@pytest.mark.anyio
async def test_a_link_removed_while_being_resolved_is_not_found_through_the_server(env, monkeypatch):
    link = env.root / "docs" / "latest.md"
    link.symlink_to("guide.md")
    _change_link_when_followed(env, monkeypatch, link, link.unlink)
    async with Client(build_server(env.ws), mode="legacy") as client:
        result = await client.call_tool(TOOL, {"path": "/workspace/docs/latest.md"})
    assert result.is_error
    assert result.content[0].text == "NOT_FOUND: '/workspace/docs/latest.md': no such file"


def test_links_and_files_flipping_under_reads_are_never_an_internal_error(env):
    """A real race: a thread creates and removes links and a file while reads go on."""
    stop = threading.Event()

    def flip():
        while not stop.is_set():
            for name, target in (("link.txt", "notes.txt"), ("dirlink", "docs")):
                with contextlib.suppress(FileExistsError):
                    (env.root / name).symlink_to(target)
                with contextlib.suppress(FileNotFoundError):
                    (env.root / name).unlink()
            (env.root / "gone.txt").write_text("here\n")
            (env.root / "gone.txt").unlink()

    flipper = threading.Thread(target=flip)
    flipper.start()
    codes: collections.Counter[str] = collections.Counter()
    try:
        for _ in range(1500):
            for path in ("link.txt", "dirlink/guide.md", "gone.txt"):
                codes[code_of(env, path)] += 1  # outcome() fails on anything but a ToolFailure or a read
    finally:
        stop.set()
        flipper.join()
    assert set(codes) <= {"OK", "NOT_FOUND", "FORBIDDEN"}, codes  # FORBIDDEN: a link appeared mid-open


# --- hard links ----------------------------------------------------------------------------------


def test_a_hard_link_to_a_file_outside_is_forbidden(env):
    os.link(env.tmp / "outside" / "secret.txt", env.root / "innocent.txt")
    code, message = outcome(env, "innocent.txt")
    assert (code, message) == ("FORBIDDEN", "'/workspace/innocent.txt': has 2 hard links, so it may be a file "
                                            "from outside /workspace; not read")  # fmt: skip
    assert env.ws.reads == 0
    for options in ({"head": 1}, {"tail": 1}):
        assert code_of(env, "/workspace/innocent.txt", **options) == "FORBIDDEN"


def test_a_hard_link_inside_the_root_is_forbidden_too(env):
    """Both names inside: the server cannot tell where the other name is, so it refuses both."""
    os.link(env.root / "notes.txt", env.root / "docs" / "copy.txt")
    assert code_of(env, "notes.txt") == code_of(env, "docs/copy.txt") == "FORBIDDEN"
    (env.root / "docs" / "copy.txt").unlink()
    assert outcome(env, "notes.txt") == ("OK", NOTES)  # one name again: read


def test_a_symlink_to_a_hard_linked_file_is_forbidden(env):
    os.link(env.tmp / "outside" / "secret.txt", env.root / "docs" / "h.txt")
    (env.root / "alias.txt").symlink_to("docs/h.txt")
    assert outcome(env, "alias.txt") == ("FORBIDDEN", "'/workspace/docs/h.txt': has 2 hard links, so it may be a "
                                                      "file from outside /workspace; not read")  # fmt: skip


@pytest.mark.anyio
async def test_a_hard_link_is_forbidden_through_the_server(env):
    os.link(env.tmp / "outside" / "secret.txt", env.root / "innocent.txt")
    async with Client(build_server(env.ws), mode="legacy") as client:
        result = await client.call_tool(TOOL, {"path": "innocent.txt", "head": 5})
    assert result.is_error and result.content[0].text.startswith("FORBIDDEN: ")
    assert_no_leak(env, result.content[0].text)


def test_the_printable_ascii_shortcut_refuses_what_the_category_check_refuses():
    """check_path_text skips the per-character look for printable ASCII: it must hold none to refuse."""
    from course_lib.fs_server import _INVISIBLE

    for code in range(128):
        assert (unicodedata.category(chr(code)) in _INVISIBLE) is (not chr(code).isprintable()), hex(code)
