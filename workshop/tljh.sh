#!/bin/bash
# The workshop on one VM with The Littlest JupyterHub (TLJH): run once, as a sudoer, from a clone
# of the course on the VM, after TLJH itself is installed. Written from TLJH's documentation
# (install, "Custom configuration snippets", tljh-config, the user environment, the idle culler);
# NOT run in this repository's tests: there is no VM here. What the tests do check: the hub config
# it installs is the one tests/test_hub.py runs, loaded the way TLJH loads it (load_subconfig), and
# this script parses (bash -n). See workshop/README.md.
#
#   # TLJH first (Ubuntu 22.04/24.04, 2+ GB of memory; INSTRUCTOR.md's sizing table says how much):
#   curl -L https://tljh.jupyter.org/bootstrap.py | sudo python3 - --admin instructor
#   sudo git clone https://github.com/OWNER/REPO /opt/tool-calling-course
#   cd /opt/tool-calling-course && sudo bash workshop/tljh.sh
#
# Re-running it is safe: it keeps an existing password file and reinstalls the course.
set -euo pipefail
COURSE="$(cd "$(dirname "$0")/.." && pwd)"
SECRETS=/etc/tool-calling-course/workshop.env   # WORKSHOP_PASSWORD_FILE's default in the config
USER_ENV=/opt/tljh/user                         # the learners' environment (TLJH's conda env)
HUB_ENV=/opt/tljh/hub                           # the hub's venv

# The hub needs JupyterHub 5.3+ (SharedPasswordAuthenticator); TLJH 1.x installs the latest 5.x.
sudo "$HUB_ENV/bin/python" -c "import jupyterhub.authenticators.shared" \
  || { echo "TLJH's JupyterHub is older than 5.3: upgrade TLJH (re-run its bootstrap.py)" >&2; exit 1; }

# nbgitpuller runs git in each learner's server.
command -v git >/dev/null || sudo apt-get install -y git

# The course, nbgitpuller and the rest of the workshop extra into the learners' environment
# (TLJH: "sudo -E pip install" as an admin; the full path does the same from an ssh shell).
sudo -E "$USER_ENV/bin/pip" install "$COURSE[workshop]"
# The first screen is notebook 00, not JupyterLab's "Jupyter news?" pop-up: the override file goes
# into the user environment's JupyterLab settings (TLJH documents overrides there too).
sudo "$USER_ENV/bin/python" "$COURSE/binder/lab_settings.py"

# The passwords: made once, readable by root only (the hub runs as root). Learners get
# WORKSHOP_PASSWORD; the instructor logs in as "instructor" with WORKSHOP_ADMIN_PASSWORD.
if ! sudo test -f "$SECRETS"; then
  sudo install -d -m 700 "$(dirname "$SECRETS")"
  sudo "$HUB_ENV/bin/python" - "$SECRETS" <<'PY'
import os, secrets, sys
path = sys.argv[1]
learner = "-".join(secrets.token_hex(2) for _ in range(3))
with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
    f.write(f"WORKSHOP_PASSWORD={learner}\nWORKSHOP_ADMIN_PASSWORD={secrets.token_urlsafe(30)}\n"
            "WORKSHOP_ADMINS=instructor\nWORKSHOP_EDITION=en\n")
PY
fi
echo "Passwords: $SECRETS (sudo cat it; set WORKSHOP_EDITION=zh-CN there for the 简体中文 edition)"

# The one workshop config, as a TLJH "custom configuration snippet": every .py file in
# jupyterhub_config.d is loaded after tljh-config's settings, so its authenticator, default URL,
# limits and services are the ones in force. A link, so `git pull` here updates the hub's config.
sudo ln -sf "$COURSE/workshop/jupyterhub_config.py" /opt/tljh/config/jupyterhub_config.d/tool-calling-course.py

# tljh-config: TLJH's own idle culler off (the workshop config runs one, with its timeout argued
# there), and the authenticator named the same way, so `tljh-config show` tells the truth.
sudo tljh-config set services.cull.enabled False
sudo tljh-config set auth.type shared-password
# HTTPS, once the VM has a domain name (TLJH's Let's Encrypt support), then reload the proxy:
#   sudo tljh-config set https.enabled true
#   sudo tljh-config set https.letsencrypt.email you@example.org
#   sudo tljh-config add-item https.letsencrypt.domains hub.example.org
#   sudo tljh-config reload proxy
sudo tljh-config reload hub
echo "Hub reloaded. Learners: http://<this VM>/ , any name + WORKSHOP_PASSWORD. Room view: /services/room/"
