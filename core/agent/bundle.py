"""Package the agent as one zip (``python3 probecast-agent.pyz ...``) for remote hosts.

The agent's modules use relative imports only, so the same files work as ``core.agent`` here
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


def build_zipapp(path: str | os.PathLike[str]) -> Path:
    out = Path(path)
    out.write_bytes(zipapp_bytes())
    return out
