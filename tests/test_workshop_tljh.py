"""workshop/tljh.sh run for real, with The Littlest JupyterHub's own commands standing in.

There is no VM here, so TLJH is not installed: its prefix is a temporary folder where
`hub/bin/tljh-config`, `user/bin/pip` and `user/bin/python` are small scripts that record what they
are asked, and `hub/bin/python` is this Python (with JupyterHub, as TLJH's hub venv has). Everything
else is real: bash, git (the script reads the course clone's origin), openssl (the certificate), the
passwords file. The TLJH config that the recorded `tljh-config` calls build is then validated
against TLJH's own schema (2.0.0, the release its bootstrap installs: tests/workshop_schemas/), as
`tljh-config` validates every change.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((REPO / "tests" / "workshop_schemas" / "tljh-2.0.0-config-schema.json").read_text())
ORIGIN = "https://example.org/tool-calling-course.git"


def _recorder(path: Path, log: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/bash\nprintf "%s\\0" "$(basename "$0")" "$@" >> {log}\nprintf "\\n" >> {log}\n')
    path.chmod(0o755)


@pytest.fixture
def tljh(tmp_path):
    """A course clone with an origin, a TLJH prefix of recorders, and a runner for tljh.sh."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed (Debian: apt-get install openssl)")
    course = tmp_path / "course"
    for name in ("workshop/tljh.sh", "workshop/jupyterhub_config.py", "binder/lab_settings.py"):
        (course / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, course / name)
    for command in (["git", "init", "-q"], ["git", "remote", "add", "origin", ORIGIN]):
        subprocess.run(command, cwd=course, check=True, capture_output=True)
    prefix, log = tmp_path / "tljh", tmp_path / "calls.log"
    for name in ("hub/bin/tljh-config", "user/bin/pip", "user/bin/python"):
        _recorder(prefix / name, log)
    hub_python = prefix / "hub" / "bin" / "python"  # this venv's Python, as TLJH's hub venv has JupyterHub
    hub_python.write_text(f'#!/bin/bash\nexec {sys.executable} "$@"\n')
    hub_python.chmod(0o755)
    secrets = tmp_path / "etc" / "workshop.env"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "TLJH_PREFIX": str(prefix),
               "WORKSHOP_PASSWORD_FILE": str(secrets)}  # fmt: skip
        return subprocess.run(["bash", str(course / "workshop" / "tljh.sh"), *args], env=env, capture_output=True,
                              text=True, timeout=120)  # fmt: skip

    run.course, run.prefix, run.log, run.secrets = course, prefix, log, secrets  # type: ignore[attr-defined]
    return run


def _calls(log: Path) -> list[list[str]]:
    return [[part for part in line.split("\0") if part] for line in log.read_text().splitlines() if line.strip("\0")]


def _parse(value: str):
    """tljh-config's parse_value (tljh/config.py): None, integers, floats, booleans, else a string."""
    if value.lower() == "none":
        return None
    if re.match(r"^\d+$", value):
        return int(value)
    if re.match(r"^\d+\.\d*$", value):
        return float(value)
    return {"true": True, "false": False}.get(value.lower(), value)


def tljh_config_file(calls: list[list[str]]) -> dict:
    """The config.yaml the recorded tljh-config set / add-item / remove-item calls write (tljh/config.py)."""
    config: dict = {}
    for call in calls:
        if call[0] != "tljh-config" or call[1] not in ("set", "add-item", "remove-item"):
            continue
        *parents, last = call[2].split(".")
        node = config
        for key in parents:
            node = node.setdefault(key, {})
        if call[1] == "set":
            node[last] = _parse(call[3])
        elif call[1] == "add-item":
            node.setdefault(last, []).append(_parse(call[3]))
        elif _parse(call[3]) in node.get(last, []):
            node[last].remove(_parse(call[3]))
    return config


def _valid(config: dict) -> None:
    jsonschema.validate(config, SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def _settings(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def test_without_a_domain_a_self_signed_certificate_and_its_fingerprint(tljh):
    done = tljh("--address", "192.0.2.7")
    assert done.returncode == 0, done.stderr
    calls = _calls(tljh.log)
    config = tljh_config_file(calls)
    _valid(config)
    tls = tljh.secrets.parent / "tls"
    assert config["https"] == {"enabled": True, "tls": {"key": str(tls / "hub.key"), "cert": str(tls / "hub.cert")}}
    assert calls[-2:] == [["tljh-config", "reload", "proxy"], ["tljh-config", "reload", "hub"]]
    # The certificate is for the address learners type, its key readable by root alone.
    pem = (tls / "hub.cert").read_text()
    info = ssl._ssl._test_decode_cert(str(tls / "hub.cert"))  # the standard library's own parser
    assert ("IP Address", "192.0.2.7") in info["subjectAltName"]
    assert (tls / "hub.key").stat().st_mode & 0o077 == 0 and tls.stat().st_mode & 0o077 == 0
    # The fingerprint printed is the certificate's SHA-256, as a browser shows it.
    digest = hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest().upper()
    printed = re.search(r"(?i)sha256 Fingerprint=([0-9A-F:]+)", done.stdout)[1]
    assert printed.replace(":", "") == digest
    assert "https://192.0.2.7/" in done.stdout and "http://" not in done.stdout + done.stderr
    # Run again: the same certificate, the same passwords.
    passwords = _settings(tljh.secrets)
    again = tljh("--address", "192.0.2.7")
    assert again.returncode == 0 and (tls / "hub.cert").read_text() == pem and _settings(tljh.secrets) == passwords


def test_with_a_domain_lets_encrypt_once(tljh):
    for _ in range(2):  # a re-run names the domain once
        done = tljh("--domain", "hub.example.org", "--email", "you@example.org")
        assert done.returncode == 0, done.stderr
    config = tljh_config_file(_calls(tljh.log))
    _valid(config)
    assert config["https"] == {"enabled": True, "letsencrypt": {"email": "you@example.org", "domains": ["hub.example.org"]}}
    assert "https://hub.example.org/" in done.stdout and "http://" not in done.stdout
    assert not (tljh.secrets.parent / "tls").exists() and "Fingerprint" not in done.stdout


def test_the_course_editable_its_repository_set_and_the_configs_figures(tljh):
    done = tljh("--address", "192.0.2.7", "--edition", "zh-CN")
    assert done.returncode == 0, done.stderr
    calls = _calls(tljh.log)
    # Editable, with the workshop extra: a pushed fix reaches course_lib with a `git pull`.
    assert ["pip", "install", "--editable", f"{tljh.course}[workshop]"] in calls
    assert ["python", f"{tljh.course}/binder/lab_settings.py"] in calls
    settings = _settings(tljh.secrets)
    assert settings["WORKSHOP_COURSE_REPO"] == ORIGIN and settings["WORKSHOP_EDITION"] == "zh-CN"
    assert len(settings["WORKSHOP_PASSWORD"]) >= 8 and len(settings["WORKSHOP_ADMIN_PASSWORD"]) >= 32
    assert tljh.secrets.stat().st_mode & 0o077 == 0
    link = tljh.prefix / "config" / "jupyterhub_config.d" / "tool-calling-course.py"
    assert link.is_symlink() and link.resolve() == (tljh.course / "workshop" / "jupyterhub_config.py").resolve()
    # TLJH's own culler and limits, with the one config's figures.
    sys.path.insert(0, str(REPO / "tests"))
    from test_workshop_files import config_namespace, load_config

    figures, config = config_namespace(), load_config()
    tljh_config = tljh_config_file(calls)
    assert tljh_config["services"]["cull"] == {"enabled": True, "timeout": figures["IDLE_TIMEOUT"],
                                               "every": figures["CULL_EVERY"]}  # fmt: skip
    assert tljh_config["limits"] == {"memory": config.Spawner.mem_limit, "cpu": int(config.Spawner.cpu_limit)}
    assert tljh_config["auth"] == {"type": "shared-password"}
    _valid(tljh_config)
    # --repo wins over the clone's origin.
    assert tljh("--address", "192.0.2.7", "--repo", "https://example.org/fork.git").returncode == 0
    assert _settings(tljh.secrets)["WORKSHOP_COURSE_REPO"] == "https://example.org/fork.git"


def test_the_schema_check_catches_what_tljh_config_refuses():
    with pytest.raises(jsonschema.ValidationError, match="1.5 is not of type 'integer'"):
        _valid({"limits": {"cpu": 1.5}})  # TLJH 2.0.0 wants whole cores (its main branch takes any number)
    with pytest.raises(jsonschema.ValidationError):
        _valid({"https": {"letsencrypt": {"email": "not an address"}}})


@pytest.mark.parametrize("args, says", [
    (["--domain", "hub.example.org"], "Let's Encrypt needs both --domain and --email"),
    (["--email", "you@example.org"], "Let's Encrypt needs both --domain and --email"),
    (["--edition", "fr"], "--edition en or zh-CN"),
    (["--http"], "unknown option --http"),
])  # fmt: skip
def test_wrong_options_are_refused_before_anything_changes(tljh, args, says):
    done = tljh(*args)
    assert done.returncode == 2 and says in done.stderr and not tljh.log.exists()


def test_a_clone_without_origin_needs_repo(tljh):
    subprocess.run(["git", "remote", "remove", "origin"], cwd=tljh.course, check=True)
    done = tljh("--address", "192.0.2.7")
    assert done.returncode == 2 and "no course repository" in done.stderr and not tljh.log.exists()
