#!/bin/bash
# The workshop on one VM with The Littlest JupyterHub (TLJH): run once, as root, from a clone of
# the course on the VM, after TLJH itself is installed. Written from TLJH's source and
# documentation (installer, "Custom configuration snippets", tljh-config and its schema, HTTPS, the
# idle culler, the user environment). No VM here: tests/test_workshop_tljh.py runs this script
# with TLJH's commands standing in (they record what they are asked), a real openssl, and checks
# the TLJH config it builds against TLJH's own schema. See workshop/README.md.
#
#   # TLJH first (Ubuntu 22.04/24.04; INSTRUCTOR.md's sizing table says how big):
#   curl -L https://tljh.jupyter.org/bootstrap.py | sudo python3 - --admin instructor
#   sudo git clone https://github.com/OWNER/REPO /opt/tool-calling-course
#   cd /opt/tool-calling-course
#   sudo bash workshop/tljh.sh --domain hub.example.org --email you@example.org   # Let's Encrypt
#   sudo bash workshop/tljh.sh                                                     # or: a self-signed certificate
#
# Options:
#   --domain NAME --email ADDRESS   HTTPS from Let's Encrypt for NAME (its DNS must point at this VM,
#                                   and ports 80 and 443 must be open to the internet)
#   --address IP                    without a domain: the address learners type (default: the VM's
#                                   first address); the self-signed certificate is made for it and
#                                   its SHA-256 fingerprint printed, for learners to compare
#   --repo URL                      the course repository nbgitpuller pulls into each home
#                                   (default: this clone's origin)
#   --edition en|zh-CN              the edition learners land on (default en, or what the passwords file says)
#
# HTTPS is not optional: both passwords cross the room's Wi-Fi, and a TLJH admin has sudo. This
# script never prints an http:// link; TLJH's proxy answers http:// with a redirect to https://.
# Re-running it is safe: it keeps the passwords and the certificate, updates the rest.
set -euo pipefail
COURSE="$(cd "$(dirname "$0")/.." && pwd)"
TLJH_PREFIX="${TLJH_PREFIX:-/opt/tljh}"                        # TLJH's own default
SECRETS="${WORKSHOP_PASSWORD_FILE:-/etc/tool-calling-course/workshop.env}"  # the config's default too
TLS_DIR="$(dirname "$SECRETS")/tls"
USER_ENV="$TLJH_PREFIX/user"                                   # the learners' environment (TLJH's conda env)
HUB_ENV="$TLJH_PREFIX/hub"                                     # the hub's venv
TLJH_CONFIG="$HUB_ENV/bin/tljh-config"                         # /usr/bin/tljh-config links here
# The one config's figures, for TLJH's own settings (tests/test_workshop_tljh.py checks they agree).
IDLE_TIMEOUT=3600
CULL_EVERY=300
MEM_LIMIT=1G
CPU_LIMIT=1                                    # whole cores: TLJH 2.0.0's schema wants an integer

domain="" email="" address="" repo="" edition=""
while [ $# -gt 0 ]; do
  case "$1" in
    --domain) domain="$2"; shift 2 ;;
    --email) email="$2"; shift 2 ;;
    --address) address="$2"; shift 2 ;;
    --repo) repo="$2"; shift 2 ;;
    --edition) edition="$2"; shift 2 ;;
    *) echo "tljh.sh: unknown option $1 (see the top of workshop/tljh.sh)" >&2; exit 2 ;;
  esac
done
if { [ -n "$domain" ] && [ -z "$email" ]; } || { [ -z "$domain" ] && [ -n "$email" ]; }; then
  echo "tljh.sh: Let's Encrypt needs both --domain and --email" >&2; exit 2
fi
if [ "$TLJH_PREFIX" = /opt/tljh ] && [ "$(id -u)" != 0 ]; then
  echo "tljh.sh: run it as root: sudo bash workshop/tljh.sh" >&2; exit 2
fi
case "$edition" in ""|en|zh-CN) ;; *) echo "tljh.sh: --edition en or zh-CN" >&2; exit 2 ;; esac

# The hub needs JupyterHub 5.3+ (SharedPasswordAuthenticator); TLJH 2.x installs the latest 5.x.
"$HUB_ENV/bin/python" -c "import jupyterhub.authenticators.shared" \
  || { echo "tljh.sh: TLJH's JupyterHub is older than 5.3: upgrade TLJH (re-run its bootstrap.py)" >&2; exit 1; }

# The course every learner's home gets (nbgitpuller), and that the hub's landing link names.
if [ -z "$repo" ]; then
  repo="$(git -C "$COURSE" remote get-url origin 2>/dev/null || true)"
fi
if [ -z "$repo" ]; then
  echo "tljh.sh: no course repository: this clone has no origin; pass --repo URL" >&2; exit 2
fi

# nbgitpuller runs git in each learner's server.
command -v git >/dev/null || apt-get install -y git

# The course, editable, with nbgitpuller and the rest of the workshop extra, into the learners'
# environment: a fix pushed to the course during the day reaches course_lib with
# `sudo git -C /opt/tool-calling-course pull` (and a kernel restart), no reinstall.
"$USER_ENV/bin/pip" install --editable "$COURSE[workshop]"
# The first screen is notebook 00, not JupyterLab's "Jupyter news?" pop-up: the override file goes
# into the user environment's JupyterLab settings.
"$USER_ENV/bin/python" "$COURSE/binder/lab_settings.py"

# The passwords: made once, readable by root only (the hub runs as root). Learners get
# WORKSHOP_PASSWORD; the instructor logs in as "instructor" with WORKSHOP_ADMIN_PASSWORD.
install -d -m 700 "$(dirname "$SECRETS")"
if [ ! -f "$SECRETS" ]; then
  "$HUB_ENV/bin/python" - "$SECRETS" <<'PY'
import os, secrets, sys
path = sys.argv[1]
learner = "-".join(secrets.token_hex(2) for _ in range(3))
with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
    f.write(f"WORKSHOP_PASSWORD={learner}\nWORKSHOP_ADMIN_PASSWORD={secrets.token_urlsafe(30)}\n"
            "WORKSHOP_ADMINS=instructor\nWORKSHOP_EDITION=en\n")
PY
fi
# The course repository and the edition: set (or replaced) in the same file.
"$HUB_ENV/bin/python" - "$SECRETS" "WORKSHOP_COURSE_REPO=$repo" ${edition:+"WORKSHOP_EDITION=$edition"} <<'PY'
import sys
path, updates = sys.argv[1], dict(arg.split("=", 1) for arg in sys.argv[2:])
lines = [line for line in open(path, encoding="utf-8").read().splitlines() if line.split("=", 1)[0] not in updates]
with open(path, "w", encoding="utf-8") as f:
    f.write("".join(f"{line}\n" for line in lines + [f"{k}={v}" for k, v in updates.items()]))
PY
echo "Passwords: $SECRETS (sudo cat it; WORKSHOP_EDITION=zh-CN there for the 简体中文 edition)"

# The one workshop config, as a TLJH "custom configuration snippet": every .py file in
# jupyterhub_config.d is loaded after tljh-config's settings, so its authenticator, landing,
# limits and room view are the ones in force. A link, so a `git pull` here updates the hub's config.
install -d "$TLJH_PREFIX/config/jupyterhub_config.d"
ln -sf "$COURSE/workshop/jupyterhub_config.py" "$TLJH_PREFIX/config/jupyterhub_config.d/tool-calling-course.py"

# tljh-config: TLJH's own idle culler with the config's figures (an hour; TLJH's default is 10
# minutes), the authenticator and the limits named as the config sets them, so `tljh-config show`
# tells the truth.
"$TLJH_CONFIG" set services.cull.enabled true
"$TLJH_CONFIG" set services.cull.timeout "$IDLE_TIMEOUT"
"$TLJH_CONFIG" set services.cull.every "$CULL_EVERY"
"$TLJH_CONFIG" set auth.type shared-password
"$TLJH_CONFIG" set limits.memory "$MEM_LIMIT"
"$TLJH_CONFIG" set limits.cpu "$CPU_LIMIT"

# HTTPS, always.
"$TLJH_CONFIG" set https.enabled true
if [ -n "$domain" ]; then
  "$TLJH_CONFIG" set https.letsencrypt.email "$email"
  "$TLJH_CONFIG" remove-item https.letsencrypt.domains "$domain" >/dev/null 2>&1 || true  # once, on a re-run too
  "$TLJH_CONFIG" add-item https.letsencrypt.domains "$domain"
  where="$domain"
else
  if [ -z "$address" ]; then
    address="$(hostname -I 2>/dev/null | awk '{print $1}')"
  fi
  if [ -z "$address" ]; then
    echo "tljh.sh: cannot tell this VM's address: pass --address IP (or --domain and --email)" >&2; exit 2
  fi
  install -d -m 700 "$TLS_DIR"
  if [ ! -f "$TLS_DIR/hub.cert" ] || ! openssl x509 -in "$TLS_DIR/hub.cert" -noout -checkend 86400 >/dev/null \
     || ! openssl x509 -in "$TLS_DIR/hub.cert" -noout -ext subjectAltName 2>/dev/null | grep -qF "$address"; then
    # A self-signed certificate for this address, valid 30 days: browsers warn once, learners compare
    # the fingerprint below with the one on the board, and the passwords never cross the air in clear.
    (umask 077 && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
      -subj "/CN=$address" -addext "subjectAltName=IP:$address" \
      -keyout "$TLS_DIR/hub.key" -out "$TLS_DIR/hub.cert" 2>/dev/null)
  fi
  "$TLJH_CONFIG" set https.tls.key "$TLS_DIR/hub.key"
  "$TLJH_CONFIG" set https.tls.cert "$TLS_DIR/hub.cert"
  where="$address"
fi
"$TLJH_CONFIG" reload proxy
"$TLJH_CONFIG" reload hub

echo "Learners: https://$where/ , any name + WORKSHOP_PASSWORD. Room view: https://$where/services/room/"
if [ -z "$domain" ]; then
  echo "Self-signed certificate: the browser warns once. Write its fingerprint on the board; learners check it"
  echo "(the padlock → certificate → SHA-256 fingerprint) before they go on:"
  openssl x509 -in "$TLS_DIR/hub.cert" -noout -fingerprint -sha256
fi
