"""Ranking.to_frame: the ranking as a pandas DataFrame, for a notebook or a script - the same
rows, in the same order, with the same values as the JSON contract (RankedRow.as_json)."""

from __future__ import annotations

import math

from conftest import ROOT

from probecast.core.model.logstore import load_records
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions, build_ranking


def test_the_frame_holds_the_ranked_rows_as_the_json_contract_does() -> None:
    records = load_records([str(ROOT / "sample_logs" / "cpu-keras" / "probes")], warn=print)
    ranking = build_ranking([r.candidate() for r in records], Pricing(Catalog.embedded()),
                            RankOptions(epochs=10))
    assert len(ranking) >= 2  # a ranking, not one row
    frame = ranking.to_frame()
    assert len(frame) == len(ranking)
    assert list(frame.columns) == list(ranking.rows[0].as_json())
    for (_, got), row in zip(frame.iterrows(), ranking.rows, strict=True):
        want = row.as_json()
        assert (got["instance"], got["batch_size"]) == (want["instance"], want["batch_size"])
        assert math.isclose(got["runtime_s"], want["runtime_s"])
