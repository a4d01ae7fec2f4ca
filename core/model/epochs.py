"""How many epochs a training needs: where validation accuracy (or loss) stabilises, and a
prediction of that epoch from the first few epochs of a run.

Two detection rules, both configurable:
- patience (as Keras EarlyStopping): the best epoch, once ``patience`` later epochs brought no
  improvement above ``min_delta``;
- plateau: the first epoch from which the metric stays within ``threshold`` over ``window`` epochs.

The prediction fits an exponential saturation m(e) = A - B*exp(-e/tau) to the first epochs
(a grid over tau with A, B by least squares - robust and dependency-free) and returns the epoch
from which the predicted gain over ``window`` epochs falls below ``threshold``, with an interval
from a residual bootstrap.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from .state import ProbeState

LOWER_IS_BETTER = ("loss",)


def is_lower_better(metric: str) -> bool:
    return any(metric.endswith(s) for s in LOWER_IS_BETTER)


def accuracy_cap(metric: str) -> float | None:
    return 1.0 if "acc" in metric else None


def metric_curve(state: ProbeState, metric: str) -> list[float]:
    """The metric per epoch, in epoch order (epochs without it are skipped)."""
    return [v for _, m in sorted(state.metrics, key=lambda x: x[0])
            if (v := m.get(metric)) is not None]


@dataclass(frozen=True)
class Stabilisation:
    rule: str
    epoch: int | None  # 1-based: epochs needed; None when the run never stabilised
    value: float | None  # the metric there
    final: float | None  # the metric at the last epoch seen
    epochs_seen: int
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def patience_rule(curve: list[float], patience: int = 3, min_delta: float = 0.005,
                  lower_is_better: bool = False) -> Stabilisation:
    sign = -1.0 if lower_is_better else 1.0
    best_i, best = None, -math.inf
    for i, v in enumerate(curve):
        if best_i is None or sign * v > best + min_delta:
            best_i, best = i, sign * v
        elif i - best_i >= patience:
            return Stabilisation("patience", best_i + 1, curve[best_i], curve[-1], len(curve))
    final = curve[-1] if curve else None
    if best_i is None:
        return Stabilisation("patience", None, None, final, 0, "no epochs with this metric")
    return Stabilisation("patience", None, curve[best_i], final, len(curve),
                         f"still improving: {len(curve) - 1 - best_i} epoch(s) since the best, "
                         f"patience {patience}")


def plateau_rule(curve: list[float], window: int = 3, threshold: float = 0.02) -> Stabilisation:
    final = curve[-1] if curve else None
    for i in range(0, len(curve) - window + 1):
        seg = curve[i:i + window]
        if max(seg) - min(seg) < threshold:
            return Stabilisation("plateau", i + 1, curve[i], final, len(curve))
    return Stabilisation("plateau", None, None, final, len(curve),
                         f"no {window} consecutive epochs within {threshold:g}")


@dataclass(frozen=True)
class Prediction:
    epoch: float | None
    low: float | None
    high: float | None
    asymptote: float | None  # the metric's predicted final value
    used_epochs: int
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _fit(xs: list[float], ys: list[float], cap: float | None = None) -> tuple[float, float, float, float]:
    """Least-squares A, B, tau of y = A - B*exp(-x/tau); returns (A, B, tau, sse).

    ``cap`` bounds the asymptote (accuracy cannot exceed 1)."""
    best = (0.0, 0.0, 1.0, math.inf)
    for k in range(80):
        tau = 0.2 * (1.08 ** k)  # 0.2 .. ~95 epochs
        zs = [math.exp(-x / tau) for x in xs]
        n = len(xs)
        mz, my = sum(zs) / n, sum(ys) / n
        szz = sum((z - mz) ** 2 for z in zs)
        if szz <= 1e-15:
            continue
        slope = sum((z - mz) * (y - my) for z, y in zip(zs, ys)) / szz  # y = A + slope*z
        a = my - slope * mz
        sse = sum((a + slope * z - y) ** 2 for z, y in zip(zs, ys))
        if cap is not None and a > cap:
            continue
        if sse < best[3]:
            best = (a, -slope, tau, sse)
    return best


def _stable_epoch(b: float, tau: float, window: int, threshold: float) -> float:
    """First (1-based) epoch from which the fitted curve moves less than threshold over window
    epochs - the plateau rule applied to the fitted curve."""
    gain = b * (1 - math.exp(-(window - 1) / tau))
    if gain <= threshold:
        return 1.0
    return 1.0 + tau * math.log(gain / threshold)


def predict_stabilisation(curve: list[float], use_epochs: int | None = None, window: int = 3,
                          threshold: float = 0.02, lower_is_better: bool = False,
                          resamples: int = 200, seed: int = 0, cap: float | None = None) -> Prediction:
    """Predict the plateau-rule epoch from the first ``use_epochs`` values of the curve."""
    ys = curve[:use_epochs] if use_epochs else list(curve)
    k = len(ys)
    if k < 4:
        return Prediction(None, None, None, None, k,
                          f"too little data: {k} epoch(s); a learning curve needs at least 4")
    sign = -1.0 if lower_is_better else 1.0
    ys = [sign * y for y in ys]
    xs = [float(i) for i in range(k)]  # epoch index 0 = first epoch
    a, b, tau, sse = _fit(xs, ys, cap)
    if math.isinf(sse):
        return Prediction(None, None, None, None, k, "no saturating curve fits these epochs")
    if b <= 0:
        return Prediction(None, None, None, sign * a, k, "the metric is not improving: no plateau to predict")
    point = _stable_epoch(b, tau, window, threshold)
    resid = [y - (a - b * math.exp(-x / tau)) for x, y in zip(xs, ys)]
    rng = random.Random(seed)
    boots = []
    for _ in range(resamples):
        yb = [a - b * math.exp(-x / tau) + rng.choice(resid) for x in xs]
        ab, bb, tb, sb = _fit(xs, yb, cap)
        if bb > 0 and not math.isinf(sb):
            boots.append(_stable_epoch(bb, tb, window, threshold))
    boots.sort()
    if len(boots) < resamples // 2:
        return Prediction(point, None, None, sign * a, k, "unstable fit: no interval")
    lo = boots[int(0.05 * len(boots))]
    hi = boots[int(0.95 * len(boots)) - 1]
    return Prediction(point, min(lo, point), max(hi, point), sign * a, k)


@dataclass(frozen=True)
class EpochsInfo:
    """N_ep for one batch size, where it came from, and the accuracy it reaches."""

    n_ep: float
    source: str
    accuracy: float | None = None
    low: float | None = None
    high: float | None = None

    def describe(self) -> str:
        iv = f" [{self.low:.1f}-{self.high:.1f}]" if self.low is not None and self.high is not None else ""
        acc = f", accuracy {self.accuracy:.3f}" if self.accuracy is not None else ""
        return f"{self.source}{iv}{acc}"


def epochs_from_runs(states: list[ProbeState], metric: str = "val_accuracy", window: int = 3,
                     threshold: float = 0.02) -> dict[tuple[str, int], EpochsInfo]:
    """Methodology 1 (Malta 2021, ch. 4): N_ep per batch size from full runs - where validation
    stabilised (plateau rule), else predicted from the curve - averaged over runs of the same
    workload and batch size."""
    by_batch: dict[tuple[str, int], list[tuple[float, str, float | None, float | None, float | None]]] = {}
    for st in states:
        if st.start is None:
            continue
        curve = metric_curve(st, metric)
        if len(curve) < 2:
            continue
        found = plateau_rule(curve, window, threshold)
        item: tuple[float, str, float | None, float | None, float | None]
        if found.epoch is not None:
            item = (float(found.epoch), "full run", found.value, None, None)
        else:
            pred = predict_stabilisation(curve, None, window, threshold, is_lower_better(metric),
                                         cap=accuracy_cap(metric))
            if pred.epoch is None:
                continue
            item = (pred.epoch, "predicted", pred.asymptote, pred.low, pred.high)
        by_batch.setdefault((st.start.workload, st.start.batch_size), []).append(item)
    out = {}
    for batch, items in by_batch.items():
        n = sum(i[0] for i in items) / len(items)
        sources = {i[1] for i in items}
        accs = [i[2] for i in items if i[2] is not None]
        lows = [i[3] for i in items if i[3] is not None]
        highs = [i[4] for i in items if i[4] is not None]
        source = (sources.pop() if len(sources) == 1 else "full run/predicted") + f" ({len(items)} run"\
            + ("s)" if len(items) > 1 else ")")
        out[batch] = EpochsInfo(
            n_ep=round(n, 2), source=source, accuracy=sum(accs) / len(accs) if accs else None,
            low=min(lows) if lows else None, high=max(highs) if highs else None)
    return out
