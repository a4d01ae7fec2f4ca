"""What a launched instance is given at boot: its SSH host key, made here, and the dead-man timer.

probecast never trusts the network for the host key of an instance it launches. It generates
an Ed25519 host key locally, hands the private half to the instance in its user data (cloud-init's
``ssh_keys``; ``ssh_genkeytypes: []`` so no other key type exists to be offered), and writes the
public half to a known_hosts file of the session. SSH then verifies the instance against that
key alone: a machine in the middle, or an address reused by another instance, is refused.

The user data is a MIME multipart, as cloud-init reads it: a ``#cloud-config`` part with the
key, and the dead-man shell script. The private key is as secret as the user data (readable by
the account's ``ec2:DescribeInstanceAttribute`` and on the instance itself); it lives as long
as the instance, which probecast terminates.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from pathlib import Path

from .deadman import deadman_user_data


@dataclass(frozen=True)
class HostKey:
    private: str  # OpenSSH private key
    public: str  # "ssh-ed25519 AAAA..." (no comment)

    @classmethod
    def generate(cls) -> HostKey:
        import asyncssh

        key = asyncssh.generate_private_key("ssh-ed25519")
        public = key.export_public_key("openssh").decode().split()
        return cls(key.export_private_key("openssh").decode(), " ".join(public[:2]))

    @property
    def fingerprint(self) -> str:
        import asyncssh

        return str(asyncssh.import_public_key(self.public).get_fingerprint())


def cloud_config(host_key: HostKey) -> str:
    # JSON is YAML: no YAML writer needed, and the key's newlines are escaped exactly
    config = {"ssh_deletekeys": True, "ssh_genkeytypes": [],
              "ssh_keys": {"ed25519_private": host_key.private, "ed25519_public": host_key.public}}
    return "#cloud-config\n" + json.dumps(config, indent=1) + "\n"


def user_data(deadman_minutes: int, host_key: HostKey) -> str:
    """The whole user data: the host key (cloud-config) and the dead-man timer (a script)."""
    msg = MIMEMultipart()
    msg.attach(MIMEText(cloud_config(host_key), "cloud-config"))
    msg.attach(MIMEText(deadman_user_data(deadman_minutes), "x-shellscript"))
    return msg.as_string()


def host_key_from_user_data(data: str) -> HostKey:
    """The host key a user data carries (what cloud-init installs; tests play cloud-init)."""
    from email import message_from_string

    for part in message_from_string(data).walk():
        if part.get_content_type() == "text/cloud-config":
            payload = part.get_payload(decode=True)
            body = payload.decode() if isinstance(payload, bytes) else str(payload)
            keys = json.loads(body.split("\n", 1)[1])["ssh_keys"]
            return HostKey(keys["ed25519_private"], keys["ed25519_public"])
    raise ValueError("no cloud-config part with ssh_keys in this user data")


def known_hosts_line(address: str, port: int | None, host_key: HostKey) -> str:
    where = address if (port or 22) == 22 else f"[{address}]:{port}"
    return f"{where} {host_key.public}\n"


def write_known_hosts(path: Path, lines: list[str]) -> Path:
    """The session's pinned keys, readable by the user only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.writelines(lines)
    return path
