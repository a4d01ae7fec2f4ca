"""Every framework name the agent's adapters touch (core/agent/compat.py) exists in the frameworks
they support - the newest, installed here, and the oldest, where it installs cheaply: a release
that moves one fails here, not on a user's job (where the hook would log `hook-failed` and leave
the job untimed). The adapters themselves write no framework name (read from compat, each one).

The oldest releases are pure-Python wheels installed once (pip --target, ~10 s, kept in the user's
cache) and checked in a subprocess with them first on PYTHONPATH; offline (the package index out of
reach) that test is skipped, saying so. TensorFlow's oldest (a second
TensorFlow of hundreds of MB, which needs NumPy < 2) and torch's (PyPI has only CUDA builds of
several GB) are not installed: docs/ARCHITECTURE.md, "Framework adapters", says so."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import compat_checks
import pytest

from probecast.core.agent import compat
from probecast.core.agent.adapters import keras_callback

ADAPTERS = Path(compat.__file__).parent / "adapters"
FRAMEWORKS = tuple(compat.BY_FRAMEWORK)

# The oldest releases that install here cheaply, checked in one process (one torch import), with
# what they need that the test environment's newer releases do not satisfy (pinned: reproducible).
# Keras runs on the torch backend (its TensorFlow backend would need TensorFlow 2.16).
OLDEST = ("keras", "lightning", "pytorch_lightning", "transformers", "accelerate", "fastai",
          "keras_tuner", "optuna", "stable_baselines3", "ignite")
OLDEST_NEEDS = ("dm-tree==0.1.10",  # Keras 3.0
                "setuptools==80.10.2",  # Lightning 2.2: pkg_resources
                "tokenizers==0.19.1", "huggingface-hub==0.23.0",  # Transformers 4.40
                "fastcore==1.4.5", "fastprogress==1.0.3",  # fastai 2.7.0
                "gymnasium==0.28.1", "jax-jumpy==1.0.0",  # Stable-Baselines3 2.0.0
                "farama-notifications==0.0.4")


def test_the_symbols_are_well_formed() -> None:
    for framework, symbols in compat.BY_FRAMEWORK.items():
        for symbol in symbols:
            module, sep, qualname = symbol.partition(":")
            assert sep and qualname and module.split(".")[0] == framework, symbol
    assert set(compat.OLDEST) == set(FRAMEWORKS)


def _names_written(path: Path) -> list[str]:
    """Framework names an adapter writes itself: imports of a framework, attribute names given
    to getattr / hasattr / setattr as literals, module paths in strings."""
    found = []
    tree = ast.parse(path.read_text())
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in FRAMEWORKS]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] in FRAMEWORKS:
            found.append(node.module)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("getattr", "hasattr", "setattr", "delattr") \
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
                and not str(node.args[1].value).startswith("_probecast"):
            found.append(f"{node.func.id}(..., {node.args[1].value!r})")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings \
                and any(node.value.startswith((f"{f}.", f"{f}:")) for f in FRAMEWORKS):
            found.append(repr(node.value))
    return found


def test_the_adapters_take_every_framework_name_from_compat() -> None:
    adapters = sorted(ADAPTERS.glob("*.py"))
    assert len(adapters) >= 6
    assert {p.name: _names_written(p) for p in adapters} == {p.name: [] for p in adapters}
    # the check catches what it looks for
    sample = ADAPTERS.parent.parent.parent / "tests" / "e2e" / "torch_scripts"
    assert any(_names_written(p) for p in sample.glob("*.py"))


def test_the_keras_callback_overrides_the_hooks_compat_lists() -> None:
    ours = {name for name in vars(keras_callback._ProbeCallbackMethods) if name.startswith("on_")}
    assert ours == set(compat.KERAS_CALLBACK_HOOKS)


@pytest.mark.tensorflow
@pytest.mark.parametrize("framework", ["keras", "tensorflow", "keras_tuner", "jax"])
def test_keras_and_tensorflow_have_every_name_the_agent_uses(framework: str) -> None:
    pytest.importorskip(framework)
    assert compat_checks.CHECKS[framework]() == []


@pytest.mark.torch
@pytest.mark.parametrize("framework", ["torch", "lightning", "pytorch_lightning", "transformers",
                                       "accelerate", "fastai", "optuna",
                                       "stable_baselines3", "ignite"])
def test_the_pytorch_frameworks_have_every_name_the_agent_uses(framework: str) -> None:
    pytest.importorskip(framework)
    assert compat_checks.CHECKS[framework]() == []


def _oldest_installed() -> Path:
    """The oldest releases, installed once into the user's cache."""
    pins = [f"{compat.DISTRIBUTION.get(f, f.replace('_', '-'))}=={compat.OLDEST[f]}"
            for f in OLDEST] + list(OLDEST_NEEDS)
    digest = hashlib.sha256(" ".join(pins).encode()).hexdigest()[:12]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "probecast"
    target = base / f"compat-oldest-{digest}"
    if not target.exists():
        index = _package_index()
        why = _unreachable(index)
        if why:
            pytest.skip(f"offline: the package index {index} cannot be reached ({why}), so the "
                        "oldest releases cannot be installed")
        partial = target.with_name(target.name + f".{os.getpid()}.tmp")
        shutil.rmtree(partial, ignore_errors=True)
        r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                            "--disable-pip-version-check", "--target", str(partial), *pins],
                           capture_output=True, text=True, timeout=240)
        if r.returncode != 0 and any(m in r.stderr for m in OFFLINE):
            pytest.skip(f"offline: pip could not reach {index}: {r.stderr.strip()[-300:]}")
        assert r.returncode == 0, r.stderr[-2000:]
        os.replace(partial, target)  # atomic: a half-installed folder is never used
    return target


# What pip says when the index is out of reach (it says "no matching distribution" then too).
OFFLINE = ("NewConnectionError", "Failed to establish a new connection", "Name or service not known",
           "Temporary failure in name resolution", "Network is unreachable", "ProxyError",
           "ConnectTimeoutError", "Read timed out")


def _package_index() -> str:
    """The index pip would use: PIP_INDEX_URL, else pip's own configuration, else PyPI."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    r = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.index-url"],
                       capture_output=True, text=True, timeout=60)
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else "https://pypi.org/simple/"


def _unreachable(index: str) -> str:
    """Why ``index`` cannot be reached now ("" when it answers at all: any HTTP status will do,
    the question is the network)."""
    import urllib.error
    import urllib.request

    try:
        urllib.request.urlopen(urllib.request.Request(index, method="HEAD"), timeout=15).close()
    except urllib.error.HTTPError:
        return ""
    except (OSError, ValueError) as exc:
        return str(getattr(exc, "reason", exc))
    return ""


@pytest.mark.torch
@pytest.mark.timeout(300)
def test_the_oldest_supported_releases_have_every_name_the_agent_uses() -> None:
    pytest.importorskip("torch")  # they run on the torch the tests use
    path = [str(_oldest_installed()), str(Path(compat_checks.__file__).parent)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path + [os.environ.get("PYTHONPATH", "")]),
           "KERAS_BACKEND": "torch", "USE_TF": "0", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}
    r = subprocess.run([sys.executable, compat_checks.__file__, *OLDEST], env=env,
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got == {f: [compat.OLDEST[f], []] for f in OLDEST}, got


def test_a_missing_symbol_is_reported_not_raised() -> None:
    assert compat_checks.missing(("json:no_such_thing", "no_such_module_here:x")) != []
    assert compat.owner("json:decoder.JSONDecoder.decode")[1] == "decode"
    assert compat.attribute(compat.HF_STOP) == "should_training_stop"
    assert compat.attribute("torch:device") == "device"
    assert compat.module_of(compat.HF_TRAINER) == "transformers.trainer"
