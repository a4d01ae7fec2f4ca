"""Package the agent as one zip (``python3 probecast-agent.pyz ...``) for remote hosts.

The agent's modules use relative imports only, so the same files work as ``probecast.core.agent`` here
and as ``probecast_agent`` inside the zip.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

PACKAGE = "probecast_agent"
_MAIN = (
    "import sys\n"
    f"from {PACKAGE}.agent_main import main\n"
    "sys.exit(main())\n"
)


def agent_sources() -> dict[str, bytes]:
    here = Path(__file__).resolve().parent
    return {f"{PACKAGE}/{p.name}": p.read_bytes() for p in sorted(here.glob("*.py"))
            if p.name != "bundle.py"}


def zipapp_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in agent_sources().items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible bytes
            zf.writestr(info, data, zipfile.ZIP_DEFLATED)
        zf.writestr(zipfile.ZipInfo("__main__.py", date_time=(2020, 1, 1, 0, 0, 0)), _MAIN)
    return buf.getvalue()


def local_agent_zip() -> Path:
    """The agent zip for probes on this machine, built once per content into the user's cache."""
    import hashlib
    import tempfile

    data = zipapp_bytes()
    digest = hashlib.sha256(data).hexdigest()[:16]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "probecast"
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError:
        base = Path(tempfile.gettempdir())
    path = base / f"agent-{digest}.pyz"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)  # atomic: concurrent probes never run a half-written zip
    return path


def build_zipapp(path: str | os.PathLike[str]) -> Path:
    out = Path(path)
    out.write_bytes(zipapp_bytes())
    return out
