"""The ``[skypilot]`` config section: candidates as SkyPilot resources, launched on any cloud
SkyPilot can reach (probecast[skypilot]); probecast then probes them over its own SSH runner.

Only the settings live here (run may not import cloud); ``core/cloud/skypilot.py`` launches.
"""

from __future__ import annotations

import re
from typing import Annotated

import msgspec

# "A10G:1", "H100:8", "L4" (one); SkyPilot canonicalises the name, we only check the shape.
ACCELERATOR = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*(:[1-9][0-9]*)?$")
# "aws", "aws/us-east-1", "gcp/us-central1/us-central1-a", "k8s/my-context", "*/us-east-1"
INFRA = re.compile(r"^[A-Za-z0-9*][A-Za-z0-9_.*-]*(/[A-Za-z0-9_.*-]+){0,2}$")


class SkyPilotSettings(msgspec.Struct, forbid_unknown_fields=True):
    accelerators: list[str] = msgspec.field(default_factory=list)  # one cluster each
    infra: str | None = None  # SkyPilot's infra: "aws", "aws/us-east-1", ...; None: any cloud
    use_spot: bool = False
    # idle minutes before SkyPilot tears a cluster down by itself (autodown): the dead-man
    # when probecast is killed; SSH sessions count as activity, so probes keep it alive
    autodown_minutes: Annotated[int, msgspec.Meta(gt=0, le=24 * 60)] = 30
    max_spend: Annotated[float, msgspec.Meta(gt=0, le=1e6)] = 5.0  # USD, worst case
    # clouds whose SkyPilot catalogs price the candidates (default: the infra's, else these)
    clouds: list[str] = msgspec.field(default_factory=list)
    python: str = "python3"
    disk_size: Annotated[int, msgspec.Meta(gt=0, le=65536)] | None = None  # GB
    image_id: str | None = None


def check_skypilot(s: SkyPilotSettings) -> str | None:
    """None when the section is usable, else what is wrong (one sentence, naming the key)."""
    if not s.accelerators:
        return 'skypilot.accelerators must list the candidates, e.g. ["A10G:1", "L4:1"]'
    for a in s.accelerators:
        if not ACCELERATOR.match(a):
            return (f"skypilot.accelerators: {a!r} is not NAME or NAME:COUNT "
                    '(e.g. "A10G:1", "H100:8")')
    if len(set(s.accelerators)) != len(s.accelerators):
        return "skypilot.accelerators: each candidate once"
    if s.infra is not None and not INFRA.match(s.infra):
        return (f"skypilot.infra: {s.infra!r} is not CLOUD[/REGION[/ZONE]] "
                '(e.g. "aws/us-east-1")')
    return None
