"""On a workshop hub, each learner's kernels talk to their server over Unix sockets, not TCP ports.

Jupyter picks a kernel's five TCP ports by binding port 0 and letting go, then the kernel binds
them a second or so later. On one machine with a room of learners' servers opening a notebook at
the same moment, another server can be handed the same free port in that gap: one kernel then
dies at start ("Address already in use") and restarts (jupyter_client's own note on the race:
`jupyter_client.connect.LocalPortCache`). The workshop benchmark hit it with eight learners.

This Jupyter server extension, which the workshop hub config loads on every learner's server,
switches the server's kernels to ZeroMQ's `ipc` transport (jupyter_client's
`KernelManager.transport`) with their connection files and sockets in a private folder of the
learner's own (`tempfile.mkdtemp`: mode 0700, a name nobody can guess): no port is shared, so
there is nothing to race for. The folder is short on purpose: a Unix socket's path holds at most
107 bytes, and a learner's home (`/home/jupyter-<name>/.local/share/jupyter/runtime/…`) can be
longer than that. It changes nothing but how the server reaches its kernels; it is not a concept
the notebooks teach, and nothing loads it outside a hub.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from typing import Any


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """What Jupyter Server looks for in a module named in `jpserver_extensions`: this module."""
    return [{"module": __name__}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Kernels started from now on use `ipc` sockets in a private folder (see the module docstring)."""
    folder = tempfile.mkdtemp(prefix="kernels-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    serverapp.config.KernelManager.transport = "ipc"  # read by each kernel's manager as it is made
    serverapp.kernel_manager.connection_dir = folder
    serverapp.log.info("course_lib.hub_kernels: kernels use ipc sockets in %s (no TCP ports)", folder)
