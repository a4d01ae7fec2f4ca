"""End to end over real OpenSSH servers on loopback: the agent, SFTP, streaming and every fault."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import sshd as sshd_mod
from conftest import until
from probecast.core.model.rank.ranking import RankOptions
from probecast.core.run.board import Board
from probecast.core.run.config import Host, ProbeSettings
from probecast.core.model.events import End, Step, read_log
from probecast.core.run.probe_plan import plan_probes, run_plan
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing
from probecast.core.run.ssh import SshRunner, connect, remote_command

pytestmark = pytest.mark.skipif(sshd_mod.available() is not None,
                                reason=sshd_mod.available() or "")

TRAINER = """
import sys, time
from probecast_agent import StepTimer
sleep = float(sys.argv[1])
fail_at = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else -1
epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 3  # 120 steps unless told
probe = StepTimer(steps_per_epoch=40, val_steps=2, batch_size=8, epochs=epochs, framework="plain")
for epoch in range(epochs):
    for i in probe.steps(range(40), epoch):
        if i == fail_at:
            print("trainer: simulated failure at step", i, file=sys.stderr)
            raise RuntimeError("simulated failure")
        time.sleep(sleep)
    if probe.stopped:
        break
    with probe.validation(epoch, steps=2):
        time.sleep(sleep)
    probe.epoch_end(epoch, {"val_accuracy": 0.5})
probe.finish()
"""
DETECTION: dict[str, float] = {}


@pytest.fixture(scope="module")
def world():  # type: ignore[no-untyped-def]
    sshd_mod.ensure_test_user()
    base = Path(tempfile.mkdtemp(prefix="probecast-ssh-", dir="/tmp"))
    os.chmod(base, 0o755)
    client = sshd_mod.keygen(base / "client_ed25519")
    other = sshd_mod.keygen(base / "other_ed25519")  # a key no server knows
    ak = client.with_suffix(".pub").read_text()
    a = sshd_mod.start_sshd(base / "a", "127.0.0.2", None, ak, log_level="DEBUG1")
    b = sshd_mod.start_sshd(base / "b", "127.0.0.3", None, ak)
    known = base / "known_hosts"
    known.write_text(a.known_hosts_line() + b.known_hosts_line())
    trainer = base / "trainer.py"
    trainer.write_text(TRAINER)
    for p in (client, known, trainer):
        os.chmod(p, 0o644 if p != client else 0o600)
    yield {"base": base, "a": a, "b": b, "client": client, "other": other, "known": known,
           "trainer": trainer}
    a.stop()
    b.stop()
    shutil.rmtree(base, ignore_errors=True)
    print("\nfault detection times (s):", {k: round(v, 2) for k, v in DETECTION.items()})


def host(world, name: str, server: str, user: str = "root", **kw) -> Host:  # type: ignore[no-untyped-def]
    s = world[server]
    fields = {"instance": "g5.xlarge", "identity_file": str(world["client"]),
              "known_hosts": str(world["known"]), "python": "/usr/bin/python3",
              "keepalive_interval": 1.0, "connect_timeout": 5.0, **kw}
    return Host(name=name, address=s.address, port=s.port, user=user, **fields)


def settings(world, sleep: float = 0.01, extra: str = "", **kw) -> ProbeSettings:  # type: ignore[no-untyped-def]
    return ProbeSettings(command=f"python3 {world['trainer']} {sleep} {extra}".strip(),
                         batch_sizes=kw.pop("batch_sizes", [8]), max_steps=kw.pop("max_steps", 15),
                         boundary_budget=0, **kw)


async def run(world, hosts: list[Host], s: ProbeSettings, tmp: Path, timeout: float = 120) -> Board:  # type: ignore[no-untyped-def]
    board = Board(Pricing(Catalog.embedded()))
    by_name = {h.name: h for h in hosts}
    plan = plan_probes([h for h in hosts if h.name != "jump"], s, tmp)
    await asyncio.wait_for(
        run_plan(board, plan, factory=lambda h, spec, p: SshRunner(h, spec, p, by_name)), timeout)
    return board


def remote_leftovers(user: str) -> list[str]:
    """Agents ``user`` runs that this suite's servers started (another suite on this machine
    runs its own, as root too)."""
    return sshd_mod.our_processes("probecast-agent.pyz", user)


def new_agent_dirs(before: set[Path], settle: float = 30.0) -> set[Path]:
    """Agent directories in /tmp made since ``before`` that no running agent uses, and that stay
    so: a directory of ours left behind. Another suite's (made meanwhile) has its agent running,
    or is between its upload and its agent's start, or between its agent's exit and its removal:
    those come and go within moments, so a directory counts only if it is still there, unused,
    after ``settle`` seconds (a deadline for a leak, not a timing of the run)."""
    def unused() -> set[Path]:
        running = subprocess.run(["ps", "-e", "-o", "args="], capture_output=True,
                                 text=True).stdout
        return {p for p in set(Path("/tmp").glob("probecast-*/probecast-agent.pyz")) - before
                if p.exists() and str(p) not in running}

    deadline = time.monotonic() + settle
    left = unused()
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left &= unused()  # only what stayed unused all along
    return left


async def test_two_hosts_in_parallel_root_and_non_root(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    hosts = [host(world, "a-root", "a"), host(world, "b-user", "b", user=sshd_mod.TEST_USER)]
    before = set(Path("/tmp").glob("probecast-*/probecast-agent.pyz"))
    board = await run(world, hosts, settings(world, batch_sizes=[8, 16]), tmp_path)
    assert {k: e.status for k, e in board.entries.items()} == {
        "a-root-b8": "done", "a-root-b16": "done", "b-user-b8": "done", "b-user-b16": "done"}
    for e in board.entries.values():
        events, report = read_log(e.log_path)
        assert isinstance(events[-1], End) and events[-1].status == "probe-done"
        assert len([x for x in events if isinstance(x, Step)]) == 15
        assert report.malformed == []
    assert len(board.ranking(RankOptions(epochs=10))) == 4
    # the per-run temp dir is gone and no agent survives
    assert new_agent_dirs(before) == set()
    assert remote_leftovers("root") == [] and remote_leftovers(sshd_mod.TEST_USER) == []


async def test_through_a_jump_host(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    jump = host(world, "jump", "a")
    target = host(world, "behind", "b", user=sshd_mod.TEST_USER, jump="jump")
    board = await run(world, [jump, target], settings(world), tmp_path)
    assert board.entries["behind-b8"].status == "done"
    # the jump server forwarded a channel to the target
    assert "127.0.0.3" in world["a"].log and "direct-tcpip" in world["a"].log


@pytest.mark.faults('unknown host key',
                    checks='refused, with how to trust it')
async def test_unknown_host_key_is_refused_with_advice(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    h = host(world, "stranger", "a", known_hosts=str(empty))
    board = await run(world, [h], settings(world), tmp_path)
    e = board.entries["stranger-b8"]
    assert e.status == "failed" and "unknown host key" in e.detail
    assert "accept_new_host_key" in e.detail and "ssh-keyscan" in e.detail
    # opting in trusts and records the key, then verifies it
    h2 = host(world, "tofu", "a", known_hosts=str(empty), accept_new_host_key=True)
    board = await run(world, [h2], settings(world), tmp_path)
    assert board.entries["tofu-b8"].status == "done", board.entries["tofu-b8"].detail
    assert f"[127.0.0.2]:{world['a'].port} ssh-ed25519" in empty.read_text()


@pytest.mark.faults('client key not authorized',
                    checks='an authentication message, not a traceback')
async def test_bad_key_is_an_auth_error(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    h = host(world, "badkey", "a", identity_file=str(world["other"]))
    board = await run(world, [h], settings(world), tmp_path)
    e = board.entries["badkey-b8"]
    assert e.status == "failed" and "authentication failed" in e.detail


@pytest.mark.faults('host down (nothing listening)',
                    checks="fails fast with the reason; the other host's probe finishes")
async def test_host_down_fails_fast_and_others_finish(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    refusing = sshd_mod.refusing_port("127.0.0.9")
    down = Host(name="down", instance="g5.xlarge", address="127.0.0.9",
                port=refusing.getsockname()[1], user="root", identity_file=str(world["client"]),
                known_hosts=str(world["known"]), connect_timeout=5)
    ok = host(world, "ok", "b")
    t0 = time.monotonic()
    try:
        board = await run(world, [down, ok], settings(world), tmp_path)
    finally:
        refusing.close()
    DETECTION["host down (refused)"] = time.monotonic() - t0
    assert board.entries["down-b8"].status == "failed"
    assert "refused" in board.entries["down-b8"].detail
    assert board.entries["ok-b8"].status == "done"


@pytest.mark.faults('sshd killed mid-stream',
                    checks='events received kept; log ends in end; other probe finishes; no remote process')
async def test_sshd_killed_mid_stream_keeps_data_and_others_finish(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    agents_before = set(Path("/tmp").glob("probecast-*/probecast-agent.pyz"))
    victim = sshd_mod.start_sshd(world["base"] / "victim", "127.0.0.4", None,
                                 world["client"].with_suffix(".pub").read_text())
    with open(world["known"], "a") as fh:
        fh.write(victim.known_hosts_line())
    try:
        hv = Host(name="victim", instance="g5.xlarge", address="127.0.0.4", port=victim.port, user="root",
                  identity_file=str(world["client"]), known_hosts=str(world["known"]),
                  python="/usr/bin/python3", keepalive_interval=1)
        ok = host(world, "ok2", "b")
        # 100 steps: the victim is still training long after its 5th, and ok2 (~5 s) after the cut
        s = settings(world, sleep=0.05, extra="- 10", max_steps=100)
        board = Board(Pricing(Catalog.embedded()))
        plan = plan_probes([hv, ok], s, tmp_path)
        task = asyncio.create_task(run_plan(board, plan, factory=lambda h, sp, p: SshRunner(h, sp, p)))
        await until(lambda: board.entries.get("victim-b8") is not None
                    and board.entries["victim-b8"].state.steps >= 5, "5 steps on the victim")
        t0 = time.monotonic()
        victim.signal_sessions(signal.SIGKILL)  # the connection's sshd processes, then the server
        victim.proc.kill()
        await until(lambda: not board.entries["victim-b8"].active, "the cut to be noticed")
        DETECTION["sshd killed mid-stream"] = time.monotonic() - t0
        await asyncio.wait_for(task, 60)
        e = board.entries["victim-b8"]
        assert e.status == "failed" and ("lost" in e.detail or "disconnected" in e.detail
                                         or "without an end" in e.detail)
        events = read_log(e.log_path)[0]
        kept = [x for x in events if isinstance(x, Step)]
        assert len(kept) >= 5  # everything received before the cut is on disk
        assert isinstance(events[-1], End)  # probecast closed the log with an end of its own
        assert board.entries["ok2-b8"].status == "done"
    finally:
        victim.stop()
    # no agent left running (the kill took it; its directory stays for the sweep below - waiting
    # for the directory too, as this did, always ran the wait's whole 10 s)
    await until(lambda: not remote_leftovers("root"), "no agent process left", 60)
    # The kill took the agent too (SIGKILL to the session's processes): its directory stays
    # until the next connection to the host sweeps it (no agent running from it any more).
    left = new_agent_dirs(agents_before, settle=0)  # ours, expected: the sweep takes it
    conn = await connect(host(world, "a", "a"))
    async with conn:
        await SshRunner._sweep(conn, min_age_minutes=0)
    assert not {p for p in left if p.exists()}


@pytest.mark.faults('hung host (sshd sessions SIGSTOPped)',
                    checks='detected by keepalive within seconds; log ends in end')
async def test_hung_host_is_detected_by_keepalive(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    h = host(world, "hung", "b", keepalive_interval=1.0)
    s = settings(world, sleep=0.05, extra="- 1000", max_steps=10_000)  # outlasts the checks
    board = Board(Pricing(Catalog.embedded()))
    plan = plan_probes([h], s, tmp_path)
    task = asyncio.create_task(run_plan(board, plan, factory=lambda hh, sp, p: SshRunner(hh, sp, p)))
    await until(lambda: board.entries.get("hung-b8") is not None
                and board.entries["hung-b8"].state.steps >= 3, "3 steps on the hung host")
    t0 = time.monotonic()
    world["b"].signal_sessions(signal.SIGSTOP)  # the host stops answering, TCP stays up
    try:
        while board.entries["hung-b8"].active:
            await asyncio.sleep(0.05)
            assert time.monotonic() - t0 < 30, "keepalive did not fire"
        DETECTION["hung host (keepalive 1 s x 3)"] = time.monotonic() - t0
    finally:
        world["b"].signal_sessions(signal.SIGCONT)
    await asyncio.wait_for(task, 30)
    e = board.entries["hung-b8"]
    assert e.status == "failed"
    assert e.state.steps >= 3


@pytest.mark.faults('the program fails on the host',
                    checks="failed, with the program's last stderr lines")
async def test_remote_failure_shows_stderr_tail(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    h = host(world, "fails", "a")
    board = await run(world, [h], settings(world, extra="4", max_steps=30), tmp_path)
    e = board.entries["fails-b8"]
    assert e.status == "failed"
    assert "simulated failure" in e.detail
    events, _ = read_log(e.log_path)
    assert events[-1].status == "failed" and "RuntimeError" in events[-1].reason


@pytest.mark.faults('probe cancelled by the user',
                    checks='no remote process or directory left')
@pytest.mark.parametrize("user", ["root", sshd_mod.TEST_USER])
async def test_cancel_leaves_no_remote_process(world, tmp_path, user) -> None:  # type: ignore[no-untyped-def]
    h = host(world, f"cancel-{user}", "b", user=user)
    # a probe far longer than the checks: the cancel, not its end, must stop it
    spec_settings = settings(world, sleep=0.05, extra="- 1000", max_steps=10_000)
    board = Board(Pricing(Catalog.embedded()))
    plan = plan_probes([h], spec_settings, tmp_path)
    runner = SshRunner(h, plan[0].spec, plan[0].log_path)
    board.add(plan[0].spec, plan[0].log_path)
    task = asyncio.create_task(board.pump(runner))
    key = plan[0].spec.key
    await until(lambda: board.entries[key].state.steps >= 3, "3 steps")
    assert remote_leftovers(user), "the agent should be running remotely"
    t0 = time.monotonic()
    await runner.cancel()
    await asyncio.wait_for(task, 30)
    DETECTION[f"cancel ({user})"] = time.monotonic() - t0
    assert board.entries[key].status == "stopped"
    events, _ = read_log(plan[0].log_path)
    assert events[-1].status == "stopped"  # the agent stopped cleanly and said so
    assert remote_leftovers(user) == []


@pytest.mark.faults('shell injection through config values',
                    checks='no vector executes')
async def test_config_values_cannot_inject_shell(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    marker = world["base"] / "pwned"
    evil_dir = world["base"] / "work dir; touch pwned"
    evil_dir.mkdir()
    os.chmod(evil_dir, 0o755)
    h = host(world, "evil", "a")
    s = settings(world)
    s.workdir = str(evil_dir)
    s.command = f"python3 {world['trainer']} 0.01 '$(touch {marker})'"
    board = await run(world, [h], s, tmp_path)
    assert board.entries["evil-b8"].status == "done", board.entries["evil-b8"].detail
    assert not marker.exists()  # the $(...) in the command reached the trainer as text
    assert not Path("/root/pwned").exists()  # the workdir's "; touch pwned" never ran
    cmd = remote_command("python3; rm -rf /", "/tmp/x/agent.pyz", ["run", "--", "a b"], "~/$(id)")
    assert cmd.startswith('cd "$HOME"/\'$(id)\' && exec \'python3; rm -rf /\'')


def test_headless_probe_from_a_config_file(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import sys

    from conftest import ROOT

    cfg = tmp_path / "probecast.toml"
    common = (f'identity_file = "{world["client"]}"\nknown_hosts = "{world["known"]}"\n'
              'python = "/usr/bin/python3"\n')
    cfg.write_text(
        f'[[hosts]]\nname = "gw"\ninstance = "p3.2xlarge"\naddress = "127.0.0.2"\nport = {world["a"].port}\nuser = "root"\n{common}'
        f'[[hosts]]\nname = "inner"\ninstance = "g5.xlarge"\naddress = "127.0.0.3"\n'
        f'port = {world["b"].port}\nuser = "{sshd_mod.TEST_USER}"\njump = "gw"\n{common}'
        f'[probe]\ncommand = "python3 {world["trainer"]} 0.01"\nbatch_sizes = [8]\nmax_steps = 12\n'
        'boundary_budget = 0\n')
    out_dir = tmp_path / "logs"
    r = subprocess.run([sys.executable, "-m", "probecast.tui", "probe", "--config", str(cfg), "--headless",
                        "--out", str(out_dir)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Ranking: fastest first" in r.stdout
    assert "p3.2xlarge" in r.stdout and "g5.xlarge" in r.stdout
    assert sorted(p.name for p in out_dir.glob("*.jsonl")) == ["gw-b8.jsonl", "inner-b8.jsonl"]
    assert "done" in r.stdout  # plain progress lines when not on a terminal


@pytest.mark.parametrize("launcher", ["bash", "module"])
async def test_shell_scripts_and_python_dash_m_over_ssh(world, tmp_path, launcher) -> None:  # type: ignore[no-untyped-def]
    """The command runs as it is on the host; the hook reaches the Python it starts; the
    program's output comes back whole beside the log, never mixed with the events."""
    base = world["base"] / f"job-{launcher}"
    (base / "trainpkg").mkdir(parents=True, exist_ok=True)
    (base / "trainpkg" / "__init__.py").write_text("")
    (base / "trainpkg" / "__main__.py").write_text(
        "import sys\nprint('noise ' * 200, end='\\r', flush=True)\n" + TRAINER)
    (base / "run.sh").write_text("#!/bin/bash\nset -e\necho preparing the data\n"
                                 "exec /usr/bin/python3 -m trainpkg \"$@\"\n")
    for p in [base, base / "trainpkg", *base.rglob("*")]:
        os.chmod(p, 0o755)
    command = ("bash run.sh 0.01" if launcher == "bash"
               else "/usr/bin/python3 -m trainpkg 0.01")
    s = ProbeSettings(command=command, workdir=str(base), batch_sizes=[8], max_steps=12,
                      boundary_budget=0)
    board = await run(world, [host(world, "a", "a")], s, tmp_path)
    entry = board.entries["a-b8"]
    assert entry.status == "done", entry.detail
    events, report = read_log(tmp_path / "a-b8.jsonl")
    assert report.malformed == []
    assert len([e for e in events if isinstance(e, Step)]) == 12
    assert events[-1].status == "probe-done" and events[-1].exit_code == 0
    output = (tmp_path / "a-b8.output").read_text()
    assert "noise noise" in output and ("preparing the data" in output) == (launcher == "bash")


@pytest.mark.faults('identity_file missing',
                    checks='the file is named')
async def test_a_missing_identity_file_is_named_as_such(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    h = host(world, "a", "a", identity_file=str(tmp_path / "no-such-key"))
    board = await run(world, [h], settings(world), tmp_path)
    entry = board.entries["a-b8"]
    assert entry.status == "failed"
    assert "identity_file" in entry.detail and "no such file" in entry.detail
    assert "no-such-key" in entry.detail


@pytest.mark.faults('changed host key, accept_new_host_key = true (direct, through a jump host)',
                    checks='refused; both fingerprints; nothing uploaded')
@pytest.mark.parametrize("through_jump", [False, True])
async def test_a_changed_host_key_is_refused_even_with_accept_new(world, tmp_path, through_jump) -> None:  # type: ignore[no-untyped-def]
    """An attacker's key for a known host: refused, not recorded, both fingerprints shown."""
    forged = world["other"].with_suffix(".pub").read_text().split()
    known = tmp_path / "known_hosts"
    lines = world["known"].read_text().splitlines()
    server = world["b"] if through_jump else world["a"]
    target = f"[{server.address}]:{server.port}"
    lines = [ln for ln in lines if not ln.startswith(target)] + [f"{target} {forged[0]} {forged[1]}"]
    known.write_text("\n".join(lines) + "\n")
    before = known.read_text()
    if through_jump:
        hosts = [host(world, "jump", "a", known_hosts=str(known)),
                 host(world, "inner", "b", known_hosts=str(known), jump="jump",
                      accept_new_host_key=True)]
        key = "inner-b8"
    else:
        hosts = [host(world, "a", "a", known_hosts=str(known), accept_new_host_key=True)]
        key = "a-b8"
    board = await run(world, hosts, settings(world), tmp_path)
    e = board.entries[key]
    assert e.status == "failed" and "HOST KEY CHANGED" in e.detail, e.detail
    assert e.detail.count("SHA256:") == 2 and f"ssh-keygen -R '{target}'" in e.detail
    assert known.read_text() == before  # nothing recorded


@pytest.mark.faults("host's /tmp full (tmpfs in a mount namespace)",
                    checks='agent goes to ~/.cache/probecast, said in the status; probe done; directory removed')
async def test_a_full_tmp_on_the_host_falls_back_to_another_directory(world, tmp_path, caplog) -> None:  # type: ignore[no-untyped-def]
    """/tmp full on the host: the agent goes to ~/.cache/probecast instead, the probe runs, and
    the directory is gone afterwards."""
    base = Path(tempfile.mkdtemp(prefix="probecast-fulltmp-", dir="/var/tmp"))
    os.chmod(base, 0o755)
    try:
        server = sshd_mod.start_sshd(base / "s", "127.0.0.6", None,
                                     world["client"].with_suffix(".pub").read_text(), full_tmp=True)
    except RuntimeError as exc:
        pytest.skip(f"no mount namespace here: {exc}")
    try:
        trainer = base / "trainer.py"  # outside /tmp: the host's /tmp is the full one
        trainer.write_text(TRAINER)
        os.chmod(trainer, 0o644)
        known = base / "known_hosts"
        known.write_text(server.known_hosts_line())
        h = Host(name="fulltmp", address=server.address, port=server.port, user="root",
                 instance="g5.xlarge", identity_file=str(world["client"]), known_hosts=str(known),
                 python="/usr/bin/python3", keepalive_interval=1.0, connect_timeout=5.0)
        s = ProbeSettings(command=f"python3 {trainer} 0.01", batch_sizes=[8], max_steps=15,
                          boundary_budget=0)
        import logging

        board = Board(Pricing(Catalog.embedded()))
        seen: list[str] = []
        real_feed = board.feed

        def feed(key, item):  # type: ignore[no-untyped-def]
            if getattr(item, "status", None) == "running":
                seen.append(item.detail)
            real_feed(key, item)

        board.feed = feed  # type: ignore[method-assign]
        with caplog.at_level(logging.INFO, logger="probecast"):
            await run_plan(board, plan_probes([h], s, tmp_path),
                           factory=lambda host, spec, p: SshRunner(host, spec, p, {h.name: h}))
        assert any("agent in /root/.cache/probecast/" in d and "/tmp" in d for d in seen), seen
        (entry,) = board.entries.values()
        assert entry.status == "done", entry.detail
        assert entry.state.steps >= 15
        said = caplog.text
        assert "agent uploaded to /root/.cache/probecast/probecast-" in said, said
        assert "/tmp: " in said and "No space left" in said, said  # and why
        df = subprocess.run(["nsenter", "-t", str(server.proc.pid), "-m", "df", "/tmp"],
                            capture_output=True, text=True).stdout
        assert "100%" in df, df  # it really was full
        # removed when done: ours, named in the log (another suite's may be there meanwhile)
        ours = re.findall(r"agent uploaded to (/root/\.cache/probecast/probecast-[0-9a-f]+)", said)
        assert ours and not [d for d in ours if Path(d).exists()], ours
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)
