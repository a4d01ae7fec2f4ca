"""Reading a value in a running frame without running the program: names, plain attributes (a
``__slots__`` member, a named tuple's field), arithmetic, ``a if test else b`` on a test of plain
values, ``len``/``range``/``min``/``max``, a tensor's ``size()``/``shape`` - nothing that
calls the program's code (no property, no method but a tensor's size, a scikit-learn
cross-validator's own ``get_n_splits()``: ``folds``, a config's ``get(key, default)``, and the
``__len__`` of an iterable that declares its length: ``sized``).
A config is a dict, or a configuration library's mapping read through that library's own
accessors (OmegaConf's ``DictConfig``/``ListConfig``, what Hydra hands a program; ml_collections'
``ConfigDict``), absl's parsed ``FLAGS``, or the environment: ``cfg.train.epochs``,
``cfg["epochs"]``, ``cfg.get("epochs", 10)``, ``FLAGS.num_epochs``, ``int(os.getenv("EPOCHS",
"5"))``. loops.py reads the bounds of the loops around a training step with it. Stdlib only."""

from __future__ import annotations

import ast
import inspect
import math
import os
from collections.abc import Callable
from types import FrameType, MemberDescriptorType
from typing import Any

_SAFE_CALLS: dict[str, Callable[..., Any]] = {
    "range": range, "len": len, "int": int, "min": min, "max": max, "round": round,
    "float": float, "abs": abs, "ceil": math.ceil, "floor": math.floor}


# configuration libraries whose mappings are read through their own accessors (library code, no
# property of the program's): the module their types live in starts with one of these
_CONFIG_LIBRARIES = ("omegaconf.", "ml_collections.")


class Unknown(Exception):
    """The evaluator met something it will not evaluate."""


def _config(obj: Any) -> bool:
    """A dict, ``os.environ``, or a configuration library's mapping (keys read by ``in`` and
    ``[]``)."""
    return isinstance(obj, dict) or obj is os.environ or (
        type(obj).__module__.startswith(_CONFIG_LIBRARIES) and hasattr(obj, "__contains__"))


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _absl_flags(obj: Any) -> bool:
    """absl's ``FLAGS`` (TensorFlow's and JAX's research scripts: ``FLAGS.num_epochs``)."""
    return type(obj).__name__ == "FlagValues" and type(obj).__module__.startswith("absl.flags")


def _key(obj: Any, key: Any) -> Any:
    """``obj[key]`` of a config that has the key (a list config: an index within it)."""
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise Unknown("key")
    if isinstance(key, int) and not isinstance(obj, dict):
        if 0 <= key < len(obj) or -len(obj) <= key < 0:
            return obj[key]
        raise Unknown("index")
    if key in obj:
        return obj[key]
    raise Unknown(str(key))


def sized(value: Any, asked: bool = False) -> int:
    """How many items ``value`` holds or yields. ``asked``: the program's own expression calls
    ``len()`` on it (``range(0, len(train_set), bs)``): any ``__len__`` then, as the program
    itself called it."""
    if isinstance(value, (range, list, tuple, dict, str, set, frozenset)):
        return len(value)
    if _torch_sampler(value):  # a BatchSampler over the indexes (Lightning's PPO example)
        return len(value)
    if _is_a(type(value), "DistributedDataset", "tensorflow.python.distribute"):
        card: Any = getattr(value, "cardinality", None)  # the wrapped one's batches (numpy int;
        if hasattr(card, "__index__") and int(card) >= 0:  # -1, -2: unknown, infinite)
            return int(card)
    shape: Any = getattr(value, "shape", None)  # a tensor or array: its first dimension
    if isinstance(shape, tuple) or type(shape).__name__ == "Size":
        if len(shape) >= 1:
            return int(shape[0])
    if _declares_length(value, asked):  # a batch iterator of the program's own, a dataset
        try:
            n = len(value)
        except Exception:  # noqa: BLE001 - a length it cannot give (an endless stream)
            raise Unknown(type(value).__name__) from None
        if isinstance(n, int) and not isinstance(n, bool) and n >= 0:
            return n
    raise Unknown(type(value).__name__)


def _declares_length(value: Any, asked: bool = False) -> bool:
    """An iterable that says how long it is: a class with both ``__iter__`` and ``__len__``
    (``class Loader: def __len__(self): return len(self.x) // self.bs``, torchtext's and other
    libraries' iterators) - the length ``len(loader)`` in the program itself would give, the
    one method of its own the reader calls (``asked``: any ``__len__`` the program's expression
    calls itself). Not an iterator (a generator: no length), a sampler subclass's own
    ``__len__``, a DataLoader the program does not ask (torch_data counts its passes, and says
    where a pass is no epoch: minGPT's endless sampler) nor a tf.data dataset (keras_loops reads
    its cardinality)."""
    kind = type(value)
    if asked and _is_a(kind, "DataLoader", "torch.utils.data"):
        return True  # `for i in range(len(loader))`: the count the program asked for
    if _is_a(kind, "Sampler", "torch.utils.data") or _is_a(kind, "DataLoader", "torch.utils.data") \
            or any(k.__module__.startswith("tensorflow.") for k in kind.__mro__):
        return False  # torch_data counts a DataLoader's passes, keras_loops a dataset's
    return callable(getattr(kind, "__len__", None)) and (
        asked or callable(getattr(kind, "__iter__", None)))


def _torch_sampler(value: Any) -> bool:
    """A PyTorch sampler whose length PyTorch's own code gives (BatchSampler, RandomSampler,
    SequentialSampler ...: the DataLoader asks them the same), not a subclass's own __len__."""
    if not _is_a(type(value), "Sampler", "torch.utils.data"):
        return False
    owner = next((k for k in type(value).__mro__ if "__len__" in vars(k)), None)
    return owner is not None and owner.__module__.startswith("torch.utils.data")


def _is_a(kind: type, name: str, module: str) -> bool:
    """``kind`` is, or derives from, the class ``name`` of the library ``module``."""
    return any(k.__name__ == name and k.__module__.startswith(module) for k in kind.__mro__)


def optimizer(value: Any) -> bool:
    """A PyTorch optimizer: the step's own loop over several of them, each stepped in turn
    (MorvanZhou's tutorials train two to four nets side by side: ``for net, opt in zip(nets,
    opts)``), is one probe step a pass - the first optimizer's, the lead's (adapters/lead.py)."""
    return value is not None and any(k.__name__ == "Optimizer" and k.__module__.startswith(
        "torch.optim") for k in type(value).__mro__)


class Evaluator:
    """Reads values in a frame, calling nothing but a few pure builtins and a tensor's size."""

    def __init__(self, frame: FrameType) -> None:
        self.frame = frame

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            for scope in (self.frame.f_locals, self.frame.f_globals):
                if node.id in scope:
                    return scope[node.id]
            if node.id in _SAFE_CALLS:
                return _SAFE_CALLS[node.id]
            raise Unknown(node.id)
        if isinstance(node, ast.Attribute):
            obj = self.value(node.value)
            if node.attr == "shape":
                return tuple(getattr(obj, "shape"))
            return _plain_attribute(obj, node.attr)
        if isinstance(node, ast.BinOp):
            return _binop(node.op, self.value(node.left), self.value(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.value(node.operand)
        if isinstance(node, ast.Subscript):
            obj = self.value(node.value)
            index = self.value(node.slice)
            if isinstance(obj, (tuple, list)) and isinstance(index, int):
                return obj[index]
            if _config(obj):
                return _key(obj, index)
            raise Unknown("subscript")
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.IfExp):  # range(args.epochs if not args.dry_run else 1)
            return self.value(node.body if self.truth(node.test) else node.orelse)
        raise Unknown(type(node).__name__)

    def truth(self, node: ast.expr) -> bool:
        """A test on plain values (None, numbers, text): ``not``, ``and``/``or``, one
        comparison; an object's own truth (its ``__bool__``, ``__len__``) is never asked."""
        if isinstance(node, ast.BoolOp):
            parts = (self.truth(v) for v in node.values)
            return all(parts) if isinstance(node.op, ast.And) else any(parts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self.truth(node.operand)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            a, b = self.value(node.left), self.value(node.comparators[0])
            compare = _COMPARE.get(type(node.ops[0]))
            if compare is None or not (_plain(a) and _plain(b)):
                raise Unknown("comparison")
            try:
                return compare(a, b)
            except TypeError:  # 3 < None
                raise Unknown("comparison") from None
        value = self.value(node)
        if not _plain(value):
            raise Unknown("truth")
        return bool(value)

    def call(self, node: ast.Call) -> Any:
        if node.keywords:
            raise Unknown("keywords")
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("size", "__len__"):
            obj = self.value(f.value)
            shape = tuple(getattr(obj, "shape"))
            if f.attr == "__len__":
                return shape[0]
            args = [self.value(a) for a in node.args]
            return shape[args[0]] if args else shape
        if isinstance(f, ast.Attribute) and f.attr == "get" and 1 <= len(node.args) <= 2:
            return self._get(f.value, node.args)
        if isinstance(f, ast.Attribute) and f.attr == "getenv" and 1 <= len(node.args) <= 2 \
                and self.value(f.value) is os:  # os.getenv(key, default): the environment's
            return self._get(ast.Attribute(value=f.value, attr="environ"), node.args)
        if isinstance(f, ast.Attribute) and f.attr in ("ceil", "floor") and \
                isinstance(f.value, ast.Name) and f.value.id == "math":
            fn = _SAFE_CALLS[f.attr]
        elif isinstance(f, ast.Name) and f.id in _SAFE_CALLS:
            fn = _SAFE_CALLS[f.id]
        else:
            raise Unknown("call")
        args = [self.value(a) for a in node.args]
        if fn is len:
            return sized(args[0], asked=True) if len(args) == 1 else len(*args)
        if fn in (int, float) and len(args) == 1 and isinstance(args[0], str):
            try:  # a number read from a config's or the environment's text: int("40")
                return fn(args[0])
            except ValueError:
                raise Unknown("not a number") from None
        if not all(isinstance(a, (int, float, range)) and not isinstance(a, bool) for a in args):
            raise Unknown("arguments")
        if fn is range and any(isinstance(a, float) for a in args):
            raise Unknown("range of floats")
        return fn(*args)

    def _get(self, owner: ast.expr, args: list[ast.expr]) -> Any:
        """``cfg.get(key)`` / ``cfg.get(key, default)`` of a config: its value, else the default
        (a value read as any other); anything else's ``get`` is not called."""
        obj = self.value(owner)
        if not _config(obj):
            raise Unknown("get")
        try:
            return _key(obj, self.value(args[0]))
        except Unknown:
            if len(args) == 2:
                return self.value(args[1])
            raise


def _plain_attribute(obj: Any, name: str) -> Any:
    """An attribute stored on the object (or a key of a config: a dict, OmegaConf's): never a
    property or anything else that runs the program's code."""
    if _config(obj):
        return _key(obj, name)
    if _absl_flags(obj):  # FLAGS.epochs: absl's parsed flag's value
        if obj.is_parsed() and name in obj:
            return obj[name].value
        raise Unknown(name)
    try:
        static = inspect.getattr_static(obj, name)
    except AttributeError:
        raise Unknown(name) from None
    if hasattr(type(static), "__get__") and not isinstance(static, (int, float, str)):
        if not inspect.ismodule(obj) and not _stored_field(static):
            raise Unknown(f"{name} runs code")
    return getattr(obj, name)


def _stored_field(descriptor: Any) -> bool:
    """A descriptor that only reads what the instance stores: a ``__slots__`` member (a
    ``@dataclass(slots=True)`` config) or a named tuple's field (``typing.NamedTuple``)."""
    kind = type(descriptor)
    return isinstance(descriptor, MemberDescriptorType) or (
        kind.__name__ == "_tuplegetter" and kind.__module__ in ("collections", "_collections"))


_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
    ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b}


def _binop(op: ast.operator, a: Any, b: Any) -> Any:
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or \
            not isinstance(b, (int, float)):
        raise Unknown("not numbers")
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b
    if isinstance(op, ast.FloorDiv) and b:
        return a // b
    if isinstance(op, ast.Div) and b:
        return a / b
    if isinstance(op, ast.Mod) and b:
        return a % b
    raise Unknown("operator")


def folds(node: ast.expr, ev: Evaluator) -> int | None:
    """``cv.split(...)`` of a scikit-learn cross-validator (KFold, StratifiedKFold, ...): the
    folds a k-fold loop runs, as the library's own ``get_n_splits()`` counts them (pure, and
    scikit-learn's, not the program's code); None for anything else."""
    f = node.func if isinstance(node, ast.Call) else None
    if not (isinstance(f, ast.Attribute) and f.attr == "split"):
        return None
    try:
        cv = ev.value(f.value)
        if not type(cv).__module__.startswith("sklearn.") or not hasattr(cv, "get_n_splits"):
            return None
        n = cv.get_n_splits()  # LeaveOneOut and the like need the data: no count
    except Exception:  # noqa: BLE001 - Unknown, or a splitter that cannot count without data
        return None
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def call_name(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def maybe_int(expr: ast.expr, ev: Evaluator) -> int | None:
    try:
        value = ev.value(expr)
    except Unknown:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return int(value) if abs(value) < 1e15 else None


DATA_FILE_BYTES = 64 * 1024  # a file the loop trains on, not one of settings (a config's few KB)


def file_weight(items: Any, current: Any) -> float | None:
    """A loop over data files, each read into a loader of its own (LLMs-from-scratch's
    pretraining: a pass over each of its books' files): its passes weigh as the files' sizes
    against the one being trained on - the last file of a split is most often smaller. None
    unless every item is an existing file, ``current`` one of them, of data's size."""
    if not isinstance(items, (list, tuple)) or len(items) < 2 or current not in items:
        return None
    if not all(isinstance(i, (str, os.PathLike)) and os.path.isfile(i) for i in items):
        return None
    sizes = [os.path.getsize(i) for i in items]
    own = sizes[items.index(current)]
    return sum(sizes) / own if own >= DATA_FILE_BYTES else None
