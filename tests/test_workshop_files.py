"""The workshop's files for the other deployments, checked without a VM or a cluster.

- workshop/jupyterhub_config.py loaded the ways TLJH (load_subconfig, merged over TLJH's settings)
  and Zero to JupyterHub (exec in the chart's namespace) load it: the deployment's own culler kept,
  the room view added, the learners' servers told where to send their progress.
- workshop/kubernetes/config.yaml merged over the chart's default values with the --set-file flags
  of its command, validated against the chart's own published values schema (chart 4.4.0,
  tests/workshop_schemas/README.md): what `helm install` checks first.
- The figures each file repeats (limits, the culler's) are the one config's.

tljh.sh is run for real (with TLJH's commands standing in) by tests/test_workshop_tljh.py; the hub
itself by tests/test_hub.py and tests/test_workshop_safety.py.
"""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SCHEMAS = REPO / "tests" / "workshop_schemas"
CONFIG = REPO / "workshop" / "jupyterhub_config.py"
VALUES = REPO / "workshop" / "kubernetes" / "config.yaml"
CHART = "4.4.0"
SECRETS = {"WORKSHOP_PASSWORD": "a-learner-password", "WORKSHOP_ADMIN_PASSWORD": "an-admin-password-of-32-characters!"}


def _clean_environ(env: dict[str, str]):
    saved = {k: v for k, v in os.environ.items() if k.startswith("WORKSHOP_") or k == "KUBERNETES_SERVICE_HOST"}
    for key in saved:
        del os.environ[key]
    os.environ.update({"WORKSHOP_PASSWORD_FILE": "/nonexistent", **SECRETS, **env})
    return saved


def _restore(saved: dict[str, str]) -> None:
    for key in [k for k in os.environ if k.startswith("WORKSHOP_") or k == "KUBERNETES_SERVICE_HOST"]:
        del os.environ[key]
    os.environ.update(saved)


def load_config(**env: str):
    """workshop/jupyterhub_config.py as traitlets loads it for `jupyterhub -f` (TLJH's load_subconfig
    is the same loader), with WORKSHOP_* settings from `env` (the passwords given)."""
    from traitlets.config.loader import PyFileConfigLoader

    saved = _clean_environ(env)
    try:
        return PyFileConfigLoader("jupyterhub_config.py", str(REPO / "workshop")).load_config()
    finally:
        _restore(saved)


def z2jh_exec(chart_config, env: dict[str, str]) -> dict[str, Any]:
    """The config as z2jh runs a jupyterhub_config.d file: exec() in the chart's namespace, `c` its config."""
    saved = _clean_environ(env)
    namespace = {"c": chart_config, "__file__": "/usr/local/etc/jupyterhub/jupyterhub_config.py"}
    try:
        exec(compile(CONFIG.read_text(), "tool-calling-course.py", "exec"), namespace)
    finally:
        _restore(saved)
    return namespace


# ---- the one config, loaded as TLJH and z2jh load it ----------------------------------------------


def test_under_tljh_its_culler_stays_and_the_room_view_is_added():
    # TLJH's jupyterhub_config.py sets its culler, then load_subconfig()s each file of
    # jupyterhub_config.d: a separate Config merged in. The workshop's services are `extend`ed, so
    # traitlets adds them to TLJH's list instead of replacing it.
    from traitlets.config import Config

    tljh = Config()
    tljh.JupyterHub.services = [{"name": "cull-idle", "admin": True,
                                 "command": ["python3", "-m", "jupyterhub_idle_culler", "--timeout=3600"]}]  # fmt: skip
    tljh.merge(load_config())
    assert [s["name"] for s in tljh.JupyterHub.services] == ["cull-idle", "room"]
    room = tljh.JupyterHub.services[1]
    assert room["url"] == "http://127.0.0.1:10101" and room["command"][1] == str(REPO / "workshop" / "room.py")
    assert room["environment"]["WORKSHOP_ROOM_DB"].endswith("workshop-room.sqlite3")
    # Learners' servers send their progress to the room, straight (TLJH's servers run on its machine).
    assert tljh.Spawner.environment.to_dict()["update"]["WORKSHOP_ROOM_API"] == \
        "http://127.0.0.1:10101/services/room/api/progress"  # fmt: skip
    [role] = tljh.JupyterHub.load_roles.to_dict()["extend"]
    assert role == {"name": "room", "services": ["room"], "scopes": ["list:users", "read:users", "read:servers"]}


def _values() -> dict[str, Any]:
    return yaml.safe_load(VALUES.read_text())


def _k8s_env(pod_ip: str = "10.1.2.3") -> dict[str, str]:
    """config.yaml's hub.extraEnv as the hub pod gets it: secrets and the pod's IP filled in."""
    env = {}
    for name, value in _values()["hub"]["extraEnv"].items():
        if isinstance(value, dict):
            ref = value["valueFrom"]
            env[name] = SECRETS[ref["secretKeyRef"]["key"]] if "secretKeyRef" in ref else pod_ip
            assert "secretKeyRef" in ref or ref == {"fieldRef": {"fieldPath": "status.podIP"}}
        else:
            env[name] = str(value)
    return env


def test_under_z2jh_the_charts_culler_stays_and_the_room_runs_in_the_hub_pod():
    from traitlets.config import Config

    chart = Config()  # what the chart's jupyterhub_config.py has set when it execs jupyterhub_config.d
    chart.JupyterHub.services = [{"name": "jupyterhub-idle-culler",
                                  "command": ["python3", "-m", "jupyterhub_idle_culler", "--url=http://localhost:8081/hub/api"]}]  # fmt: skip
    chart.JupyterHub.load_roles = [{"name": "jupyterhub-idle-culler", "services": ["jupyterhub-idle-culler"]}]
    chart.KubeSpawner.environment = {"FROM_SINGLEUSER_EXTRAENV": "1"}
    z2jh_exec(chart, {**_k8s_env(), "KUBERNETES_SERVICE_HOST": "10.0.0.1"})
    assert [s["name"] for s in chart.JupyterHub.services] == ["jupyterhub-idle-culler", "room"]
    assert [r["name"] for r in chart.JupyterHub.load_roles] == ["jupyterhub-idle-culler", "room"]
    room = chart.JupyterHub.services[1]
    # The proxy and the hub's own check reach the room at the pod's address; the room reaches the
    # hub's API on localhost (as the chart's culler does); its database is on the hub's own volume.
    assert room["url"] == "http://10.1.2.3:10101"
    assert room["command"][1] == "/usr/local/etc/jupyterhub/room/room.py"
    assert room["environment"]["WORKSHOP_HUB_API_URL"] == "http://localhost:8081/hub/api"
    assert room["environment"]["WORKSHOP_ROOM_DB"] == "/srv/jupyterhub/workshop-room.sqlite3"
    # singleuser.extraEnv is KubeSpawner's environment, which outranks Spawner's: the relay's URL is in both.
    assert chart.KubeSpawner.environment == {"FROM_SINGLEUSER_EXTRAENV": "1",
                                             "WORKSHOP_ROOM_API": "http://proxy-public/services/room/api/progress"}  # fmt: skip
    assert chart.JupyterHub.active_server_limit == 100


def test_on_kubernetes_the_number_of_servers_must_be_said():
    env = {**_k8s_env(), "KUBERNETES_SERVICE_HOST": "10.0.0.1"}
    del env["WORKSHOP_MAX_SERVERS"]
    done = subprocess.run([sys.executable, "-c", "from traitlets.config.loader import PyFileConfigLoader as L; "
                           f"L('jupyterhub_config.py', {str(REPO / 'workshop')!r}).load_config()"],
                          env={"PATH": os.environ["PATH"], "WORKSHOP_PASSWORD_FILE": "/nonexistent", **env},
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == \
        "workshop: on Kubernetes set WORKSHOP_MAX_SERVERS (nodes × learners per node: workshop/README.md)"  # fmt: skip


@pytest.mark.parametrize("env, says", [
    ({"WORKSHOP_PASSWORD": ""}, "workshop: no learner password of 8 characters or more."),
    ({"WORKSHOP_PASSWORD": "short"}, "workshop: no learner password of 8 characters or more."),
    ({"WORKSHOP_ADMIN_PASSWORD": ""}, "workshop: no admin password of 32 characters or more"),
    ({"WORKSHOP_ADMIN_PASSWORD": "too-short-for-an-admin"}, "workshop: no admin password of 32 characters or more"),
    ({"WORKSHOP_ADMIN_PASSWORD": "x" * 40, "WORKSHOP_PASSWORD": "x" * 40}, "other than the learners'"),
    ({"WORKSHOP_EDITION": "fr"}, "workshop: WORKSHOP_EDITION='fr': use en or zh-CN"),
])  # fmt: skip
def test_the_config_refuses_to_start_without_its_passwords_in_one_line(env, says):
    done = subprocess.run([sys.executable, "-c", "from traitlets.config.loader import PyFileConfigLoader as L; "
                           f"L('jupyterhub_config.py', {str(REPO / 'workshop')!r}).load_config()"],
                          env={"PATH": os.environ["PATH"], "WORKSHOP_PASSWORD_FILE": "/nonexistent", **SECRETS, **env},
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode != 0 and says in done.stderr.strip().splitlines()[-1], done.stderr


def test_the_default_url_is_the_git_pull_link_binder_links_hands_out():
    sys.path.insert(0, str(REPO / "binder"))
    try:
        import links
    finally:
        sys.path.remove(str(REPO / "binder"))
    for edition, folder in (("en", "notebooks"), ("zh-CN", "notebooks/zh-CN")):
        config = load_config(WORKSHOP_EDITION=edition)
        link = links.git_pull_link(links.current_repo(), f"{folder}/00_map_and_first_run.ipynb", edition)
        assert link.endswith(config.Spawner.default_url), (link, config.Spawner.default_url)
        assert link.startswith(f"{links.HUB_PLACEHOLDER}/hub/user-redirect/git-pull?")
        entry = {"en": "lab/tree", "zh-CN": "course/zh-CN"}[edition]
        assert f"&urlpath={entry}/tool-calling-course/{folder}/" in config.Spawner.default_url
        extensions = [a.split("=")[1] for a in config.Spawner.args if a.startswith("--ServerApp.jpserver_extensions=")]
        assert extensions == ["course_lib.hub_kernels", *(["course_lib.lab_edition"] if edition == "zh-CN" else []),
                              "course_lib.progress"]  # fmt: skip


def config_namespace() -> dict[str, Any]:
    """The config's names (its figures, its functions), run on a fresh config as on this machine."""
    from traitlets.config import Config

    saved = _clean_environ({})
    try:
        namespace = {"c": Config(), "__file__": str(CONFIG)}
        exec(compile(CONFIG.read_text(), str(CONFIG), "exec"), namespace)
    finally:
        _restore(saved)
    return namespace


def test_the_servers_this_machine_holds_follow_the_figures():
    namespace = config_namespace()
    machine_servers, gb = namespace["machine_servers"], 2**30
    assert namespace["c"].JupyterHub.active_server_limit == machine_servers()
    # memory less 1 GB over 0.85 GB per learner (the server with four kernels, measured), and 8 per
    # core: the fewer. INSTRUCTOR.md's rooms: 30 learners on 4 cores and 32 GB, 100 on 16 and 96.
    assert machine_servers(memory=32 * gb, cores=4) == 32
    assert machine_servers(memory=96 * gb, cores=16) == 111
    assert machine_servers(memory=16 * gb, cores=4) == 17
    assert machine_servers(memory=64 * gb, cores=4) == 32
    assert machine_servers(memory=4 * gb, cores=2) == 3
    assert machine_servers(memory=gb, cores=1) == 1


# ---- the Kubernetes values, as helm checks them ------------------------------------------------------


def _coalesce(defaults: Any, given: Any) -> Any:
    """Helm's merge of a --values file over the chart's values: maps merged key by key, anything else
    replaced, a null deleting the key."""
    if isinstance(defaults, dict) and isinstance(given, dict):
        merged = copy.deepcopy(defaults)
        for key, value in given.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = _coalesce(merged.get(key), value)
        return merged
    return copy.deepcopy(given)


def _set_files(text: str) -> list[tuple[str, str]]:
    return re.findall(r"--set-file (\S+)=(\S+)", text)


def _values_as_helm_sees_them(values: dict[str, Any], set_files: list[tuple[str, str]]) -> dict[str, Any]:
    merged = _coalesce(yaml.safe_load((SCHEMAS / f"z2jh-{CHART}-values.yaml").read_text()), values)
    for path, file in set_files:
        node = merged
        *parents, last = path.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = (REPO / file).read_text(encoding="utf-8")
    return merged


def _chart_schema() -> dict[str, Any]:
    return yaml.safe_load((SCHEMAS / f"z2jh-{CHART}-values.schema.yaml").read_text())


def _errors(values: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft7Validator(_chart_schema(), format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return sorted(f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(values))


def test_the_kubernetes_values_pass_the_charts_schema_with_the_commands_files():
    command = VALUES.read_text().split("\nhub:")[0]
    flags = _set_files(command)
    assert [path for path, _ in flags] == [f"hub.extraFiles.{key}.stringData" for key in _values()["hub"]["extraFiles"]]
    assert flags == _set_files((REPO / "workshop" / "README.md").read_text())  # the README's command is the same
    assert _errors(_values_as_helm_sees_them(_values(), flags)) == []
    # The check can fail: the files left out, or a value of the wrong kind, are what helm refuses.
    assert any("hub.extraFiles.workshop-config" in e for e in _errors(_values_as_helm_sees_them(_values(), [])))
    broken = _values()
    broken["cull"]["timeout"] = "an hour"
    broken["hub"]["networkPolicy"]["ingres"] = []
    assert [e.split(":")[0] for e in _errors(_values_as_helm_sees_them(broken, flags))] == ["cull.timeout", "hub.networkPolicy"]


def test_the_kubernetes_values_name_the_chart_release_checked_and_the_readme_agrees():
    text = VALUES.read_text()
    assert f"--version {CHART} --values workshop/kubernetes/config.yaml" in text
    assert f"--version {CHART}" in (REPO / "workshop" / "README.md").read_text()
    assert f"chart {CHART}" in (SCHEMAS / "README.md").read_text()


def test_the_kubernetes_values_repeat_the_configs_figures():
    values = _values()
    config = load_config()
    units = {"K": 2**10, "M": 2**20, "G": 2**30}

    def quantity(value: str) -> int:
        return int(float(value[:-1]) * units[value[-1]]) if value[-1] in units else int(value)

    single = values["singleuser"]
    assert quantity(single["memory"]["limit"]) == quantity(config.Spawner.mem_limit)
    assert quantity(single["memory"]["guarantee"]) == quantity(config.Spawner.mem_guarantee)
    assert single["cpu"] == {"limit": config.Spawner.cpu_limit, "guarantee": config.Spawner.cpu_guarantee}
    namespace = config_namespace()
    # The chart's own culler, with the config's figures (never culling the instructor).
    assert values["cull"] == {"enabled": True, "timeout": namespace["IDLE_TIMEOUT"], "every": namespace["CULL_EVERY"],
                              "adminUsers": False}  # fmt: skip
    # The image is the one repo2docker builds from binder/ (the README's command names it).
    readme = (REPO / "workshop" / "README.md").read_text()
    assert f"--image-name {single['image']['name']}:{single['image']['tag']}" in readme


def test_the_room_survives_the_charts_network_policy():
    """The chart's policies let the hub pod take only port 8081 from labelled pods; the room's port
    is opened to the proxy (routing /services/room/) and to the hub itself (its check at start), and
    the hub's and the proxy's way out to it is said, whatever their egressAllowRules."""
    values = _values()
    port = int(load_config().JupyterHub.services.to_dict()["extend"][0]["url"].rsplit(":", 1)[1])
    hub_pod = {"podSelector": {"matchLabels": {"app": "jupyterhub", "component": "hub"}}}
    proxy_pod = {"podSelector": {"matchLabels": {"app": "jupyterhub", "component": "proxy"}}}
    assert values["hub"]["networkPolicy"]["ingress"] == [{"ports": [{"port": port}], "from": [proxy_pod, hub_pod]}]
    assert values["hub"]["networkPolicy"]["egress"] == [{"to": [hub_pod], "ports": [{"port": port}]}]
    assert values["proxy"]["chp"]["networkPolicy"]["egress"] == [{"to": [hub_pod], "ports": [{"port": port}]}]
    # Learners' servers reach the room through the proxy's Service, which their policy allows (port 8000).
    env = _k8s_env()
    assert env["WORKSHOP_ROOM_API"] == "http://proxy-public/services/room/api/progress"
