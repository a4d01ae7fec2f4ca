"""msgspec's validation errors, said for a person: what a config value must be, by key
(msgspec names only the bound that failed: "Expected `int` <= 65535, got `70000`"), and the value
that was given. config.py adds the file, the line and the key."""

from __future__ import annotations

import re

# What a value must be, said for a person, by key (msgspec names only the bound that failed).
_MUST = {
    "port": "must be 1-65535",
    "batch_sizes": "must be a list of positive integers",
    "horizons": "must be a list of positive integers",
    "target_ci": "must be a fraction between 0 and 1 (0.02 = 2 %)",
    "max_steps": "must be an integer of at least 2",
    "name": "may use letters, digits and _ . : @ - (1 to 64 of them)",
    "kind": 'must be "ssh" or "local"',
    "hosts": "must be an array of tables: write each host as a [[hosts]] section",
    "probe": "must be a table: [probe]",
    "aws": "must be a table: [aws]",
    "skypilot": "must be a table: [skypilot]",
    "prices": "must be a table: [prices] with INSTANCE = USD_PER_HOUR lines",
}
_TYPES = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false",
          "array": "a list", "object": "a table", "null": "absent"}


def explain(what: str, where: tuple[str | int, ...]) -> str:
    """msgspec's terse wording ("Expected `int` <= 65535, got `70000`"), said for a person."""
    got = re.search(r", got `?(.+?)`?$", what)
    got_text = f", got {got.group(1)}" if got else ""
    named = [p for p in where if isinstance(p, str)]
    key = named[-1] if named else ""
    if key in _MUST and not (key in ("prices",) and len(named) > 1):
        return _MUST[key] + got_text
    if len(named) >= 2 and named[0] == "prices":
        return "must be a price per hour in USD (a number >= 0)" + got_text
    m = re.match(r"Expected `(\w+)`(?: \| `?\w+`?)*\s*(.*?)(?:, got .*)?$", what)
    if m:
        kind = _TYPES.get(m.group(1), m.group(1))
        bound = m.group(2).replace("`", "").strip()
        return f"must be {kind}{' ' + bound if bound else ''}{got_text}"
    return what


def value_at(data: object, where: tuple[str | int, ...]) -> object:
    for part in where:
        if isinstance(part, int) and isinstance(data, list) and part < len(data):
            data = data[part]
        elif isinstance(part, str) and isinstance(data, dict):
            data = data.get(part)
        else:
            return None
    return data
