"""cora.tgz as linqs-data serves it (a gzipped tar holding cora/cora.content and cora/cora.cites), built from
make_cora.py's random stand-in. Deterministic: fixed seed, fixed tar member metadata, gzip mtime 0.
    python make_cora_tgz.py OUT.tgz"""
import gzip, io, sys, tarfile, tempfile
from pathlib import Path
from make_cora import main as make_cora

out = Path(sys.argv[1])
with tempfile.TemporaryDirectory() as tmp:
    make_cora(Path(tmp) / "cora")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in ("cora.cites", "cora.content"):
            data = (Path(tmp) / "cora" / name).read_bytes()
            info = tarfile.TarInfo(f"cora/{name}"); info.size = len(data); info.mtime = 0; info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as gz:
        gz.write(buf.getvalue())
print(f"wrote {out}")
