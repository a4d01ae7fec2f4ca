"""The one protocol every framework adapter implements, and what a trainer adapter adds.

An adapter times one way a framework trains, with no change to the program: it is made with the
process's ProbeSession (and what it needs of the hook's config), and ``install(module)`` patches
the framework once the program has imported one of its ``modules``. There is no ``uninstall``:
the patches live as long as the probed process, which is all the hook ever needed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .. import compat

if TYPE_CHECKING:
    from ..length import Length

T = TypeVar("T")


class Adapter(Protocol):
    """One way a framework trains, timed with no code change."""

    name: str  # what the log calls it when it cannot hook ("Keras fit", "Lightning")
    modules: tuple[str, ...]  # from compat: importing one of these installs the adapter

    def install(self, module: str) -> None:
        """Patch what ``module`` (one of ``modules``, just imported) defines; a second call for
        the same module does nothing. Raises (ImportError, AttributeError) when the framework
        moved a name it patches: the hook logs `hook-failed` and the program runs on."""


class TrainerAdapter(Adapter, Protocol):
    """A framework whose Trainer runs the loop (Lightning, the Hugging Face Trainer). It
    remembers the trainers the program makes (in a shared ``Trainers``) and reads each for the
    PyTorch loops adapter, which times the optimizer steps they take."""

    label: str  # in `start`'s framework once its trainer module is loaded ("Lightning")

    def in_use(self) -> bool:
        """Its trainer module is loaded (importing a framework's top package, which other
        libraries do to check for it, is not using it)."""

    def accumulation(self, trainer: Any) -> int | None:
        """Batches per optimizer step, as the trainer says (its loops fetch batches ahead)."""

    def batches(self, trainer: Any) -> int | None:
        """Batches per epoch, when the trainer knows them."""

    def length(self, trainer: Any) -> Length | None:
        """The length the trainer was given, and its evaluation interval; None without one."""

    def planned_epochs(self, trainer: Any) -> int | None:
        """N_ep as the trainer was given it."""

    def stop(self, trainer: Any) -> None:
        """End the trainer's fit through its own exit (its stop flag)."""

    def leaving(self, trainer: Any) -> bool:
        """Told to stop, it leaves its loop by itself, with no loader to run dry, and has not
        left yet: the steps it takes on the way out are not training (Stable-Baselines3's)."""


class Trainers:
    """The trainers this process made, in the order it made them, each with its adapter: what
    the PyTorch loops adapter asks (the first trainer with an answer gives it)."""

    def __init__(self, adapters: tuple[TrainerAdapter, ...] = ()) -> None:
        self.adapters = adapters
        self.made: list[tuple[TrainerAdapter, Any]] = []

    def add(self, adapter: TrainerAdapter, trainer: Any) -> None:
        self.made.append((adapter, trainer))

    def _first(self, read: Callable[[TrainerAdapter, Any], T | None]) -> T | None:
        for adapter, trainer in self.made:
            found = read(adapter, trainer)
            if found is not None:
                return found
        return None

    def accumulation(self) -> int | None:
        return self._first(lambda adapter, trainer: adapter.accumulation(trainer))

    def batches(self) -> int | None:
        return self._first(lambda adapter, trainer: adapter.batches(trainer))

    def length(self) -> Length | None:
        return self._first(lambda adapter, trainer: adapter.length(trainer))

    def planned_epochs(self) -> int | None:
        return self._first(lambda adapter, trainer: adapter.planned_epochs(trainer))

    def stop(self) -> None:
        for adapter, trainer in self.made:
            adapter.stop(trainer)

    def leaving(self) -> bool:
        return any(adapter.leaving(trainer) for adapter, trainer in self.made)

    def labels(self) -> list[str]:
        """The training frameworks in use, by their trainer modules."""
        return [adapter.label for adapter in self.adapters if adapter.in_use()]


def patch_constructor(symbol: str, made: Callable[[Any], None]) -> None:
    """``made(instance)`` after every construction of the class ``symbol`` names (once per
    class: a module imported twice, under two names, is patched once)."""
    cls, init_name = compat.owner(f"{symbol}.{compat.TRAINER_INIT}")
    original = getattr(cls, init_name)
    if getattr(original, "_probecast", False):
        return

    @functools.wraps(original)  # its signature stays readable (LightningCLI's parser reads it)
    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        made(self)

    init._probecast = True  # type: ignore[attr-defined]
    setattr(cls, init_name, init)
