"""Every framework symbol the agent patches or reads (core/agent/compat.py) exists in the
installed frameworks: a release that moves one fails here, not on a user's job (where the hook
would log `hook-failed` and leave the job untimed). README, "Probing your own training", states
the versions tested."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from probecast.core.agent import compat


def _missing(symbols: tuple[str, ...]) -> list[str]:
    gone = []
    for symbol in symbols:
        try:
            compat.resolve(symbol)
        except (ImportError, AttributeError) as exc:
            gone.append(f"{symbol} ({type(exc).__name__}: {exc})")
    return gone


def test_the_symbols_are_well_formed_and_the_adapters_patch_from_the_list() -> None:
    for framework, symbols in compat.BY_FRAMEWORK.items():
        for symbol in symbols:
            module, sep, qualname = symbol.partition(":")
            assert sep and qualname and module.split(".")[0] == framework, symbol
    # the adapters name the patched targets through compat, not by hand
    agent = Path(compat.__file__).parent
    for adapter, names in (("keras_probe.py", ("KERAS_FIT",)),
                           ("keras_loops.py", ("KERAS_OPTIMIZER_APPLY", "TF_DATASET_ITER",
                                               "TF_ITERATOR_NEXT")),
                           ("torch_probe.py", ("TORCH_STEP_HOOK", "TORCH_LOADER_ITER",
                                               "TORCH_LOADER_NEXT", "TORCH_OPTIMIZER_INIT",
                                               "TORCH_BACKWARD")),
                           ("torch_trainers.py", ("TRAINERS",))):
        text = (agent / adapter).read_text()
        for name in names:
            assert name in text, (adapter, name)


@pytest.mark.tensorflow
@pytest.mark.parametrize("framework", ["keras", "tensorflow"])
def test_keras_and_tensorflow_have_every_symbol_the_agent_uses(framework: str) -> None:
    pytest.importorskip(framework)
    assert _missing(compat.BY_FRAMEWORK[framework]) == []


@pytest.mark.torch
def test_torch_has_every_symbol_the_agent_uses() -> None:
    pytest.importorskip("torch")
    assert _missing(compat.TORCH) == []


@pytest.mark.torch
@pytest.mark.parametrize("package", ["lightning", "pytorch_lightning"])
def test_lightning_has_every_symbol_the_agent_uses(package: str) -> None:
    pytest.importorskip(package)
    symbols = compat.BY_FRAMEWORK[package]
    assert _missing(symbols) == []
    trainer_class = compat.owner(symbols[0])[0]  # Trainer: what it sets on itself
    trainer = trainer_class(logger=False, enable_checkpointing=False, enable_progress_bar=False,
                            enable_model_summary=False, accelerator="cpu", max_epochs=2)
    for name in compat.LIGHTNING_INSTANCE:
        assert hasattr(trainer, name), name


@pytest.mark.torch
def test_transformers_and_accelerate_have_every_symbol_the_agent_uses(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    assert _missing(compat.TRANSFORMERS + compat.ACCELERATE) == []
    torch = importlib.import_module("torch")
    from transformers import Trainer, TrainingArguments

    trainer = Trainer(model=torch.nn.Linear(2, 1),
                      args=TrainingArguments(output_dir=str(tmp_path), report_to=[],
                                             use_cpu=True))
    for name in compat.HF_TRAINER_INSTANCE:
        assert hasattr(trainer, name), name
    assert hasattr(trainer.control, "should_training_stop")


def test_a_missing_symbol_is_reported_not_raised() -> None:
    assert _missing(("json:no_such_thing", "no_such_module_here:x")) != []
    assert compat.owner("json:decoder.JSONDecoder.decode")[1] == "decode"
