"""Run a callback once a module has been imported by the program, whenever that happens."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import time
from collections.abc import Callable
from typing import Any

OnError = Callable[[str, Exception], None]
SPENT = [0.0]  # seconds the callbacks took (the hook's own, inside the program's imports)


def when_imported(name: str, callback: Callable[[], None], on_error: OnError | None = None) -> None:
    """``callback()`` right after the module ``name`` executes (now, if it already has).

    Frameworks probe for each other with find_spec() before importing, so the finder stays in
    place until the module really executes, and wraps each spec it hands out.

    The callback runs inside the program's own ``import``: if it fails (a framework renamed
    something the hook patches), the import must still succeed and the program run on, untimed.
    The failure goes to ``on_error(name, exc)`` - the hook logs it - never to the program."""

    def guarded() -> None:
        began = time.monotonic()
        try:
            callback()
        except Exception as exc:  # noqa: BLE001 - never break the program's import
            if on_error is not None:
                try:
                    on_error(name, exc)
                except Exception:  # noqa: BLE001 - nor by reporting it
                    pass
        SPENT[0] += time.monotonic() - began

    if name in sys.modules:
        guarded()
        return

    class _Finder(importlib.abc.MetaPathFinder):
        busy = False

        def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
            if fullname != name or self.busy:
                return None
            self.busy = True
            try:
                spec = importlib.util.find_spec(fullname)
            finally:
                self.busy = False
            if spec is None or spec.loader is None:
                return spec
            loader = spec.loader
            exec_module = loader.exec_module
            finder = self

            def exec_and_call(module: Any) -> None:
                exec_module(module)
                if finder in sys.meta_path:
                    sys.meta_path.remove(finder)
                guarded()

            loader.exec_module = exec_and_call  # type: ignore[method-assign]
            return spec

    sys.meta_path.insert(0, _Finder())
