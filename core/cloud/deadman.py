"""The dead-man timer in a launched instance's user data: it shuts the instance down (and so
terminates it) at a deadline that probecast keeps pushing back while its probes run."""

from __future__ import annotations

DEADMAN_FILE = "/var/run/probecast-deadline"


def deadman_user_data(minutes: int) -> str:
    """A shell script for cloud-init: shut down (= terminate) at a deadline probecast extends.

    probecast pushes the deadline back over SSH (``extend_command``); if probecast dies, nobody
    does, and the instance shuts itself down - with InstanceInitiatedShutdownBehavior=terminate,
    it is terminated.
    """
    return f"""#!/bin/bash
echo $(( $(date +%s) + {int(minutes) * 60} )) > {DEADMAN_FILE}
chmod 666 {DEADMAN_FILE}
nohup bash -c 'while true; do
  d=$(cat {DEADMAN_FILE} 2>/dev/null || echo 0)
  if [ "$(date +%s)" -ge "$d" ]; then shutdown -h now; fi
  sleep 20
done' >/dev/null 2>&1 &
"""


def extend_command(minutes: int) -> str:
    return f"echo $(( $(date +%s) + {int(minutes) * 60} )) > {DEADMAN_FILE}"
