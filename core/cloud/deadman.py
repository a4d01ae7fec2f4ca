"""The dead-man timer in a launched instance's user data: it shuts the instance down (and so
terminates it) at a deadline that probecast keeps pushing back while its probes run.

It fails safe: the deadline file is root's alone (0600) and replaced atomically (write, then
rename), and a deadline the loop cannot read - missing, empty, truncated, not a number - never
means "no deadline": the last good one stands, so the instance still goes at that time.
"""

from __future__ import annotations

import shlex

DEADMAN_FILE = "/var/run/probecast-deadline"


def deadman_script(seconds: int, path: str = DEADMAN_FILE, shutdown: str = "shutdown -h now",
                   interval: float = 20) -> str:
    """The user-data shell script: the first deadline ``seconds`` from boot, then the loop."""
    f = shlex.quote(path)
    return f"""#!/bin/bash
umask 077
first=$(( $(date +%s) + {int(seconds)} ))
echo "$first" > {f}.tmp && chmod 600 {f}.tmp && mv -f {f}.tmp {f}
nohup bash -c 'last='"$first"'
while true; do
  d=$(cat {f} 2>/dev/null)
  case "$d" in ""|*[!0-9]*) d=$last ;; *) last=$d ;; esac
  if [ "$(date +%s)" -ge "$d" ]; then {shutdown}; fi
  sleep {interval:g}
done' >/dev/null 2>&1 &
"""


def deadman_user_data(minutes: int) -> str:
    """A shell script for cloud-init: shut down (= terminate) at a deadline probecast extends.

    probecast pushes the deadline back over SSH (``extend_command``); if probecast dies, nobody
    does, and the instance shuts itself down - with InstanceInitiatedShutdownBehavior=terminate,
    it is terminated.
    """
    return deadman_script(int(minutes) * 60)


def extend_command(minutes: int, path: str = DEADMAN_FILE) -> str:
    """Push the deadline back, atomically, as root (sudo -n for the AMI's default user)."""
    f = shlex.quote(path)
    write = (f"echo $(( $(date +%s) + {int(minutes) * 60} )) > {f}.tmp && chmod 600 {f}.tmp "
             f"&& mv -f {f}.tmp {f}")
    return (f'if [ "$(id -u)" = 0 ]; then sh -c {shlex.quote(write)}; '
            f"else sudo -n sh -c {shlex.quote(write)}; fi")
