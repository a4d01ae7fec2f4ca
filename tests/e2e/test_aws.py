"""AWS against moto's server on loopback (boto3 pointed at it); the Pricing API, which moto
lacks, through botocore's Stubber with real get_products response shapes."""

from __future__ import annotations

import asyncio
import atexit
import datetime as dt
import json
import os
import shutil
import tempfile
from pathlib import Path

import boto3
import pytest
from botocore.stub import ANY, Stubber

from probecast.core.cloud import client as aws_client, prices as aws_prices, provision
from probecast.core.cloud.aws_launch import AwsProvider
from probecast.core.run.config import AwsSettings
from probecast.core.run.board import Board
from probecast.core.run.config import ProbeSettings, parse_config
from probecast.core.run.job import ProbeJob
from probecast.core.run.session import Session
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing

REGION = "us-east-1"


@pytest.fixture(scope="module")
def moto_url():  # type: ignore[no-untyped-def]
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(autouse=True)
def fake_credentials(monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def ec2_client(url: str):  # type: ignore[no-untyped-def]
    return aws_client.client("ec2", REGION, url)


def an_ami(ec2) -> str:  # type: ignore[no-untyped-def]
    return ec2.describe_images()["Images"][0]["ImageId"]


def test_gpu_facts_from_describe_instance_types(moto_url) -> None:  # type: ignore[no-untyped-def]
    facts = {f.instance: f for f in aws_prices.gpu_facts(ec2_client(moto_url),
                                                 ["g4dn.xlarge", "g5.xlarge", "g6.xlarge",
                                                  "p4d.24xlarge", "p5.48xlarge"])}
    assert facts["g4dn.xlarge"].gpu_model == "T4" and facts["g4dn.xlarge"].gpu_count == 1
    assert facts["g5.xlarge"].gpu_model == "A10G"
    assert facts["p4d.24xlarge"].gpu_count == 8 and facts["p4d.24xlarge"].gpu_model == "A100"
    assert facts["p5.48xlarge"].gpu_count == 8 and facts["p5.48xlarge"].vcpus == 192
    assert facts["g6.xlarge"].gpu_memory_gb and facts["g6.xlarge"].gpu_memory_gb > 20
    # unfiltered: paginated over every GPU family moto knows
    allgpu = aws_prices.gpu_facts(ec2_client(moto_url))
    assert len(allgpu) > 20 and all(f.gpu_count > 0 for f in allgpu)


def test_launch_tags_shutdown_behaviour_waiters_and_terminate(moto_url) -> None:  # type: ignore[no-untyped-def]
    ec2 = ec2_client(moto_url)
    settings = AwsSettings(ami=an_ami(ec2), instance_types=["g5.xlarge"], deadman_minutes=30)
    prov = provision.Provisioner(ec2, settings)
    item = prov.launch("g5.xlarge")
    asyncio.run(prov.wait_running([item], delay=1))
    desc = ec2.describe_instances(InstanceIds=[item.instance_id])["Reservations"][0]["Instances"][0]
    tags = {t["Key"]: t["Value"] for t in desc["Tags"]}
    assert tags[aws_client.TAG_SESSION] == prov.session and tags[aws_client.TAG_OWNER] == provision.owner()
    attr = ec2.describe_instance_attribute(InstanceId=item.instance_id,
                                           Attribute="instanceInitiatedShutdownBehavior")
    assert attr["InstanceInitiatedShutdownBehavior"]["Value"] == "terminate"
    ud = ec2.describe_instance_attribute(InstanceId=item.instance_id, Attribute="userData")
    import base64
    script = base64.b64decode(ud["UserData"]["Value"]).decode()
    assert "shutdown -h now" in script and str(30 * 60) in script
    assert item.address
    prov.terminate_all()
    ec2.get_waiter("instance_terminated").wait(InstanceIds=[item.instance_id],
                                               WaiterConfig={"Delay": 1, "MaxAttempts": 10})


def aws_job(session: Session, provider: AwsProvider, log_dir: Path) -> ProbeJob:
    """The probe job on [aws] alone, as `probe --headless` makes it: every listed type."""
    return ProbeJob(session, [], log_dir, [(provider, list(provider.aws.instance_types))])


@pytest.mark.faults('worst case above max_spend (moto)',
                    checks='refused before any launch')
def test_spend_cap_is_refused_before_anything_launches(moto_url) -> None:  # type: ignore[no-untyped-def]
    ec2 = ec2_client(moto_url)
    settings = AwsSettings(ami=an_ami(ec2), instance_types=["p5.48xlarge"], max_spend=5.0,
                               deadman_minutes=60)
    before = len(provision.find_leftovers(ec2))
    with pytest.raises(aws_client.AwsError, match="exceeds max_spend"):
        provision.Provisioner(ec2, settings).check_budget(Catalog.embedded())
    assert len(provision.find_leftovers(ec2)) == before


@pytest.mark.faults('failure after launch (moto)',
                    checks='every launched instance terminated')
def test_failure_in_the_middle_terminates_every_launched_instance(moto_url, tmp_path) -> None:  # type: ignore[no-untyped-def]
    ec2 = ec2_client(moto_url)
    settings = AwsSettings(ami=an_ami(ec2), instance_types=["g5.xlarge", "g4dn.xlarge"],
                               max_spend=50)
    board = Board(Pricing(Catalog.embedded()))

    def no_route(item):  # type: ignore[no-untyped-def]
        raise aws_client.AwsError(f"{item.instance_id}: no route to host (simulated)")

    with pytest.raises(aws_client.AwsError, match="simulated"):
        asyncio.run(aws_job(Session(board, settings=ProbeSettings()), AwsProvider(
            settings, Catalog.embedded(), address_for=no_route, ec2_client=ec2),
            tmp_path).run())
    mine = [i for i in provision.find_leftovers(ec2) if i["type"] in ("g5.xlarge", "g4dn.xlarge")]
    assert mine == []  # both were launched and both are terminated


@pytest.mark.faults('probecast killed -9 (instances left)',
                    checks='cleanup finds and terminates them')
def test_cleanup_finds_leftovers_of_any_session(moto_url, run_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_url)  # the CLI goes through boto3's chain
    ec2 = ec2_client(moto_url)
    settings = AwsSettings(ami=an_ami(ec2), instance_types=["g6.xlarge"])
    a = provision.Provisioner(ec2, settings).launch("g6.xlarge")  # a crashed session's instance
    b = provision.Provisioner(ec2, settings).launch("g6.xlarge")  # another one
    other = ec2.run_instances(ImageId=an_ami(ec2), InstanceType="t3.micro", MinCount=1, MaxCount=1,
                              TagSpecifications=[{"ResourceType": "instance", "Tags": [
                                  {"Key": aws_client.TAG_OWNER, "Value": "someone-else"}]}])
    code, out, _ = run_cli("cleanup", "--dry-run")
    assert code == 0 and a.instance_id in out and b.instance_id in out
    assert other["Instances"][0]["InstanceId"] not in out and "dry run" in out
    code, out, _ = run_cli("cleanup", "--yes")
    assert code == 0 and "terminated 2" in out
    assert provision.find_leftovers(ec2) == []
    code, out, _ = run_cli("cleanup", "--yes")
    assert "no probecast instances" in out


def _play_cloud_init(ec2, item, base: Path, pub: str, name: str, port: int, tamper: bool = False,  # type: ignore[no-untyped-def]
                     address: str = "127.0.0.5"):
    """Start the 'instance': an sshd serving the host key its user data carries (or, tampered,
    another key - a machine in the middle)."""
    import base64

    import sshd as sshd_mod

    from probecast.core.cloud.userdata import HostKey, host_key_from_user_data

    raw = ec2.describe_instance_attribute(InstanceId=item.instance_id, Attribute="userData")
    data = base64.b64decode(raw["UserData"]["Value"]).decode()
    key = HostKey.generate() if tamper else host_key_from_user_data(data)
    assert "text/x-shellscript" in data and "probecast-deadline" in data  # the dead-man part too
    return sshd_mod.start_sshd(base / name, address, port, pub, host_key_pair=(key.private, key.public))


def _instance_world(sshd_mod):  # type: ignore[no-untyped-def]
    """What a launched instance's tests share: a world-readable directory, a client key (and its
    public half, for the instance's authorized_keys) and a 50-step StepTimer trainer."""
    if sshd_mod.available():
        pytest.skip(sshd_mod.available())
    base = Path(tempfile.mkdtemp(prefix="probecast-aws-", dir="/tmp"))
    atexit.register(shutil.rmtree, base, True)  # (its servers are stopped by each test)
    os.chmod(base, 0o755)
    key = sshd_mod.keygen(base / "client")
    trainer = base / "trainer.py"
    trainer.write_text("import time\nfrom probecast_agent import StepTimer\n"
                       "p = StepTimer(steps_per_epoch=50, batch_size=8)\n"
                       "for _ in p.epochs(range(1)):\n    for _ in p.steps(range(50)):\n"
                       "        time.sleep(0.01)\n")
    os.chmod(trainer, 0o644)
    return base, key, key.with_suffix(".pub").read_text(), trainer


@pytest.mark.faults('launched instance answers with another host key (moto + sshd)',
                    checks='refused; nothing run; instance terminated')
@pytest.mark.parametrize("tamper", [False, True], ids=["pinned-key", "another-key"])
def test_launched_instance_is_reached_only_with_the_host_key_it_was_given(moto_url, tmp_path, tamper) -> None:  # type: ignore[no-untyped-def]
    """No trust on first use for instances probecast launches: their host key is made locally
    and given in the user data; a server with any other key is refused, and nothing runs."""
    import sshd as sshd_mod

    base, key, pub, trainer = _instance_world(sshd_mod)
    deadline_file = base / "deadline"
    port = sshd_mod.free_port("127.0.0.5")
    servers = []
    ec2 = ec2_client(moto_url)

    def address_for(item):  # type: ignore[no-untyped-def]
        servers.append(_play_cloud_init(ec2, item, base, pub, f"s-{item.instance_id}", port, tamper))
        return "127.0.0.5"

    try:
        settings = AwsSettings(ami=an_ami(ec2), instance_types=["g5.xlarge"], user="root",
                               identity_file=str(key), python="/usr/bin/python3",
                               endpoint_url=moto_url, max_spend=10)
        probe = ProbeSettings(command=f"python3 {trainer}", batch_sizes=[8], max_steps=10,
                              boundary_budget=0)
        board = Board(Pricing(Catalog.embedded()))
        driver = Session(board, settings=probe)
        job = aws_job(driver, AwsProvider(settings, Catalog.embedded(), address_for=address_for,
                                          port=port, deadman_file=str(deadline_file),
                                          ssh_timeout=20, ec2_client=ec2), tmp_path)
        asyncio.run(job.run())
        prov = job.launch.prov  # type: ignore[union-attr]
        (entry,) = board.entries.values()
        # the one session drove it: the adaptive step ran (one candidate: nothing to settle) and
        # the end-of-run lines name the failure, as in the app and on the SSH path
        assert driver.adaptive is not None and not driver.adaptive.reprobed
        assert driver.host_caption is not None and "g5.xlarge" in (driver.host_caption(entry.key) or "")
        assert [line for line in driver.summary() if "failed" in line] == (
            [f"{entry.spec.label}: failed - {entry.detail}"] if tamper else [])
        pinned = (tmp_path / "known_hosts").read_text()
        assert pinned.startswith(f"[127.0.0.5]:{port} ssh-ed25519 ")
        assert oct((tmp_path / "known_hosts").stat().st_mode & 0o777) == "0o600"
        if tamper:
            assert entry.status == "failed"
            assert "host key" in entry.detail.lower(), entry.detail
            assert entry.state.steps == 0 and not deadline_file.exists()  # nothing ran there
        else:
            assert entry.status == "done", entry.detail
            assert entry.instance == "g5.xlarge" and entry.state.steps == 10
            assert int(deadline_file.read_text()) > dt.datetime.now().timestamp()  # pushed back
        state = ec2.describe_instances(InstanceIds=[prov.launched[0].instance_id])[
            "Reservations"][0]["Instances"][0]["State"]["Name"]
        assert state in ("shutting-down", "terminated")
    finally:
        for server in servers:
            server.stop()


@pytest.mark.faults("SIGTERM to probecast while launched instances boot (moto)",
                    checks="exit 130; every instance of the session terminated; nothing left for cleanup")
def test_sigterm_while_instances_boot_terminates_them_and_exits_130(moto_url, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import signal
    import subprocess
    import sys
    import time

    ec2 = ec2_client(moto_url)
    key = tmp_path / "id"
    key.write_text("not used: SSH never becomes ready here")
    cfg = tmp_path / "probecast.toml"
    cfg.write_text(f"""[aws]
region = "{REGION}"
endpoint_url = "{moto_url}"
ami = "{an_ami(ec2)}"
instance_types = ["g5.xlarge", "g4dn.xlarge"]
identity_file = "{key}"
max_spend = 50

[probe]
command = "python3 train.py"
batch_sizes = [8]
""")
    before = {i["InstanceId"] for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]}
    proc = subprocess.Popen([sys.executable, "-m", "probecast.tui", "probe", "--config", str(cfg),
                             "--headless", "--yes", "--out", str(tmp_path / "logs")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        ours: list[str] = []
        while time.monotonic() < deadline and len(ours) < 2:  # launched, now waiting for SSH
            time.sleep(0.5)
            ours = [i["InstanceId"] for r in ec2.describe_instances()["Reservations"]
                    for i in r["Instances"] if i["InstanceId"] not in before]
        assert len(ours) == 2, proc.stderr.read() if proc.poll() is not None else "not launched"

        def waiting_for_ssh() -> bool:  # each instance's key is pinned just before its SSH wait
            return any(len(p.read_text().splitlines()) == 2
                       for p in (tmp_path / "logs").rglob("known_hosts"))

        while time.monotonic() < deadline and not waiting_for_ssh():
            time.sleep(0.1)
        assert waiting_for_ssh(), proc.stderr.read() if proc.poll() is not None else "no SSH wait"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out + err
    assert "instances terminated" in out
    states = {i["InstanceId"]: i["State"]["Name"] for r in ec2.describe_instances(InstanceIds=ours)[
        "Reservations"] for i in r["Instances"]}
    assert set(states.values()) <= {"shutting-down", "terminated"}, states
    assert not provision.find_leftovers(ec2)  # nothing for `probecast cleanup`


# ---- Pricing API (Stubber) -------------------------------------------------------------------


def price_item(instance: str, usd: str, gpu: str = "1", mem: str = "16 GiB") -> str:
    """A PriceList entry shaped like real get_products output (a JSON string)."""
    sku = f"SKU{abs(hash(instance)) % 10**8:08d}"
    return json.dumps({
        "product": {"productFamily": "Compute Instance", "sku": sku, "attributes": {
            "instanceType": instance, "instanceFamily": "GPU instance", "regionCode": REGION,
            "location": "US East (N. Virginia)", "operatingSystem": "Linux", "tenancy": "Shared",
            "preInstalledSw": "NA", "capacitystatus": "Used", "vcpu": "4", "memory": mem,
            "gpu": gpu, "gpuMemory": "24 GiB", "servicecode": "AmazonEC2"}},
        "serviceCode": "AmazonEC2",
        "terms": {"OnDemand": {f"{sku}.JRTCKXETXF": {
            "offerTermCode": "JRTCKXETXF", "sku": sku, "effectiveDate": "2026-11-01T00:00:00Z",
            "termAttributes": {},
            "priceDimensions": {f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                "unit": "Hrs", "endRange": "Inf", "beginRange": "0",
                "description": f"${usd} per On Demand Linux {instance} Instance Hour",
                "rateCode": f"{sku}.JRTCKXETXF.6YS6EN2CT7", "appliesTo": [],
                "pricePerUnit": {"USD": usd}}}}}},
        "version": "20261101000000", "publicationDate": "2026-11-01T00:00:00Z"})


def test_pricing_parser_paginates_and_filters_server_side() -> None:
    pricing = boto3.client("pricing", region_name="us-east-1")
    stub = Stubber(pricing)
    expected = {"ServiceCode": "AmazonEC2", "Filters": ANY, "FormatVersion": "aws_v1"}
    stub.add_response("get_products", {"PriceList": [price_item("g5.xlarge", "1.0060000000"),
                                                      price_item("p3.2xlarge", "3.0600000000")],
                                       "FormatVersion": "aws_v1", "NextToken": "t1"}, expected)
    stub.add_response("get_products", {"PriceList": [price_item("g6.xlarge", "0.8048000000"),
                                                      price_item("g6.xlarge", "0.0000000000")],
                                       "FormatVersion": "aws_v1"}, {**expected, "NextToken": "t1"})
    with stub:
        rows = aws_prices.fetch_ondemand_prices(pricing, REGION)
    stub.assert_no_pending_responses()
    prices = {r.instance: r.price_per_hour for r in rows}
    assert prices == {"g5.xlarge": 1.006, "g6.xlarge": 0.8048, "p3.2xlarge": 3.06}
    g5 = next(r for r in rows if r.instance == "g5.xlarge")
    assert g5.gpu_count == 1 and g5.gpu_memory_gb == 24 and g5.vcpus == 4 and g5.price_date


def test_pricing_filters_are_the_gpu_linux_shared_on_demand_ones() -> None:
    pricing = boto3.client("pricing", region_name="us-east-1")
    stub = Stubber(pricing)
    filters = {(f["Field"], f["Value"]) for f in [
        {"Field": "regionCode", "Value": "eu-west-1"}, {"Field": "operatingSystem", "Value": "Linux"},
        {"Field": "tenancy", "Value": "Shared"}, {"Field": "preInstalledSw", "Value": "NA"},
        {"Field": "capacitystatus", "Value": "Used"}, {"Field": "instanceFamily", "Value": "GPU instance"}]}
    seen = {}

    def capture(params, **kwargs):  # type: ignore[no-untyped-def]
        seen["filters"] = {(f["Field"], f["Value"]) for f in params["Filters"]}

    pricing.meta.events.register("provide-client-params.pricing.GetProducts", capture)
    stub.add_response("get_products", {"PriceList": [price_item("p5.48xlarge", "98.32", "8")]})
    with stub:
        rows = aws_prices.fetch_ondemand_prices(pricing, "eu-west-1", families=["p5", "g5"])
    assert seen["filters"] == filters
    assert [r.instance for r in rows] == ["p5.48xlarge"]


def test_cache_is_preferred_and_says_so(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert aws_prices.current_catalog(REGION).source == "embedded"
    rows = aws_prices.parse_price_list([price_item("g5.xlarge", "0.9500000000")])
    path = aws_prices.save_price_cache(rows, REGION)
    cat = aws_prices.current_catalog(REGION)
    assert cat.price("g5.xlarge")[0] == 0.95 and "cache" in cat.source and str(path) in cat.source
    assert cat.get("g5.xlarge").gpu_model == "A10G"  # type: ignore[union-attr]  # embedded facts kept
    assert cat.price("p3.2xlarge")[0] == 3.06  # not in the cache: embedded


def test_a_refreshed_price_replaces_an_unverified_one_and_keeps_the_gpu_name(run_cli) -> None:  # type: ignore[no-untyped-def]
    assert aws_prices.current_catalog(REGION).get("g5.24xlarge").unverified  # type: ignore[union-attr]
    rows = aws_prices.parse_price_list([price_item("g5.24xlarge", "8.1440000000", "4")])
    aws_prices.save_price_cache(rows, REGION)
    cat = aws_prices.current_catalog(REGION)
    g5 = cat.get("g5.24xlarge")
    assert g5 is not None and g5.price_per_hour == 8.144 and not g5.unverified
    assert g5.gpu_name == "NVIDIA A10G" and g5.gpu_model == "A10G"  # embedded facts kept
    assert cat.get("g5.16xlarge").unverified  # type: ignore[union-attr]  # not in the cache
    code, out, _ = run_cli("prices", "--family", "g5")
    line = next(line for line in out.splitlines() if line.startswith("g5.24xlarge "))
    assert "8.144" in line and "?" not in line


def test_prices_refresh_through_the_cli_over_the_new_catalog(moto_url, monkeypatch, run_cli) -> None:  # type: ignore[no-untyped-def]
    """`prices --refresh`: the Pricing API (Stubber), GPU facts from moto's EC2, the cache
    written, and the listing still newest GPUs first with the embedded rows around it."""
    pricing = boto3.client("pricing", region_name="us-east-1")
    stub = Stubber(pricing)
    stub.add_response("get_products", {
        "PriceList": [price_item("g5.xlarge", "1.0060000000"),
                      price_item("p4d.24xlarge", "21.9576420000", "8", "1152 GiB")],
        "FormatVersion": "aws_v1"}, {"ServiceCode": "AmazonEC2", "Filters": ANY,
                                     "FormatVersion": "aws_v1"})
    real = aws_client.client
    monkeypatch.setattr(aws_client, "client", lambda service, region=None, url=None: (
        pricing if service == "pricing" else real(service, region, moto_url)))
    with stub:
        code, out, err = run_cli("prices", "--refresh", "--region", REGION)
    assert code == 0, err
    assert f"2 GPU instance prices for {REGION} cached" in out and "AWS Pricing API cache" in out
    names = [line.split()[0] for line in out.splitlines()[3:] if line and not line.startswith("?")]
    assert names[0] == "p6-b200.48xlarge"  # embedded rows the cache lacks stay, newest first
    assert names.index("p4d.24xlarge") < names.index("g5.xlarge") < names.index("p2.xlarge")
    code, out, _ = run_cli("prices", "--json", "--region", REGION)
    p4d = next(r for r in json.loads(out) if r["instance"] == "p4d.24xlarge")
    assert p4d["source"] == "AWS Pricing API" and p4d["gpu_model"] == "A100"
    assert p4d["gpu_name"] == "NVIDIA A100-SXM4-40GB" and p4d["price_status"] == ""


def test_error_messages_name_the_iam_action_and_fall_back_on_subnets() -> None:
    ec2 = boto3.client("ec2", region_name=REGION)
    stub = Stubber(ec2)
    stub.add_client_error("run_instances", "UnauthorizedOperation", "You are not authorized")
    with stub, pytest.raises(aws_client.AwsError, match="ec2:RunInstances"):
        provision.Provisioner(ec2, AwsSettings(ami="ami-1", instance_types=["g5.xlarge"])).launch("g5.xlarge")
    stub = Stubber(ec2)
    stub.add_client_error("run_instances", "InsufficientInstanceCapacity", "no g5 in us-east-1a")
    stub.add_response("run_instances", {"Instances": [{"InstanceId": "i-0123456789abcdef0",
                                                       "Placement": {"AvailabilityZone": "us-east-1b"}}]},
                      {"ImageId": "ami-1", "InstanceType": "g5.xlarge", "MinCount": 1, "MaxCount": 1,
                       "InstanceInitiatedShutdownBehavior": "terminate", "UserData": ANY,
                       "TagSpecifications": ANY, "SubnetId": "subnet-b"})
    prov = provision.Provisioner(ec2, AwsSettings(ami="ami-1", instance_types=["g5.xlarge"],
                                                subnet_ids=["subnet-a", "subnet-b"]))
    with stub:
        item = prov.launch("g5.xlarge")
    assert item.zone == "us-east-1b" and prov.launched == [item]


def test_no_credentials_is_a_clear_message(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(aws_client.AwsError, match="no AWS credentials"):
        provision.find_leftovers(aws_client.client("ec2", REGION))


def test_aws_config_section_is_validated() -> None:
    cfg = parse_config('[aws]\nregion = "us-west-2"\nami_ssm_parameter = "/aws/service/x"\n'
                       'instance_types = ["g5.xlarge"]\nmax_spend = 3\n', "c.toml")
    assert cfg.aws.region == "us-west-2" and cfg.hosts == []
    from probecast.core.run.config import ConfigError
    with pytest.raises(ConfigError, match="aws.instance_types"):
        parse_config('[aws]\nami = "ami-1"\n', "c.toml")
    with pytest.raises(ConfigError, match="unknown key aws.'max_spent'"):
        parse_config('[aws]\nami = "ami-1"\ninstance_types = ["g5.xlarge"]\nmax_spent = 3\n', "c.toml")


def test_rank_can_price_with_cached_spot_prices(run_cli) -> None:  # type: ignore[no-untyped-def]
    from conftest import SAMPLE_LOGS

    log = str(SAMPLE_LOGS / "reconstructed-dissertation" / "seismic-fcn-p3.2xlarge-b256.jsonl")
    code, out, err = run_cli("rank", log, "--spot", "--json", "--billing", "exact")
    assert "no cached spot prices" in err
    on_demand = json.loads(out)[0]["cost_usd"]
    aws_prices.save_price_cache(aws_prices.parse_price_list([price_item("p3.2xlarge", "3.0600000000")]), REGION,
                         spot={"p3.2xlarge": 0.918})
    code, out, err = run_cli("rank", log, "--spot", "--json", "--billing", "exact")
    row = json.loads(out)[0]
    assert row["price_per_hour"] == 0.918 and row["cost_usd"] == pytest.approx(on_demand * 0.3, rel=1e-6)


def test_waiting_for_ssh_is_cancelled_at_once() -> None:
    """Ctrl-C while a launched instance is not answering yet: the wait ends on the cancel, not
    at its own 300 s timeout (it used to block a thread for minutes, and the exit waited on it).
    How fast is not asked: a loaded machine may take seconds."""
    import socket

    from probecast.core.cloud.provision import wait_ssh_ready

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)  # accepts, never says SSH-
    port = silent.getsockname()[1]

    async def go() -> bool:
        silent.setblocking(False)
        task = asyncio.create_task(wait_ssh_ready("127.0.0.1", port, timeout=300, interval=0.2))
        # connected: the wait now reads for a banner that never comes
        conn, _ = await asyncio.wait_for(asyncio.get_running_loop().sock_accept(silent), 30)
        task.cancel()
        try:  # a bound far under the wait's own timeout, far over any machine's delay
            await asyncio.wait_for(task, 60)
        except asyncio.CancelledError:
            pass
        finally:
            conn.close()
        return task.done()

    try:
        assert asyncio.run(go())  # it ended on the cancel
    finally:
        silent.close()


@pytest.mark.faults("one of two launched types never offers SSH (moto + sshd)",
                    checks="only its probes fail, with why; the configured host and the other "
                           "type probe to done; both instances terminated")
def test_one_unreachable_type_fails_only_its_probes(moto_url, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import sys

    import sshd as sshd_mod

    from probecast.core.cloud.aws_launch import AwsProvider
    from probecast.core.run.config import Host
    from probecast.core.run.probe_plan import run_plan
    from probecast.core.run.runners import RunnerStatus

    base, key, pub, trainer = _instance_world(sshd_mod)
    deadline_file = base / "deadline"
    # the provider reaches both types on one port: free on 127.0.0.8, and on 127.0.0.9 held by
    # a socket that never listens, so the g4dn "instance" refuses on any machine
    port = sshd_mod.free_port("127.0.0.8", "127.0.0.9")
    unreachable = sshd_mod.refusing_port("127.0.0.9", port)
    servers = []
    ec2 = ec2_client(moto_url)

    def address_for(item):  # type: ignore[no-untyped-def]
        if item.instance_type == "g4dn.xlarge":
            return "127.0.0.9"  # nothing listens there: SSH never becomes ready
        servers.append(_play_cloud_init(ec2, item, base, pub, f"s-{item.instance_id}", port,
                                        address="127.0.0.8"))
        return "127.0.0.8"

    settings = AwsSettings(ami=an_ami(ec2), instance_types=["g5.xlarge", "g4dn.xlarge"],
                           user="root", identity_file=str(key), python="/usr/bin/python3",
                           endpoint_url=moto_url, max_spend=10)
    probe = ProbeSettings(command=f"python3 {trainer}", batch_sizes=[8], max_steps=10,
                          boundary_budget=0)
    here = Host(name="here", kind="local", python=sys.executable)
    board = Board(Pricing(Catalog.embedded()))
    seen: list[tuple[str, str]] = []
    feed = board.feed

    def record(key, item):  # type: ignore[no-untyped-def]
        if isinstance(item, RunnerStatus):
            seen.append((key, item.status))
        feed(key, item)

    board.feed = record  # type: ignore[method-assign]
    provider = AwsProvider(settings, Catalog.embedded(), address_for=address_for, port=port,
                           deadman_file=str(deadline_file), ssh_timeout=8, ec2_client=ec2)
    launch = provider.launch(list(settings.instance_types), tmp_path, taken={"here"})
    plan = launch.plan(probe, [here])
    try:
        asyncio.run(launch.run(board, plan, lambda: run_plan(board, plan, timeout=120)))
    finally:
        unreachable.close()
        for server in servers:
            server.stop()
    status = {k: (e.status, e.detail) for k, e in board.entries.items()}
    assert status["here-b8"][0] == "done" and status["g5.xlarge-b8"][0] == "done", status
    assert board.entries["g5.xlarge-b8"].state.steps == 10
    assert status["g4dn.xlarge-b8"][0] == "failed", status
    assert "launch failed" in status["g4dn.xlarge-b8"][1]
    assert "did not offer SSH" in status["g4dn.xlarge-b8"][1], status
    # the configured host did not wait for any launch
    assert seen.index(("here-b8", "running")) < seen.index(("g5.xlarge-b8", "pending"))
    assert int(deadline_file.read_text()) > dt.datetime.now().timestamp()  # pushed back
    ids = [i.instance_id for i in launch.launched]
    assert len(ids) == 2
    states = {i["State"]["Name"] for r in ec2.describe_instances(InstanceIds=ids)["Reservations"]
              for i in r["Instances"]}
    assert states <= {"shutting-down", "terminated"}, states
    assert all(lh.phase == "terminated" for lh in launch.hosts)
