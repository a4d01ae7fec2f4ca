"""Human formatting shared by the CLI and the app."""

from __future__ import annotations

import math


def fmt_duration(seconds: float | None) -> str:
    if seconds is None or isinstance(seconds, float) and (math.isnan(seconds) or math.isinf(seconds)):
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    if seconds < 3600:
        m, s = divmod(seconds, 60)
        return f"{int(m)}m{int(s):02d}s"
    h, rem = divmod(seconds, 3600)
    return f"{int(h)}h{int(rem // 60):02d}m"


def fmt_cost(usd: float | None) -> str:
    if usd is None or isinstance(usd, float) and math.isnan(usd):
        return "-"
    if usd < 0.01:
        return f"${usd:.4f}"
    if usd < 100:
        return f"${usd:.2f}"
    return f"${usd:,.0f}"


def fmt_ms(seconds: float | None) -> str:
    if seconds is None or isinstance(seconds, float) and math.isnan(seconds):
        return "-"
    return f"{seconds * 1000:.1f}ms" if seconds < 10 else f"{seconds:.1f}s"
