"""`GET /metrics`: Prometheus text (prometheus-client), one registry per server (SPEC §12).

Rules:
1. Inputs by lane/type/status, replies by class, executions by status and the queue depth
   (inputs not yet done, files waiting in `inbox/`) are read from the ledger at each scrape,
   so they are right after a restart and cost nothing between scrapes.
2. HTTP requests are counted by route template (never the raw path: ids would explode the
   series) and status.
3. Drop→reply latency is observed for envelopes received over HTTP by this process: from the
   receipt to the commit of their first reply (the bell's ring), in seconds. The receipt is
   noted (`received`) before the file is written, so no reply can come first.
4. `slopd_long_polls_parked`: the long-polls asleep until a commit now (`waiting` rule 4).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from slopd.shell.lanes import Hub
from slopd.shell.ledger.receipts import Receipts

MEDIA_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class _Ledger(Collector):
    def __init__(self, receipts: Receipts, hub: Hub) -> None:
        self.receipts, self.hub = receipts, hub

    def collect(self) -> Iterator[Metric]:
        inputs = GaugeMetricFamily("slopd_inputs", "Inputs in the ledger", labels=["lane", "type", "status"])
        for lane, type, status, count in self.receipts.input_counts():
            inputs.add_metric([lane, type, status], count)
        yield inputs
        replies = GaugeMetricFamily("slopd_replies", "Replies written, by class", labels=["class"])
        for reply_class, count in self.receipts.reply_counts():
            replies.add_metric([reply_class], count)
        yield replies
        executions = GaugeMetricFamily("slopd_executions", "Executions, by ledger status", labels=["status"])
        for status, count in self.receipts.execution_counts():
            executions.add_metric([status], count)
        yield executions
        depth = GaugeMetricFamily("slopd_queue_depth", "Inputs waiting", labels=["where"])
        depth.add_metric(["ledger"], self.receipts.unfinished_inputs())
        depth.add_metric(["inbox"], sum(1 for _ in self.hub.entries("inbox")))
        yield depth


class Metrics:
    def __init__(self, receipts: Receipts, hub: Hub, parked: Callable[[], int] = lambda: 0) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(_Ledger(receipts, hub))
        self.requests = Counter(
            "slopd_http_requests", "HTTP requests", ["route", "status"], registry=self.registry
        )
        self.latency = Histogram(
            "slopd_drop_to_reply_seconds",
            "From an HTTP receipt to the commit of the envelope's first reply",
            buckets=_BUCKETS,
            registry=self.registry,
        )
        parking = Gauge("slopd_long_polls_parked", "Long-polls asleep until a commit", registry=self.registry)
        parking.set_function(lambda: float(parked()))  # rule 4
        self._receipted: dict[str, float] = {}
        self._last_seq = receipts.bounds()[1]

    def received(self, key: str) -> None:
        if len(self._receipted) < 100_000:
            self._receipted[key] = time.perf_counter()

    def replies_committed(self, receipts: Receipts) -> None:
        """Rule 3: after a ring, in the ringing (daemon's) thread, over that thread's own connection."""
        if not self._receipted:
            return
        now = time.perf_counter()
        for key, seq in receipts.replies_since(self._last_seq):
            self._last_seq = max(self._last_seq, seq)
            started = self._receipted.pop(key, None)
            if started is not None:
                self.latency.observe(now - started)

    def render(self) -> bytes:
        return generate_latest(self.registry)
