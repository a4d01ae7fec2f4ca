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
# On a probed program's PYTHONPATH the zip's sitecustomize installs the hook in every Python
# process the command starts - then runs the sitecustomize it shadows, if there is one.
_SITECUSTOMIZE = f'''"""probecast: the probe hook, installed at interpreter start-up (PROBECAST_EVENTS set)."""
import os as _os


def _probecast_hook():
    if not _os.environ.get("PROBECAST_EVENTS"):
        return
    import time
    began = time.monotonic()  # the hook's own set-up is no part of the program's start-up
    try:
        from {PACKAGE}.hook import install
        install(began)
    except Exception as exc:  # never break the program: it runs unprobed, and says so
        import sys
        sys.stderr.write("probecast: hook not installed (%r); the program runs unprobed\\n" % (exc,))


def _probecast_chain():
    import importlib.machinery
    import importlib.util
    import sys
    here = _os.path.dirname(_os.path.abspath(__file__))
    rest = [p for p in sys.path if p and _os.path.abspath(p) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None and spec.origin != __file__:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_probecast_hook()
_probecast_chain()
'''


def agent_sources() -> dict[str, bytes]:
    """Every module of the agent, its adapters/ package too, by its path in the zip."""
    here = Path(__file__).resolve().parent
    return {f"{PACKAGE}/{p.relative_to(here).as_posix()}": p.read_bytes()
            for p in sorted(here.rglob("*.py"))
            if p.name != "bundle.py" and "__pycache__" not in p.parts}


def compiled(name: str, source: bytes) -> bytes | None:
    """The module as an unchecked hash-based .pyc for this interpreter. Python cannot write the
    .pyc of a module imported from a zip, so without it every process the probed command starts
    compiles the whole agent again before its first line (0.2-0.4 s measured on 2 cores). An
    interpreter of another version finds the wrong magic number and compiles the .py beside it,
    as before. Its code names ``probecast_agent/...``: never taken for the program's own."""
    import importlib.util
    import marshal

    try:
        code = compile(source, name, "exec", dont_inherit=True)
    except SyntaxError:
        return None
    flags = (1).to_bytes(4, "little")  # hash-based, source not checked: the zip never changes
    return (importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(source)
            + marshal.dumps(code))


def zipapp_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in agent_sources().items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible bytes
            zf.writestr(info, data, zipfile.ZIP_DEFLATED)
            pyc = compiled(name, data)
            if pyc is not None:
                zf.writestr(zipfile.ZipInfo(name + "c", date_time=(2020, 1, 1, 0, 0, 0)), pyc,
                            zipfile.ZIP_DEFLATED)
        zf.writestr(zipfile.ZipInfo("__main__.py", date_time=(2020, 1, 1, 0, 0, 0)), _MAIN)
        zf.writestr(zipfile.ZipInfo("sitecustomize.py", date_time=(2020, 1, 1, 0, 0, 0)),
                    _SITECUSTOMIZE)
    return buf.getvalue()


def local_agent_zip() -> Path:
    """The agent zip for probes on this machine - and the hook's zip when the agent runs from
    source - built once per content into the user's cache (named by its sources: compiling it
    again at every launch would delay the program's start)."""
    import hashlib
    import importlib.util
    import tempfile

    sources = b"".join(name.encode() + body for name, body in agent_sources().items())
    digest = hashlib.sha256(sources + _SITECUSTOMIZE.encode() + importlib.util.MAGIC_NUMBER
                            ).hexdigest()[:16]  # by what it holds: the bytecode's bytes may vary
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "probecast"
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError:
        base = Path(tempfile.gettempdir())
    path = base / f"agent-{digest}.pyz"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(zipapp_bytes())
        os.replace(tmp, path)  # atomic: concurrent probes never run a half-written zip
    return path


def build_zipapp(path: str | os.PathLike[str]) -> Path:
    out = Path(path)
    out.write_bytes(zipapp_bytes())
    return out
