"""`GET /metrics` black-box (SPEC §12, issue 15 point 6): Prometheus text, no token needed.

Read with prometheus-client's own parser, after envelopes really went through the daemon.
"""

from __future__ import annotations

import pytest

from tests.conftest import HubDir
from tests.polling import until_async
from tests.transport.http_rig import Live, Samples, bearer, in_process, markdown, samples, value, with_tokens

pytestmark = pytest.mark.anyio


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


async def scrape(live: Live) -> Samples:
    """Every sample of /metrics by sample name: [(labels, value)]."""
    answer = await live.client.get("/metrics")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return samples(answer.text)


async def test_metrics_count_inputs_replies_queue_and_http_requests_by_route_template(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    alice = tokens["alice"]
    query, note = "20261201t120000z-metricsq", "20261201t120000z-metricsn"
    async with in_process(hub) as live:
        assert (await live.post(alice, markdown(query))).status_code == 202
        assert (await live.post(alice, markdown(note, type="note"))).status_code == 202
        assert (await live.post(alice, markdown(query))).status_code == 200  # a replay is no new input
        for ident in (query, note):
            waited = await live.client.get(f"/v1/envelopes/{ident}/replies?wait=20", headers=bearer(alice))
            assert waited.json()["terminal"] is True
        (result,) = (await live.client.get(f"/v1/envelopes/{query}/replies", headers=bearer(alice))).json()[
            "replies"
        ]
        assert (await live.client.get(f"/v1/envelopes/{query}", headers=bearer(alice))).status_code == 200
        assert (
            await live.client.get("/v1/envelopes/20261201t120000z-nothere", headers=bearer(alice))
        ).status_code == 404
        assert (await live.client.get(f"/v1/nowhere/{query}")).status_code == 404
        assert (await live.client.get("/v1/replies")).status_code == 401
        assert (
            await live.client.post(f"/v1/replies/{result['id']}/ack", headers=bearer(alice))
        ).status_code == 204

        async def settled() -> Samples | None:
            samples = await scrape(live)
            latency = value(samples, "slopd_drop_to_reply_seconds_count")
            done = [
                value(samples, "slopd_inputs", lane="inbox", type=kind, status="done")
                for kind in ("query", "note")
            ]
            # The files leave inbox/ just after the commit that marks them done (SPEC §7's order).
            waiting = value(samples, "slopd_queue_depth", where="inbox")
            return samples if latency == 2 and done == [1, 1] and waiting == 0 else None

        samples: Samples = await until_async(settled)

    assert value(samples, "slopd_inputs", lane="inbox", type="query", status="done") == 1
    assert value(samples, "slopd_inputs", lane="inbox", type="note", status="done") == 1
    assert value(samples, "slopd_replies", **{"class": result["class"]}) is not None
    assert sum(number for _labels, number in samples["slopd_replies"]) == 2  # one result, one ack
    assert value(samples, "slopd_replies", **{"class": "silent"}) == 1  # the note's ack
    assert value(samples, "slopd_queue_depth", where="ledger") == 0
    assert value(samples, "slopd_queue_depth", where="inbox") == 0

    requests = "slopd_http_requests_total"
    assert value(samples, requests, route="/v1/envelopes", status="202") == 2
    assert value(samples, requests, route="/v1/envelopes", status="200") == 1
    assert value(samples, requests, route="/v1/envelopes/{id}/replies", status="200") == 3
    assert value(samples, requests, route="/v1/envelopes/{id}", status="200") == 1
    assert value(samples, requests, route="/v1/envelopes/{id}", status="404") == 1
    assert value(samples, requests, route="/v1/replies", status="401") == 1
    assert value(samples, requests, route="/v1/replies/{id}/ack", status="204") == 1
    routes = {labels["route"] for labels, _number in samples[requests]}
    assert routes <= {
        "/v1/envelopes",
        "/v1/envelopes/{id}",
        "/v1/envelopes/{id}/replies",
        "/v1/replies",
        "/v1/replies/{id}/ack",
        "/v1/health",
        "/metrics",
        "/openapi.json",
        "unknown",
    }, routes
    assert value(samples, requests, route="unknown", status="404") == 1
    for labels, _number in (pair for pairs in samples.values() for pair in pairs):
        for label in labels.values():
            assert "20261201t120000z" not in label, labels  # never a raw id

    latency_count = value(samples, "slopd_drop_to_reply_seconds_count")
    assert latency_count == 2
    total = value(samples, "slopd_drop_to_reply_seconds_sum")
    assert total is not None
    assert 0 < total < 60
    buckets = [
        (float(labels["le"]), number) for labels, number in samples["slopd_drop_to_reply_seconds_bucket"]
    ]
    assert [number for _le, number in sorted(buckets)] == sorted(number for _le, number in buckets)
    assert max(buckets) == (float("inf"), 2)


async def test_queue_depth_counts_what_waits_in_inbox_and_metrics_need_no_token(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    async with in_process(hub, daemon=False) as live:
        for number in range(2):
            ident = f"20261201t120000z-queued{number}"
            assert (await live.post(tokens["alice"], markdown(ident))).status_code == 202
        hub.drop("20261201t120000z-queued-file.md", markdown("20261201t120000z-queued-file"))
        samples = await scrape(live)
        assert value(samples, "slopd_queue_depth", where="inbox") == 3
        assert value(samples, "slopd_drop_to_reply_seconds_count") == 0
        assert samples.get("slopd_inputs", []) == []
        with_bad_token = await live.client.get("/metrics", headers={"Authorization": "Bearer nope"})
        assert with_bad_token.status_code == 200
