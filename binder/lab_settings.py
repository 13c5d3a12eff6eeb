"""Install the course's JupyterLab settings override, so the first screen is notebook 00.

JupyterLab 4 asks every newcomer "get notified about official Jupyter news?" in a pop-up over the
notebook (the `fetchNews` setting of `@jupyterlab/apputils-extension:notification`, default "none" =
ask). The course answers "no" for them by writing a file into the `overrides.d` folder of the
settings directory the installed JupyterLab reads (`<app dir>/settings`, the app dir being
`jupyterlab.commands.get_app_dir()`: `$JUPYTERLAB_DIR` or `<sys.prefix>/share/jupyter/lab`).
A learner can still switch it on under Settings → Notifications.

The 简体中文 edition also opens JupyterLab itself in Chinese, through JupyterLab's own translation
setting (`@jupyterlab/translation-extension:plugin` `locale`, the language pack being a dependency).
So that the English edition stays English, that override lives in a settings folder of its own,
`<app dir>/settings-zh-CN` (a copy of `settings` plus the locale), which `make lab` hands to
JupyterLab only when it opens the zh-CN edition (`--LabApp.app_settings_dir`). A learner's own
choice under Settings → Language still wins: overrides change defaults, not user settings.

Binder and the workshop hub serve both editions from one server, so there the zh-CN links go
through the course's server extension instead (`course_lib.lab_edition`: `/course/zh-CN/<path>`
sets the learner's JupyterLab locale, then opens the notebook). This script enables it in the
environment, as `jupyter server extension enable --sys-prefix` would: a file in the
`jupyter_server_config.d` folder of `<sys.prefix>/etc/jupyter`.

Run by `make lab`, `make hub`, `binder/postBuild` and `workshop/tljh.sh`: `python
binder/lab_settings.py [--edition zh-CN]` writes the files and prints the JupyterLab argument the
edition needs (nothing for English).
"""

import json
import shutil
import sys
from pathlib import Path

from course_lib.lab_edition import LOCALES as EDITION_LOCALES

OVERRIDES = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}
FILE_NAME = "tool-calling-course.json"
LOCALES = {edition: locale for edition, locale in EDITION_LOCALES.items() if edition != "en"}
"""The JupyterLab language pack of each translated edition."""
EXTENSION = "course_lib.lab_edition"


def settings_dir() -> Path:
    """The `settings` folder next to the installed JupyterLab's app directory."""
    from jupyterlab.commands import get_app_dir

    return Path(get_app_dir()) / "settings"


def _write(folder: Path, overrides: dict) -> Path:
    target = folder / "overrides.d" / FILE_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(overrides, indent=2) + "\n", encoding="utf-8")
    return target


def install() -> Path:
    """Write the override file; returns its path (an existing file is replaced, nothing else is touched)."""
    return _write(settings_dir(), OVERRIDES)


def enable_extension() -> Path:
    """Enable the course's server extension in this environment; returns the config file written."""
    from jupyter_core.paths import ENV_CONFIG_PATH

    target = Path(ENV_CONFIG_PATH[0]) / "jupyter_server_config.d" / FILE_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"ServerApp": {"jpserver_extensions": {EXTENSION: True}}}, indent=2) + "\n",
                      encoding="utf-8")  # fmt: skip
    return target


def install_edition(edition: str) -> Path | None:
    """The settings folder JupyterLab needs for `edition`, written afresh (None: the default one).

    Raises:
        ValueError: `edition` is not one of the course's editions.
    """
    install()
    if edition == "en":
        return None
    if edition not in LOCALES:
        raise ValueError(f"no edition {edition!r}: use en or {', '.join(LOCALES)}")
    folder = settings_dir().with_name(f"settings-{edition}")
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(settings_dir(), folder)  # whatever else the install keeps there (page_config.json, …)
    translation = {"@jupyterlab/translation-extension:plugin": {"locale": LOCALES[edition]}}
    _write(folder, OVERRIDES | translation)
    return folder


if __name__ == "__main__":
    edition = sys.argv[sys.argv.index("--edition") + 1] if "--edition" in sys.argv else "en"
    folder = install_edition(edition)
    enabled = enable_extension()
    print(f"JupyterLab settings override: {install()}" + (f"; {edition}: {folder}" if folder else "")
          + f"; server extension {EXTENSION}: {enabled}", file=sys.stderr)  # fmt: skip
    if folder:
        print(f"--LabApp.app_settings_dir={folder}")
