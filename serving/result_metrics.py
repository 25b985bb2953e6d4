"""The app's store of results (runtime/result_cache.RESULTS) in `/_stcore/metrics`, beside Streamlit's own caches.

Streamlit counts the lookups of its caches (`cache_lookups_total{cache_type, cache, result="hit"|"miss"}`: a model
loaded, a lesson file read). The analyses, explanations and figures that a student's input chooses live in the app's
one store instead, so asgi.py registers this provider for the same count of that store:
`result_lookups_total{result="hit"|"miss"}` (a miss is one computation) and what it holds (`result_store_entries`,
`result_store_bytes`). The operator reads from them how warm a replica is (answered only to the operator, like the
rest of the endpoint: serving/operator_only.py); tests/test_warmup.py reads that a click after the warm-up computes
nothing.
"""
from __future__ import annotations

from collections.abc import Sequence

from serving.internals import CounterStat, GaugeStat, register_stats_provider


LOOKUPS = "result_lookups"
ENTRIES = "result_store_entries"
BYTES = "result_store_bytes"


class ResultStoreStats:
    """A Streamlit StatsProvider over runtime.result_cache.RESULTS (imported when first asked: the server starts without
    numpy and the app's modules; the scripts' runs import the same module, so both read one store)."""

    @property
    def stats_families(self) -> Sequence[str]:
        return (LOOKUPS, ENTRIES, BYTES)

    def get_stats(self, family_names: Sequence[str] | None = None) -> dict[str, list]:
        from runtime.result_cache import RESULTS

        found = {
            LOOKUPS: [CounterStat(LOOKUPS, count, {"result": result},
                                  help="Lookups of the app's result store; a miss is one computation.")
                      for result, count in (("hit", RESULTS.hits), ("miss", RESULTS.misses))]
            + [CounterStat(LOOKUPS, RESULTS.kept_reads, {"result": "kept"},
                           help="Results read from the folder another process kept them in (runtime/kept_results.py).")],
            ENTRIES: [GaugeStat(ENTRIES, len(RESULTS), help="Results the app's store holds.")],
            BYTES: [GaugeStat(BYTES, RESULTS.total_bytes, unit="bytes", help="What the app's store holds, weighed.")],
        }
        return {family: stats for family, stats in found.items() if family_names is None or family in family_names}


def register_result_metrics() -> None:
    """Add the store's figures to this server's /_stcore/metrics (asgi.py's lifespan: the runtime exists, no request
    has come yet)."""
    register_stats_provider(ResultStoreStats())
