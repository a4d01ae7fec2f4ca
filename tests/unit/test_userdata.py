"""The user data a launched instance boots with: its pinned host key and the dead-man timer."""

from __future__ import annotations

from email import message_from_string

import asyncssh
import pytest

from probecast.core.cloud.userdata import (HostKey, cloud_config, host_key_from_user_data,
                                           known_hosts_line, user_data)


def test_user_data_is_a_cloud_init_multipart_with_the_key_and_the_timer() -> None:
    key = HostKey.generate()
    data = user_data(30, key)
    parts = {p.get_content_type(): p.get_payload(decode=True).decode()
             for p in message_from_string(data).walk() if not p.is_multipart()}
    assert set(parts) == {"text/cloud-config", "text/x-shellscript"}
    assert parts["text/x-shellscript"].startswith("#!/bin/bash") and "1800" in parts["text/x-shellscript"]
    assert host_key_from_user_data(data) == key
    # the private half is a real key whose public half is the one pinned
    private = asyncssh.import_private_key(key.private)
    assert private.export_public_key("openssh").decode().split()[:2] == key.public.split()
    assert len(data) < 16 * 1024  # EC2's user-data limit


def test_cloud_config_reads_as_yaml_the_way_cloud_init_reads_it() -> None:
    yaml = pytest.importorskip("yaml")  # cloud-init parses user data with PyYAML
    key = HostKey.generate()
    text = cloud_config(key)
    assert text.startswith("#cloud-config\n")
    config = yaml.safe_load(text)
    assert config["ssh_keys"] == {"ed25519_private": key.private, "ed25519_public": key.public}
    assert config["ssh_genkeytypes"] == [] and config["ssh_deletekeys"] is True


def test_each_launch_gets_its_own_key_and_known_hosts_names_the_port() -> None:
    a, b = HostKey.generate(), HostKey.generate()
    assert a.public != b.public and a.fingerprint.startswith("SHA256:")
    assert known_hosts_line("1.2.3.4", None, a) == f"1.2.3.4 {a.public}\n"
    assert known_hosts_line("1.2.3.4", 22, a) == f"1.2.3.4 {a.public}\n"
    assert known_hosts_line("1.2.3.4", 2222, a) == f"[1.2.3.4]:2222 {a.public}\n"
