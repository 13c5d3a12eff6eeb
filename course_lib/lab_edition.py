"""JupyterLab in the edition's language on a server that serves both editions (Binder, the workshop hub).

`make lab` opens one edition, so it hands JupyterLab a settings folder of that edition's own
(`binder/lab_settings.py --edition zh-CN`). Binder and the hub start one server whatever link a
learner clicks: the language cannot be a launch argument there. This Jupyter server extension adds
one route to the learner's server,

    /course/<edition>/<path>     e.g. /course/zh-CN/notebooks/zh-CN/00_map_and_first_run.ipynb

which sets JupyterLab's own translation setting (`@jupyterlab/translation-extension:plugin`,
`locale`: `zh_CN` for the zh-CN edition, `en` for the English) in the learner's user settings,
with the functions jupyterlab_server's settings API uses (`get_settings`, `save_settings`: the
value is validated against the plugin's schema, the learner's other values of that plugin are
kept), then redirects to `lab/tree/<path>` (the query string kept), so the first page JupyterLab
draws is in that language. The zh-CN launch links and the hub's zh-CN landing go through it
(`binder/links.py` checks them); English links stay `lab/tree/…` and change nothing. A learner can
still choose another language under Settings → Language: the link only sets it when clicked.

Why here: the course package is what every environment that runs a learner's server installs
(Binder's postBuild, TLJH's user environment, the Kubernetes image built from binder/, `make lab`'s
venv), and binder/ is on no server's import path. It is not a concept the notebooks teach.
`binder/lab_settings.py` enables it (a `jupyter_server_config.d` file, as `jupyter server extension
enable --sys-prefix` writes), and a zh-CN workshop hub's config asks for it on every learner's
server (`workshop/jupyterhub_config.py`).
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_escape, url_path_join
from tornado import web

from course_lib.lang import edition_of

PLUGIN = "@jupyterlab/translation-extension:plugin"
LOCALES = {"en": "en", "zh-CN": "zh_CN"}
"""JupyterLab's locale for each edition (the zh_CN one is the language pack binder/requirements.txt pins)."""
ROUTE = r"course/(?P<edition>[^/]+)/(?P<path>.*)"


def entry_path(edition: str, path: str) -> str:
    """The URL path (under the server's base URL) that opens `path` in `edition`'s language:
    `lab/tree/<path>` for English, `course/<edition>/<path>` otherwise."""
    return f"lab/tree/{path}" if edition == "en" else f"course/{edition}/{path}"


def _lab_app(serverapp: Any) -> Any | None:
    """The running JupyterLab application (its settings folders and schemas), if it is loaded."""
    apps = serverapp.extension_manager.extension_apps.get("jupyterlab") or set()
    return next((app for app in apps if getattr(app, "schemas_dir", None)), None)


def set_locale(lab: Any, locale: str) -> None:
    """Write `locale` into the learner's JupyterLab translation setting, keeping its other values.

    Raises:
        jsonschema.ValidationError: the plugin's schema refuses the value (a newer JupyterLab).
        OSError: the user settings folder cannot be written.
    """
    from jupyterlab_server.settings_utils import get_settings, save_settings

    paths = getattr(lab, "labextensions_path", None)
    current, _ = get_settings(lab.app_settings_dir, lab.schemas_dir, lab.user_settings_dir, PLUGIN,
                              labextensions_path=paths)  # fmt: skip
    values = {**(current.get("settings") or {}), "locale": locale}
    save_settings(lab.schemas_dir, lab.user_settings_dir, PLUGIN, json.dumps(values, indent=2), {}, paths)


class EditionHandler(JupyterHandler):
    """GET /course/<edition>/<path>: JupyterLab's language for the edition, then the notebook."""

    @web.authenticated
    def get(self, edition: str, path: str) -> None:
        chosen = edition_of(edition)
        if chosen is None:
            raise web.HTTPError(404, f"no edition {edition!r} of this course: use en or zh-CN "
                                     f"(本课程没有 {edition!r} 这个版本：请用 en 或 zh-CN)")  # fmt: skip
        lab = _lab_app(self.serverapp)
        if lab is None:
            self.log.warning("course edition %s: JupyterLab is not loaded; opening %s as it is", chosen, path)
        else:
            try:
                set_locale(lab, LOCALES[chosen])
            except Exception as error:  # the notebook still opens, in whatever language was set before
                self.log.warning("course edition %s: JupyterLab's locale not set: %s", chosen, error)
        target = url_path_join(self.base_url, "lab", "tree", url_escape(path))
        self.redirect(target + (f"?{self.request.query}" if self.request.query else ""))


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """What Jupyter Server looks for in a module named in `jpserver_extensions`: this module."""
    return [{"module": __name__}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Add the /course/<edition>/<path> route to the server, under its base URL (a hub's /user/<name>/)."""
    route = url_path_join(serverapp.web_app.settings["base_url"], ROUTE)
    serverapp.web_app.add_handlers(".*$", [(route, EditionHandler)])
