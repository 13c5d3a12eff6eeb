"""Install the course's JupyterLab settings override, so the first screen is notebook 00.

JupyterLab 4 asks every newcomer "get notified about official Jupyter news?" in a pop-up over the
notebook (the `fetchNews` setting of `@jupyterlab/apputils-extension:notification`, default "none" =
ask). The course answers "no" for them by writing a file into the `overrides.d` folder of the
settings directory the installed JupyterLab reads (`<app dir>/settings`, the app dir being
`jupyterlab.commands.get_app_dir()`: `$JUPYTERLAB_DIR` or `<sys.prefix>/share/jupyter/lab`).
A learner can still switch it on under Settings → Notifications.

Run by `make lab` and by `binder/postBuild`: `python binder/lab_settings.py`.
"""

import json
import sys
from pathlib import Path

OVERRIDES = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}
FILE_NAME = "tool-calling-course.json"


def settings_dir() -> Path:
    """The `settings` folder next to the installed JupyterLab's app directory."""
    from jupyterlab.commands import get_app_dir

    return Path(get_app_dir()) / "settings"


def install() -> Path:
    """Write the override file; returns its path (an existing file is replaced, nothing else is touched)."""
    target = settings_dir() / "overrides.d" / FILE_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(OVERRIDES, indent=2) + "\n", encoding="utf-8")
    return target


if __name__ == "__main__":
    print(f"JupyterLab settings override: {install()}", file=sys.stderr)
