# The workshop's JupyterHub settings: one file, loaded as it is by every deployment.
#
#   here (tests, benchmark, `make hub`)  workshop/local_config.py loads it, then adds a local spawner
#   one VM, The Littlest JupyterHub      linked into /opt/tljh/config/jupyterhub_config.d/ (workshop/tljh.sh)
#   Kubernetes, Zero to JupyterHub       mounted into the hub pod's jupyterhub_config.d by hub.extraFiles
#                                        (workshop/kubernetes/config.yaml)
#
# Each deployment brings its own spawner (local processes, systemd units, pods); everything a
# learner meets is set here: how they log in, where they land, what the course is, how long an
# idle server lives, how much memory and CPU one learner gets, and the instructor's room view.
# It runs in the hub's Python (TLJH's hub venv, z2jh's hub image): the standard library only,
# JupyterHub 5.3 or newer (SharedPasswordAuthenticator), Python 3.8 syntax.
#
# Secrets are never in this file or in git. Each setting is an environment variable, or a line
# NAME=value in the file named by WORKSHOP_PASSWORD_FILE (default /etc/tool-calling-course/workshop.env,
# readable by root only; `make hub` writes build/workshop/passwords.env):
#
#   WORKSHOP_PASSWORD        the learners' one password (8 characters or more), written on the board
#   WORKSHOP_ADMIN_PASSWORD  the instructor's (32 or more; JupyterHub refuses a shorter admin password)
#   WORKSHOP_ADMINS          the instructor names that log in with it (default: instructor)
#   WORKSHOP_EDITION         en or zh-CN: which edition's notebook 00 a learner lands on (default en)
#   WORKSHOP_COURSE_REPO     the git repository nbgitpuller copies into each home (default: the public one)
#   WORKSHOP_ROOM            off: no room view (Kubernetes without a shared volume); default on
#   WORKSHOP_PROGRESS_FILES  where the room view finds each learner's progress file ({username})
#   WORKSHOP_ROOM_PORT       the room view's port on the hub's machine (default 10101), or
#   WORKSHOP_ROOM_URL        its whole URL as the proxy reaches it, with WORKSHOP_ROOM_BIND_IP to listen on
import os
import sys
from urllib.parse import urlencode

# `c`, the configuration, is given by whoever loads this file (traitlets' loader, TLJH, z2jh).

COURSE_REPO = "https://github.com/OWNER/REPO"  # aimed by `python binder/links.py org/name`
TARGET = "tool-calling-course"  # the folder nbgitpuller makes in each home
NOTEBOOK_00 = {"en": "notebooks/00_map_and_first_run.ipynb", "zh-CN": "notebooks/zh-CN/00_map_and_first_run.ipynb"}
# Where a learner enters their server: JupyterLab itself, or for zh-CN the course's server extension
# (course_lib.lab_edition), which sets JupyterLab's own language to Chinese, then opens lab/tree/<path>
# (binder/links.py's ENTRY: the Chinese guide's links enter the same way).
ENTRY = {"en": "lab/tree", "zh-CN": "course/zh-CN"}
LAB_EDITION = "course_lib.lab_edition"
PROGRESS_IN_HOME = ".tool-calling-course/progress.sqlite3"  # course_lib.progress.IN_HOME

# Per learner, from benchmarks/workshop.py (notebooks 00, 06, 09 through this hub, 1–8 learners at
# once; benchmarks/README.md, INSTRUCTOR.md's sizing table). Measured RSS: the server 126 MB, each
# kernel 176–199 MB. The limit holds the server and three kernels (726 MB) with a third to spare
# (kernel culling below keeps a learner near three); the guarantee, what Kubernetes reserves on a
# node, is the usual learner: the server and two kernels (506 MB).
MEM_LIMIT = "1G"
MEM_GUARANTEE = "512M"
# A kernel keeps one core busy at most: more buys a learner nothing. A learner uses about 1 % of a
# core on average; what needs CPU is the whole room opening a notebook at once (3–8 CPU-s each:
# kernel start, imports, the cells), and eight learners per core serve that burst in about 30 s.
CPU_LIMIT = 1.0
CPU_GUARANTEE = 0.125

# The idle culler stops a server nobody has used for IDLE_TIMEOUT seconds. An open JupyterLab tab
# keeps its server alive (it talks to it every few seconds), so this only reaps laptops that were
# closed or slept. An hour outlasts every break in INSTRUCTOR.md's plans (15 minutes) and a long
# question round, so nobody returns to a restarted kernel after a coffee; it still frees the
# memory of a learner who left at half time before the next session starts. TLJH's default (10
# minutes) would restart the kernels of everyone whose laptop slept through a break.
IDLE_TIMEOUT = 3600
CULL_EVERY = 300
# Inside a server, JupyterLab keeps the kernel of every notebook a learner opened (each one ~200 MB,
# benchmarks/README.md), so a learner who goes 00 → 02 → 03 → 04 holds four. A kernel nobody has
# run anything in for half an hour is shut down, even with its tab open: the plans move on every
# 15–20 minutes, so that notebook is behind the learner, and Restart & Run All brings it back in
# under half a minute. A busy kernel is never shut down. This is what keeps one learner inside
# MEM_LIMIT: the server and about three kernels.
KERNEL_IDLE_TIMEOUT = 1800


def _settings():
    """The WORKSHOP_* settings: the password file's NAME=value lines, overridden by the environment."""
    found = {}
    path = os.environ.get("WORKSHOP_PASSWORD_FILE", "/etc/tool-calling-course/workshop.env")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                name, sep, value = line.strip().partition("=")
                if sep and name.startswith("WORKSHOP_") and not line.lstrip().startswith("#"):
                    found[name.strip()] = value.strip().strip("'\"")
    found.update((k, v) for k, v in os.environ.items() if k.startswith("WORKSHOP_"))
    return found


settings = _settings()
if not settings.get("WORKSHOP_PASSWORD"):
    raise SystemExit("workshop: no learner password. Set WORKSHOP_PASSWORD, or put WORKSHOP_PASSWORD=... in "
                     "the file WORKSHOP_PASSWORD_FILE names (see workshop/README.md).")
edition = settings.get("WORKSHOP_EDITION", "en")
if edition not in NOTEBOOK_00:
    raise SystemExit(f"workshop: WORKSHOP_EDITION={edition!r}: use en or zh-CN")
admins = {name.strip() for name in settings.get("WORKSHOP_ADMINS", "instructor").split(",") if name.strip()}
repo = settings.get("WORKSHOP_COURSE_REPO", COURSE_REPO)


def git_pull_path(notebook):
    """The path (under a learner's server) that pulls the course into their home, then opens `notebook`.
    binder/links.py builds the same link for handing out (tests/test_hub.py checks they agree)."""
    query = urlencode({"repo": repo, "targetpath": TARGET, "urlpath": f"{ENTRY[edition]}/{TARGET}/{notebook}"},
                      safe="/:")  # fmt: skip
    return f"/git-pull?{query}"


# ---- logging in: any name, one password --------------------------------------------------------
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = settings["WORKSHOP_PASSWORD"]
c.SharedPasswordAuthenticator.admin_password = settings.get("WORKSHOP_ADMIN_PASSWORD") or None
c.Authenticator.admin_users = admins
c.Authenticator.allow_all = True  # any name: the password is what keeps the room's hub to the room
# Names become Unix users on TLJH (jupyter-<name>) and pod names on Kubernetes: plain ones only.
c.Authenticator.username_pattern = r"^[a-z0-9][a-z0-9._-]{0,31}$"
c.JupyterHub.template_vars = {"announcement_login": {
    "en": "Choose any name (letters, digits, . _ -) and type the workshop's password.",
    "zh-CN": "任意取一个名字（字母、数字、. _ -），再输入工作坊的密码。",
}[edition]}

# ---- where a learner lands: their own copy of the course, on notebook 00 -----------------------
# The first visit clones the course into ~/tool-calling-course (nbgitpuller); later visits pull
# the instructor's changes and never overwrite the learner's own edits. A zh-CN learner lands in
# JupyterLab with its menus in Chinese (ENTRY).
c.Spawner.default_url = git_pull_path(NOTEBOOK_00[edition])
# The "Jupyter news?" pop-up is answered "no" where the course is installed (binder/lab_settings.py,
# run by binder/postBuild, workshop/tljh.sh and `make hub`): it is a file of the environment, not
# of the hub. A spawn on a machine with thirty learners starting at once can take a while.
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 120
learner_args = [f"--MappingKernelManager.cull_idle_timeout={KERNEL_IDLE_TIMEOUT}",
                "--MappingKernelManager.cull_interval=300", "--MappingKernelManager.cull_connected=True",
                "--MappingKernelManager.cull_busy=False"]  # fmt: skip
if edition != "en":  # the landing goes through the extension: load it even where lab_settings.py did not enable it
    learner_args.append(f"--ServerApp.jpserver_extensions={LAB_EDITION}=True")
c.Spawner.args = learner_args

# ---- one learner's share of the machine ---------------------------------------------------------
# Enforced by TLJH's systemd spawner and by Kubernetes; the local spawner only passes them on
# (MEM_LIMIT, CPU_LIMIT in the server's environment). z2jh's config.yaml repeats them as the
# chart's singleuser.memory/cpu (tests/test_hub.py checks both say the same).
c.Spawner.mem_limit = MEM_LIMIT
c.Spawner.mem_guarantee = MEM_GUARANTEE
c.Spawner.cpu_limit = CPU_LIMIT
c.Spawner.cpu_guarantee = CPU_GUARANTEE

# ---- services: the idle culler and the instructor's room view -----------------------------------
room_url = settings.get("WORKSHOP_ROOM_URL") or f"http://127.0.0.1:{int(settings.get('WORKSHOP_ROOM_PORT', '10101'))}"
progress_files = settings.get("WORKSHOP_PROGRESS_FILES", "/home/jupyter-{username}/" + PROGRESS_IN_HOME)
here = os.path.dirname(os.path.realpath(__file__)) if "__file__" in globals() else ""
room_script = settings.get("WORKSHOP_ROOM_SCRIPT") or os.path.join(here, "room.py")

# TLJH and z2jh each add their own culler unless told not to: keep one, this one.
others = [s for s in (c.JupyterHub.get("services") or []) if isinstance(s, dict)]
services = [{"name": "idle-culler",
             "command": [sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={IDLE_TIMEOUT}",
                         f"--cull-every={CULL_EVERY}", "--cull-admin-users=false"]}]  # fmt: skip
# What each service may do with the hub's API, and nothing more.
roles = [{"name": "idle-culler", "services": ["idle-culler"],
          "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]}]  # fmt: skip
if settings.get("WORKSHOP_ROOM", "on") != "off":
    services.append({"name": "room", "url": room_url, "display": True, "oauth_no_confirm": True,
                     "command": [sys.executable, room_script],
                     "environment": {"WORKSHOP_PROGRESS_FILES": progress_files, "WORKSHOP_EDITION": edition,
                                     "WORKSHOP_ROOM_BIND_IP": settings.get("WORKSHOP_ROOM_BIND_IP", "")}})  # fmt: skip
    roles.append({"name": "room", "services": ["room"], "scopes": ["list:users", "read:users"]})
theirs = {"cull-idle", "jupyterhub-idle-culler"} | {s["name"] for s in services}
c.JupyterHub.services = [s for s in others if s.get("name") not in theirs] + services
c.JupyterHub.load_roles = [r for r in (c.JupyterHub.get("load_roles") or [])
                           if isinstance(r, dict) and r.get("name") not in theirs] + roles  # fmt: skip
# Only admins may open the room view: their role carries access:services, a learner's does not
# (and room.py checks the admin flag again).
