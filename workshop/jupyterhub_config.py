# The workshop's JupyterHub settings: one file, loaded as it is by every deployment.
#
#   here (tests, benchmark, `make hub`)  workshop/local_config.py loads it, then adds a local spawner
#                                        and the idle culler
#   one VM, The Littlest JupyterHub      linked into /opt/tljh/config/jupyterhub_config.d/ (workshop/tljh.sh);
#                                        TLJH's own culler, set by tljh.sh
#   Kubernetes, Zero to JupyterHub       mounted into the hub pod's jupyterhub_config.d by hub.extraFiles
#                                        (workshop/kubernetes/config.yaml); the chart's own culler
#
# Each deployment brings its own spawner (local processes, systemd units, pods) and its own idle
# culler; everything a learner meets is set here: how they log in (and how often they may fail),
# where they land, what the course is, how much memory and CPU one learner gets and how many may
# run at once, and the instructor's room view. It runs in the hub's Python (TLJH's hub venv, z2jh's
# hub image): the standard library and JupyterHub 5.3 or newer (SharedPasswordAuthenticator).
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
#   WORKSHOP_MAX_SERVERS     how many learners' servers may run at once (default: what this machine
#                            holds, from benchmarks/workshop.py's figures; required on Kubernetes)
#   WORKSHOP_LOGIN_NAME_TRIES, WORKSHOP_LOGIN_ADDRESS_TRIES, WORKSHOP_LOGIN_LOCK_SECONDS
#                            login throttling (see LOGIN_* below)
#   WORKSHOP_CULLER          on: run the idle culler (local_config.py; TLJH and z2jh run their own)
#   WORKSHOP_ROOM            off: no room view; default on
#   WORKSHOP_ROOM_PORT       the room view's port (default 10101); WORKSHOP_ROOM_HOST the address the
#                            proxy reaches it at (default 127.0.0.1; on Kubernetes the hub pod's IP)
#   WORKSHOP_ROOM_API        where a learner's server sends its progress (default: the room itself;
#                            on Kubernetes through the proxy, http://proxy-public/services/room/api/progress)
#   WORKSHOP_ROOM_DB         the room's own SQLite file (default beside the hub's database)
#   WORKSHOP_HUB_API_URL     the hub's API as the room reaches it (on Kubernetes http://localhost:8081/hub/api)
import math
import os
import sys
import time
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
PROGRESS_RELAY = "course_lib.progress"  # the learner's server sends their progress summary to the room view
HUB_KERNELS = "course_lib.hub_kernels"  # kernels over Unix sockets: no TCP port race between learners' servers
ROOM_PREFIX = "/services/room/"

# Per learner, from benchmarks/workshop.py (benchmarks/README.md, INSTRUCTOR.md's sizing table):
# the server (JupyterLab) holds about 128 MB; each kernel with a notebook run 170–225 MB, and while
# 03b runs, its two Node processes (the reference server, the MCP Inspector) add about 165 MB. The
# hub shuts down a kernel idle for KERNEL_IDLE_TIMEOUT and INSTRUCTOR.md's plans open at most two
# notebooks per block, so a learner keeps three kernels, four for a while after a block starts:
# the server with four kernels measured 834 MB. The limit holds that with a sixth to spare; the
# guarantee, what Kubernetes reserves on a node, is the server and two kernels (about 490 MB).
MEM_LIMIT = "1G"
MEM_GUARANTEE = "512M"
MEM_PER_LEARNER = 0.85 * 2**30  # the server and four kernels, measured: what to plan per learner
SYSTEM_RESERVE = 2**30  # the system, the hub, its proxy and the room view (measured: about 0.3 GB)
# A kernel keeps one core busy at most: more buys a learner nothing. A learner uses about 1 % of a
# core on average; what needs CPU is the whole room opening a notebook at once (3–8 CPU-s each:
# kernel start, imports, the cells), and eight learners per core serve that burst in about 20 s.
CPU_LIMIT = 1.0
CPU_GUARANTEE = 0.125
LEARNERS_PER_CORE = 8

# The idle culler (each deployment's own: local_config.py here, TLJH's by tljh.sh, the chart's on
# Kubernetes, all with these figures) stops a server nobody has used for IDLE_TIMEOUT seconds. An
# open JupyterLab tab keeps its server alive (it talks to it every few seconds), so this only reaps
# laptops that were closed or slept. An hour outlasts every break in INSTRUCTOR.md's plans (15
# minutes) and a long question round, so nobody returns to a restarted kernel after a coffee; it
# still frees the memory of a learner who left at half time before the next session starts.
# TLJH's default (10 minutes) would restart the kernels of everyone whose laptop slept through a break.
IDLE_TIMEOUT = 3600
CULL_EVERY = 300
# Inside a server, JupyterLab keeps the kernel of every notebook a learner opened (each ~200 MB),
# so a learner who goes 00 → 02 → 03 → 04 holds four. A kernel nobody has run anything in for half
# an hour is shut down, even with its tab open: the plans move on every 15–50 minutes, so that
# notebook is behind the learner, and Restart & Run All brings it back in under half a minute. A
# busy kernel is never shut down. This is what keeps one learner inside MEM_LIMIT.
# (The check runs every 5 minutes: a kernel lives 30 to 35 minutes after its notebook's last run.)
KERNEL_IDLE_TIMEOUT = 1800

# Logging in: one password for the whole room, so guessing is throttled. A name that fails
# LOGIN_NAME_TRIES times within LOGIN_WINDOW seconds waits LOGIN_LOCK_SECONDS before its next try,
# doubling with every further failure (at most LOGIN_LOCK_MAX); an address (the learner's, as the
# proxy forwards it) that fails LOGIN_ADDRESS_TRIES times waits the same way. A room on one Wi-Fi
# often reaches the hub from one address: 30 wrong passwords in 10 minutes is far more than a room
# mistypes, and far less than guessing needs. While a name or address waits, no password is checked.
LOGIN_NAME_TRIES = 5
LOGIN_ADDRESS_TRIES = 30
LOGIN_LOCK_SECONDS = 30
LOGIN_LOCK_MAX = 300
LOGIN_WINDOW = 600
# Names become Unix users on TLJH (jupyter-<name>) and pod names on Kubernetes: plain ones only.
# Capitals are fine: JupyterHub makes a name lowercase before it checks it.
USERNAME_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,31}$"
BROWSER_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._\-]{0,31}"  # the same for the login form (HTML's `v` regex syntax)
WORDS = {
    "en": {"rule": "Choose any name: 1–32 letters a–z, digits, “.”, “_” or “-”, starting with a letter or a "
                   "digit (no spaces). Then type the workshop's password.",
           "bad_name": "“{name}” cannot be a name here: use 1–32 letters a–z, digits, “.”, “_” or “-”, starting "
                       "with a letter or a digit (no spaces). Your password was not checked.",
           "recorded": "The instructor sees how your exercise checks went (the room view); nothing leaves this hub.",
           "wait": "Too many wrong passwords {who}: wait {seconds} s, then try again.",
           "for_name": "for this name", "for_address": "from this network address"},
    "zh-CN": {"rule": "任意取一个名字：1–32 个字符，可用字母 a–z、数字、“.”、“_”或“-”，以字母或数字开头（不要空格）。"
                      "然后输入工作坊的密码。",
              "bad_name": "“{name}”不能用作名字：请用 1–32 个字母 a–z、数字、“.”、“_”或“-”，以字母或数字开头（不要空格）。"
                          "密码尚未核对。",
              "recorded": "讲师能看到你的练习检查结果（课堂视图）；这些数据不会离开这个 hub。",
              "wait": "{who}密码错误次数太多：请等 {seconds} 秒再试。",
              "for_name": "这个名字的", "for_address": "这个网络地址的"},
}  # fmt: skip


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
if len(settings.get("WORKSHOP_PASSWORD", "")) < 8:
    raise SystemExit("workshop: no learner password of 8 characters or more. Set WORKSHOP_PASSWORD, or put "
                     "WORKSHOP_PASSWORD=... in the file WORKSHOP_PASSWORD_FILE names (see workshop/README.md).")
if len(settings.get("WORKSHOP_ADMIN_PASSWORD", "")) < 32 or settings["WORKSHOP_ADMIN_PASSWORD"] == settings["WORKSHOP_PASSWORD"]:
    raise SystemExit("workshop: no admin password of 32 characters or more (other than the learners'): set "
                     "WORKSHOP_ADMIN_PASSWORD as WORKSHOP_PASSWORD (see workshop/README.md).")
edition = settings.get("WORKSHOP_EDITION", "en")
if edition not in NOTEBOOK_00:
    raise SystemExit(f"workshop: WORKSHOP_EDITION={edition!r}: use en or zh-CN")
admins = {name.strip() for name in settings.get("WORKSHOP_ADMINS", "instructor").split(",") if name.strip()}
repo = settings.get("WORKSHOP_COURSE_REPO", COURSE_REPO)
words = WORDS[edition]


def git_pull_path(notebook):
    """The path (under a learner's server) that pulls the course into their home, then opens `notebook`.
    binder/links.py builds the same link for handing out (tests/test_hub.py checks they agree)."""
    query = urlencode({"repo": repo, "targetpath": TARGET, "urlpath": f"{ENTRY[edition]}/{TARGET}/{notebook}"},
                      safe="/:")  # fmt: skip
    return f"/git-pull?{query}"


def machine_servers(memory=None, cores=None):
    """How many learners' servers this machine holds at once: its memory less SYSTEM_RESERVE over
    MEM_PER_LEARNER, and LEARNERS_PER_CORE per core, whichever is fewer (at least 1)."""
    if memory is None:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    cores = cores or os.cpu_count() or 1
    return max(1, min(int((memory - SYSTEM_RESERVE) // MEM_PER_LEARNER), cores * LEARNERS_PER_CORE))


# ---- logging in: any name, one password, throttled -----------------------------------------------
from jupyterhub.authenticators.shared import SharedPasswordAuthenticator  # noqa: E402
from tornado import web  # noqa: E402


class Throttle:
    """Failures per key (a name, an address) in the last `window` seconds; after `free` of them each
    further try waits `lock` seconds, doubled per further failure, at most `most`."""

    def __init__(self, free, lock, most=LOGIN_LOCK_MAX, window=LOGIN_WINDOW, clock=time.monotonic):
        self.free, self.lock, self.most, self.window, self.clock = free, lock, most, window, clock
        self.failures, self.until = {}, {}

    def wait(self, key):
        """Seconds `key` must still wait before a password is checked for it (0: none)."""
        return max(0.0, self.until.get(key, 0.0) - self.clock())

    def failed(self, key):
        now = self.clock()
        recent = [t for t in self.failures.get(key, []) if now - t < self.window] + [now]
        self.failures[key] = recent
        if len(recent) >= self.free:
            self.until[key] = now + min(self.most, self.lock * 2 ** (len(recent) - self.free))
        if len(self.failures) > 10_000:  # forget the quiet ones: memory stays bounded under a flood
            for old in [k for k, times in self.failures.items() if now - times[-1] >= self.window]:
                self.failures.pop(old, None)
                self.until.pop(old, None)

    def succeeded(self, key):
        self.failures.pop(key, None)
        self.until.pop(key, None)


class WorkshopAuthenticator(SharedPasswordAuthenticator):
    """JupyterHub's shared-password login, with the name rule said in words and failures throttled
    per name and per address (`Throttle`). Refusals are HTTP errors with a message: the hub's login
    page shows it in place of "Invalid username or password", and keeps the name typed."""

    names = Throttle(int(settings.get("WORKSHOP_LOGIN_NAME_TRIES", LOGIN_NAME_TRIES)),
                     float(settings.get("WORKSHOP_LOGIN_LOCK_SECONDS", LOGIN_LOCK_SECONDS)))  # fmt: skip
    addresses = Throttle(int(settings.get("WORKSHOP_LOGIN_ADDRESS_TRIES", LOGIN_ADDRESS_TRIES)),
                         float(settings.get("WORKSHOP_LOGIN_LOCK_SECONDS", LOGIN_LOCK_SECONDS)))  # fmt: skip

    async def authenticate(self, handler, data):
        name = self.normalize_username(str(data.get("username", "")))
        if not self.validate_username(name):
            raise web.HTTPError(403, words["bad_name"].format(name=name[:40]))
        address = handler.request.remote_ip if handler is not None else ""
        waits = {"for_name": self.names.wait(name), "for_address": self.addresses.wait(address)}
        who, wait = max(waits.items(), key=lambda item: item[1])
        if wait > 0:
            self.log.warning("Login throttled: %s from %s (%.0f s left)", name, address, wait)
            raise web.HTTPError(429, words["wait"].format(who=words[who], seconds=math.ceil(wait)))
        user = await super().authenticate(handler, data)
        if user is None:
            self.names.failed(name)
            self.addresses.failed(address)
        else:
            self.names.succeeded(name)
        return user


c.JupyterHub.authenticator_class = WorkshopAuthenticator
c.SharedPasswordAuthenticator.user_password = settings["WORKSHOP_PASSWORD"]
c.SharedPasswordAuthenticator.admin_password = settings["WORKSHOP_ADMIN_PASSWORD"]
c.Authenticator.admin_users = admins
c.Authenticator.allow_all = True  # any name: the password is what keeps the room's hub to the room
c.Authenticator.username_pattern = USERNAME_PATTERN
# Said at the login form, and checked there by the browser before the form is sent (a learner who
# typed a space keeps the password they typed); the hub checks it again (WorkshopAuthenticator).
# The form also says what the instructor sees of a learner's work.
_rule, _recorded = words["rule"].replace("<", "&lt;"), words["recorded"].replace("<", "&lt;")
c.JupyterHub.template_vars = {"announcement_login": (
    f'<span id="name-rule">{_rule}</span> <span id="recorded">{_recorded}</span><script>document.addEventListener("DOMContentLoaded", () => {{'
    f'const u = document.getElementById("username_input"); if (!u) return; u.required = true; '
    f'u.pattern = {BROWSER_PATTERN!r}; u.title = document.getElementById("name-rule").textContent; }});</script>')}

# ---- how many servers at once ---------------------------------------------------------------------
# Anyone with the board's password can make a new name, and each name a server: the hub refuses a
# server start beyond what the machine holds (the learner sees JupyterHub's "Active user limit
# exceeded. Try again in a few minutes."). On Kubernetes the cluster's size is not the hub pod's:
# config.yaml says it.
if settings.get("WORKSHOP_MAX_SERVERS"):
    c.JupyterHub.active_server_limit = int(settings["WORKSHOP_MAX_SERVERS"])
elif os.environ.get("KUBERNETES_SERVICE_HOST"):
    raise SystemExit("workshop: on Kubernetes set WORKSHOP_MAX_SERVERS (nodes × learners per node: workshop/README.md)")
else:
    c.JupyterHub.active_server_limit = machine_servers()

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
room_on = settings.get("WORKSHOP_ROOM", "on") != "off"
extensions = [HUB_KERNELS] + ([LAB_EDITION] if edition != "en" else []) + ([PROGRESS_RELAY] if room_on else [])
c.Spawner.args = [f"--MappingKernelManager.cull_idle_timeout={KERNEL_IDLE_TIMEOUT}",
                  "--MappingKernelManager.cull_interval=300", "--MappingKernelManager.cull_connected=True",
                  "--MappingKernelManager.cull_busy=False",
                  # The course's server extensions: kernels over Unix sockets, the zh-CN landing, the
                  # relay of progress to the room view (loaded here, whatever else enabled them).
                  *(f"--ServerApp.jpserver_extensions={name}=True" for name in extensions)]  # fmt: skip

# ---- one learner's share of the machine ---------------------------------------------------------
# Enforced by TLJH's systemd spawner and by Kubernetes; the local spawner only passes them on
# (MEM_LIMIT, CPU_LIMIT in the server's environment). z2jh's config.yaml repeats them as the
# chart's singleuser.memory/cpu (tests/test_workshop_files.py checks both say the same).
c.Spawner.mem_limit = MEM_LIMIT
c.Spawner.mem_guarantee = MEM_GUARANTEE
c.Spawner.cpu_limit = CPU_LIMIT
c.Spawner.cpu_guarantee = CPU_GUARANTEE

# ---- the idle culler, where the deployment has none (local_config.py) -----------------------------
if settings.get("WORKSHOP_CULLER") == "on":
    c.JupyterHub.services.extend([{"name": "idle-culler", "command": [
        sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={IDLE_TIMEOUT}", f"--cull-every={CULL_EVERY}",
        "--cull-admin-users=false"]}])  # fmt: skip
    c.JupyterHub.load_roles.extend([{"name": "idle-culler", "services": ["idle-culler"],
                                     "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]}])  # fmt: skip

# ---- the instructor's room view -----------------------------------------------------------------
# A hub-managed service (the hub starts and stops it, the proxy routes /services/room/ to it),
# admins only. Learners' servers send it their progress with their own hub token; it keeps it in
# its own SQLite file. Services are added with `extend`: loaded by TLJH's load_subconfig this file
# sees a fresh config, and traitlets then adds these to TLJH's (its culler stays); under z2jh, to
# the chart's list itself.
if room_on:
    room_port = int(settings.get("WORKSHOP_ROOM_PORT", "10101"))
    room_host = settings.get("WORKSHOP_ROOM_HOST", "127.0.0.1")
    room_url = f"http://{'[%s]' % room_host if ':' in room_host else room_host}:{room_port}"
    here = os.path.dirname(os.path.realpath(__file__)) if "__file__" in globals() else ""
    room_db = settings.get("WORKSHOP_ROOM_DB") or os.path.join(os.getcwd(), "workshop-room.sqlite3")
    c.JupyterHub.services.extend([{
        "name": "room", "url": room_url, "display": True, "oauth_no_confirm": True,
        "command": [sys.executable, settings.get("WORKSHOP_ROOM_SCRIPT") or os.path.join(here, "room.py")],
        # The room listens on its URL's host (127.0.0.1 here and on TLJH, the pod's IP on Kubernetes).
        "environment": {"WORKSHOP_EDITION": edition, "WORKSHOP_ROOM_DB": room_db,
                        "WORKSHOP_HUB_API_URL": settings.get("WORKSHOP_HUB_API_URL", "")},
    }])  # fmt: skip
    # What the room may do with the hub's API, and nothing more: list the learners, see their servers.
    c.JupyterHub.load_roles.extend([{"name": "room", "services": ["room"],
                                     "scopes": ["list:users", "read:users", "read:servers"]}])  # fmt: skip
    relay = {"WORKSHOP_ROOM_API": settings.get("WORKSHOP_ROOM_API") or room_url + ROOM_PREFIX + "api/progress"}
    c.Spawner.environment.update(relay)
    if "environment" in (c.get("KubeSpawner") or {}):  # z2jh's singleuser.extraEnv is KubeSpawner's: add to it
        c.KubeSpawner.environment.update(relay)
# Only admins may open the room view: their role carries access:services, a learner's does not
# (and room.py checks the admin flag again).
