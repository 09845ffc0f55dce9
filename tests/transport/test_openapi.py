"""The HTTP server's OpenAPI document is true of its app (SPEC §11's keeper API, §12).

- Fast: the document is OpenAPI 3.1, every `$ref` in it resolves and every component is used,
  its paths and methods are exactly the Starlette app's routes (Starlette answers HEAD on every
  GET route, so the document has those too), `GET /openapi.json` serves the file byte for byte,
  and every status the document lists for every operation is one the app was driven to answer,
  its headers and body as documented.
- Slow: schemathesis's engine (as `schemathesis run`: examples, coverage, fuzzing, stateful
  phases) drives the app in-process with requests generated from the document and holds every
  answer to it (status codes, media types, headers, bodies, auth, negative data, 405s).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import sqlite3
import urllib.parse
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import httpx2
import jsonschema_rs
import openapi_spec_validator
import pytest
import schemathesis
from schemathesis import engine
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import events as engine_events
from schemathesis.hooks import GLOBAL_HOOK_DISPATCHER
from schemathesis.python import asgi as schemathesis_asgi
from schemathesis.specs.openapi.definitions import OPENAPI_31
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from slopd import app
from slopd.core.layout import LEDGER_FILE
from slopd.shell.version import version
from slopd.transport import tokens as token_file
from slopd.transport.assembly import make_service
from slopd.transport.problems import TITLES
from slopd.transport.ratelimit import Allowance, Limiter
from slopd.transport.server.app import Service, build
from tests.conftest import HubDir, hub_env, toml_string
from tests.e2e.baton.test_baton_pack import letter, state
from tests.transport.http_rig import bearer, markdown, with_tokens

DOCUMENT_FILE = resources.files("slopd.transport.server").joinpath("openapi.json")
DOCUMENT_BYTES = DOCUMENT_FILE.read_bytes()
DOCUMENT: dict[str, Any] = json.loads(DOCUMENT_BYTES)
BASE = "urn:slopd:openapi"
REGISTRY = jsonschema_rs.Registry([(BASE, DOCUMENT)])
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
OPEN_PATHS = {"/v1/health", "/metrics", "/openapi.json"}
# The envelope the document's examples name (SPEC §3's own example id), dropped as a file, and its reply.
SEEDED = "20260704T071553Z-short-slug"
SEEDED_REPLY = f"{SEEDED.lower()}.result"


@contextlib.contextmanager
def serving(hub: HubDir) -> Iterator[tuple[Service, Starlette]]:
    """The app over an open hub, as `tests.transport.http_rig.in_process` builds it (no daemon loop)."""
    with app.start(hub.root, config_path=hub.config, state=hub.state, log_stream=None) as opened:
        service = make_service(opened)
        try:
            yield service, build(service)
        finally:
            service.doorbell.close()
            service.receipts.close()


def vessel(hub: HubDir, name: str) -> None:
    """A Baton vessel at generation 0 (`slopd baton init`); the seat of the same name owns it."""
    identity = hub.config.parent / f"{name}.identity.json"
    identity.write_text(json.dumps({"name": name}), encoding="utf-8")
    made = hub.slopd("baton", "init", "--hub", str(hub.root), "--identity", str(identity), name)
    assert made.returncode == 0, made.stderr


def problem_members(kind: str, status: int) -> dict[str, Any]:
    """The members every problem of `kind` has, `detail` aside."""
    return {"type": f"https://slopd.dev/problems/{kind}", "title": TITLES[kind][1], "status": status}


def seed(hub: HubDir, *ids: str) -> None:
    """Queries from alice dropped as files and answered by one `slopd run --once`."""
    for id in ids:
        hub.drop(f"{id}.md", markdown(id))
    hub.run_once()


def pointer(*parts: str) -> str:
    return "#/" + "/".join(part.replace("~", "~0").replace("/", "~1") for part in parts)


def resolve(at: str) -> Any:
    assert at.startswith("#/"), at
    node: Any = DOCUMENT
    for part in at[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def follow(at: str) -> tuple[str, Any]:
    """The object at `at`, through its `$ref`s, and where it is."""
    node = resolve(at)
    while isinstance(node, dict) and "$ref" in node:
        at = node["$ref"]
        node = resolve(at)
    return at, node


def check(at: str, instance: object) -> None:
    """`instance` against the document's schema at `at` (its `$ref`s resolved in the document)."""
    target = BASE + urllib.parse.quote(at, safe="#/~+")  # a JSON pointer in a URI fragment
    validator = jsonschema_rs.validator_for({"$ref": target}, registry=REGISTRY, validate_formats=True)
    errors = [str(error) for error in validator.iter_errors(instance)]
    assert errors == [], (at, instance)


def refs(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from refs(item)


def schemas(node: object) -> Iterator[dict[str, Any]]:
    """Every Schema Object outside `components.schemas`: those of parameters, headers, media types."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "schema" and isinstance(value, dict):
                yield value
            elif key != "schemas":
                yield from schemas(value)
    elif isinstance(node, list):
        for item in node:
            yield from schemas(item)


def operations() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in DOCUMENT["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


# -- fast: the document itself ------------------------------------------------------------------


def test_the_document_is_openapi_3_1_and_formatted() -> None:
    assert DOCUMENT["openapi"].startswith("3.1.")
    errors = [str(error) for error in jsonschema_rs.validator_for(OPENAPI_31).iter_errors(DOCUMENT)]
    assert errors == []
    assert DOCUMENT_BYTES.decode("utf-8") == json.dumps(DOCUMENT, indent=2, ensure_ascii=False) + "\n"


def test_the_document_passes_openapi_spec_validator_and_names_its_servers() -> None:
    """A second, independent reader (openapi-spec-validator) finds the document valid; `servers`
    names the serving instance (`/`) first, then a templated address."""
    openapi_spec_validator.validate(DOCUMENT)
    first, templated = DOCUMENT["servers"]
    assert first["url"] == "/"
    assert templated["url"] == "{scheme}://{host}:{port}"
    assert {name: value["default"] for name, value in templated["variables"].items()} == {
        "scheme": "http",
        "host": "127.0.0.1",
        "port": "8787",
    }


def test_commit_carries_every_field_of_score_as_score_has_it() -> None:
    """`Commit` restates `Score`'s fields (no `allOf`, which generators merge badly): the same
    schemas, the same required ones, and no other field than its own three."""
    components = DOCUMENT["components"]["schemas"]
    score, commit = components["Score"], components["Commit"]
    assert {name: commit["properties"][name] for name in score["properties"]} == score["properties"]
    assert set(commit["properties"]) - set(score["properties"]) == {"generation", "LOW_QUALITY", "projected"}
    assert commit["required"] == [*score["required"], "generation", "LOW_QUALITY", "projected"]
    assert score["additionalProperties"] is False
    assert commit["additionalProperties"] is False


def test_every_ref_resolves_and_every_component_is_used() -> None:
    used = set(refs(DOCUMENT))
    for at in used:
        follow(at)
    declared = {
        pointer("components", kind, name)
        for kind, entries in DOCUMENT["components"].items()
        if kind != "securitySchemes"
        for name in entries
    }
    assert declared - used == set()


def test_every_schema_in_the_document_is_json_schema_2020_12() -> None:
    found = [*DOCUMENT["components"]["schemas"].values(), *schemas(DOCUMENT)]
    assert len(found) > 40
    for schema in found:
        jsonschema_rs.meta.validate({"$schema": "https://json-schema.org/draft/2020-12/schema", **schema})


def test_the_examples_are_valid() -> None:
    post = pointer("paths", "/v1/envelopes", "post")
    for media in ("application/json", "text/markdown"):
        content = f"{post}/requestBody/content/{media.replace('/', '~1')}"
        check(f"{content}/schema", resolve(f"{content}/example"))
    for name in ("EnvelopeId", "ReplyId"):
        parameter = pointer("components", "parameters", name)
        check(f"{parameter}/schema", resolve(f"{parameter}/example"))


def test_only_health_metrics_and_the_document_go_without_a_token() -> None:
    assert DOCUMENT["security"] == [{"bearer": []}]
    scheme = DOCUMENT["components"]["securitySchemes"]["bearer"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    assert {
        path for path, _method, operation in operations() if operation.get("security") == []
    } == OPEN_PATHS
    for path, method, operation in operations():
        codes = set(operation["responses"])
        assert {"429", "500", "503"} <= codes, (path, method)
        assert ("401" in codes) == (path not in OPEN_PATHS), (path, method)


def test_operation_ids_are_unique() -> None:
    ids = [operation["operationId"] for _path, _method, operation in operations()]
    assert len(ids) == len(set(ids))


# -- fast: the document against the app ---------------------------------------------------------


def test_paths_and_methods_are_exactly_the_apps_routes(hub: HubDir) -> None:
    """The mounted `/mcp` routes (the MCP extra) speak MCP's Streamable HTTP transport: the MCP
    specification describes them, not this document; the console's (the console extra) are HTML
    pages for humans (docs/console.md), none under `/v1`, `/baton` or `/mcp`."""
    with_tokens(hub)
    with serving(hub) as (service, asgi):
        mounted = {route.path for route in service.mounted if isinstance(route, Route)}
        console = {path for path in mounted if path not in ("/mcp", "/mcp/")}
        assert console, "the console extra is in dev: its routes are mounted"
        clashing = [
            path for path in console if path.startswith(("/v1/", "/baton/", "/mcp", "/metrics", "/openapi"))
        ]
        assert not clashing, clashing
        routes = {
            route.path: {method.lower() for method in route.methods or ()}
            for route in asgi.routes
            if isinstance(route, Route) and route.path not in mounted
        }
        assert len(routes) + len(mounted) == len(asgi.routes)
    documented = {
        path: {method for method in METHODS if method in item} for path, item in DOCUMENT["paths"].items()
    }
    assert documented == routes


def test_the_served_document_is_the_file_with_this_installations_version(hub: HubDir) -> None:
    """Byte for byte the file, but for `info.version`: the version `slopd --version` prints."""
    with_tokens(hub)
    with serving(hub) as (_service, asgi), TestClient(asgi) as client:
        served = client.get("/openapi.json")
    assert served.status_code == 200
    assert served.headers["content-type"] == "application/json"
    expected = {**DOCUMENT, "info": {**DOCUMENT["info"], "version": version()}}
    assert served.content == (json.dumps(expected, indent=2, ensure_ascii=False) + "\n").encode()


def conforms(method: str, template: str, answer: httpx2.Response) -> None:
    """`answer` is one the document lists for the operation, with its headers and body."""
    responses = pointer("paths", template, method.lower(), "responses")
    assert str(answer.status_code) in resolve(responses), (method, template, answer.status_code)
    at, response = follow(f"{responses}/{answer.status_code}")
    for name in response.get("headers", {}):
        header_at, header = follow(f"{at}/headers/{name}")
        value = answer.headers.get(name)
        if value is None:
            assert not header.get("required"), f"{method} {template} {answer.status_code}: no {name}"
            continue
        schema_at, schema = follow(f"{header_at}/schema")
        check(schema_at, int(value) if schema.get("type") == "integer" else value)
    content = response.get("content", {})
    if method == "HEAD" or not content:
        assert answer.content == b""
        return
    media = answer.headers["content-type"].split(";")[0].strip()
    assert media in content, (method, template, answer.status_code, media)
    body = answer.json() if media.endswith("json") else answer.text
    check(f"{at}/content/{media.replace('/', '~1')}/schema", body)


class _Failing(Limiter):
    """A limiter that fails: the fault that makes any route a 500."""

    def take(self, partition: str, now: float) -> Allowance:
        raise RuntimeError("injected")


def test_every_documented_answer_is_one_the_app_gives(hub: HubDir) -> None:
    """Each (operation, status) the document lists is driven here, and the answer conforms."""
    tokens = with_tokens(hub, extra="max_body = 4096\n")
    alice, bob = bearer(tokens["alice"]), bearer(tokens["bob"])
    seed(hub, SEEDED, "20260704t071554z-second")
    vessel(hub, "alice")
    seen: set[tuple[str, str, str]] = set()
    posted = "20261201t120000z-fast"

    with serving(hub) as (service, asgi), TestClient(asgi) as client:

        def ask(
            method: str, template: str, url: str | None = None, status: int = 200, **kwargs: Any
        ) -> httpx2.Response:
            answer = client.request(method, url or template, **kwargs)
            assert answer.status_code == status, (method, url or template, answer.text)
            conforms(method, template, answer)
            seen.add((template, method.lower(), str(status)))
            return answer

        def post(data: bytes, status: int, media: str = "text/markdown", **headers: str) -> dict[str, Any]:
            sent = {"Content-Type": media, **alice, **headers}
            answer = ask("POST", "/v1/envelopes", status=status, content=data, headers=sent)
            return {} if not answer.content else dict(answer.json())

        # POST /v1/envelopes
        assert post(markdown(posted), 202)["seq"] >= 1
        assert post(markdown(posted), 200)["replayed"] is True
        assert post(markdown(posted, body="Other bytes.\n"), 422)["type"].endswith("/id-conflict")
        assert post(b"no front matter", 422)["errors"] == [
            {"reason": "no front matter: the file must start with a line '---'"}
        ]
        envelope = {"protocol": "slop.v1", "id": "20261201t120001z-json", "type": "note"}
        post(json.dumps({**envelope, "from": "alice", "to": "watcher"}).encode(), 202, "application/json")
        post(markdown("20261201t120002z-bob", sender="bob"), 403)
        post(markdown("20261201t120003z-key"), 400, **{"Idempotency-Key": '"another-id"'})
        post(markdown("20261201t120004z-plain"), 415, "text/plain")
        post(markdown("20261201t120005z-big", body="x" * 5000), 413)
        ask(
            "POST",
            "/v1/envelopes",
            status=401,
            content=markdown(posted),
            headers={"Content-Type": "text/markdown"},
        )
        flight = markdown("20261201t120006z-flight")
        service.receipts.claim(
            key="20261201t120006z-flight",
            id="20261201t120006z-flight",
            seat="alice",
            type="query",
            file="20261201t120006z-flight.md",
            sha256=hashlib.sha256(flight).hexdigest(),
            now="2026-12-01T12:00:06.000Z",
        )
        post(flight, 409)

        # GET and HEAD /v1/envelopes/{id}
        one = "/v1/envelopes/{id}"
        assert ask("GET", one, f"/v1/envelopes/{posted}", headers=alice).json()["seq"] >= 1
        assert ask("GET", one, f"/v1/envelopes/{SEEDED}", headers=alice).json()["seq"] is None
        for method in ("GET", "HEAD"):
            ask(method, one, f"/v1/envelopes/{SEEDED}", headers=alice)
            ask(method, one, f"/v1/envelopes/{SEEDED}", 404, headers=bob)
            ask(method, one, "/v1/envelopes/-not-an-id", 404, headers=alice)
            ask(method, one, f"/v1/envelopes/{SEEDED}", 401)

        # GET and HEAD /v1/envelopes/{id}/replies
        replies = "/v1/envelopes/{id}/replies"
        found = ask("GET", replies, f"/v1/envelopes/{SEEDED}/replies?wait=0.01", headers=alice).json()
        assert found["terminal"] is True
        assert [reply["id"] for reply in found["replies"]] == [SEEDED_REPLY]
        for method in ("GET", "HEAD"):
            ask(method, replies, f"/v1/envelopes/{SEEDED}/replies", headers=alice)
            ask(method, replies, f"/v1/envelopes/{SEEDED}/replies?wait=-1", 400, headers=alice)
            ask(method, replies, "/v1/envelopes/20261201t999999z-none/replies", 404, headers=alice)
            ask(method, replies, f"/v1/envelopes/{SEEDED}/replies", 401)

        # POST /v1/replies/{id}/ack
        ack = "/v1/replies/{id}/ack"
        ask("POST", ack, f"/v1/replies/{SEEDED_REPLY}/ack", 204, headers=alice)
        ask("POST", ack, f"/v1/replies/{SEEDED_REPLY}/ack", 404, headers=bob)
        ask("POST", ack, f"/v1/replies/{SEEDED_REPLY}/ack", 401)

        # GET and HEAD /v1/replies; then the oldest reply is cut from the ledger by hand, the one
        # way a cursor expires (410)
        page = ask("GET", "/v1/replies", "/v1/replies?limit=1", headers=alice).json()
        assert (len(page["replies"]), page["has_more"], page["pending"]) == (1, True, 1)
        full = ask("GET", "/v1/replies", headers=alice).json()["replies"]
        assert {reply["id"]: reply["acked"] for reply in full} == {
            SEEDED_REPLY: True,
            "20260704t071554z-second.result": False,
        }
        for method in ("GET", "HEAD"):
            ask(method, "/v1/replies", "/v1/replies?after=1&wait=0.01", headers=alice)
            ask(method, "/v1/replies", "/v1/replies?after=999", 400, headers=alice)
            ask(method, "/v1/replies", "/v1/replies?limit=many", 400, headers=alice)
            ask(method, "/v1/replies", "/v1/replies?after=1.5", 400, headers=alice)
            ask(method, "/v1/replies", "/v1/replies", 401)
        with contextlib.closing(sqlite3.connect(hub.state / LEDGER_FILE)) as ledger, ledger:
            ledger.execute("DELETE FROM replies WHERE rowid = (SELECT min(rowid) FROM replies)")
        for method in ("GET", "HEAD"):
            ask(method, "/v1/replies", "/v1/replies?after=0", 410, headers=alice)

        # The Baton keeper: any token reads and scores, only the vessel's own seat leases and commits
        one, autobiography = "/baton/{vessel}", "/baton/{vessel}/autobiography"
        for method in ("GET", "HEAD"):
            ask(method, "/baton/registry", headers=bob)
            ask(method, "/baton/registry", status=401)
            ask(method, one, "/baton/alice", headers=bob)
            ask(method, one, "/baton/nobody", 404, headers=alice)
            ask(method, one, "/baton/alice", 401)
            ask(method, autobiography, "/baton/alice/autobiography", headers=bob)
            ask(method, autobiography, "/baton/Not-A-Name/autobiography", 404, headers=alice)
            ask(method, autobiography, "/baton/alice/autobiography", 401)
        oversized = {"content": b" " * ((4 << 20) + 1), "headers": alice}
        lease = "/baton/{vessel}/lease"
        taken = ask("POST", lease, "/baton/alice/lease", json={"holder": "alice-1"}, headers=alice).json()
        assert ask("POST", lease, "/baton/alice/lease", 409, json={"holder": "x"}, headers=alice).json() == {
            **problem_members("leased", 409),
            "holder": "alice-1",
            "expires": taken["expires"],
            "detail": f"alice is leased to alice-1 until {taken['expires']}",
        }
        ask("POST", lease, "/baton/alice/lease", 403, json={"holder": "bob"}, headers=bob)
        ask("POST", lease, "/baton/nobody/lease", 404, json={"holder": "x"}, headers=alice)
        ask("POST", lease, "/baton/alice/lease", 400, json={"holder": ""}, headers=alice)
        unknown = ask("POST", lease, "/baton/alice/lease", 422, json={"holder": "x", "tll": 5}, headers=alice)
        assert unknown.json()["errors"] == [{"reason": "`tll`: this endpoint takes no such key"}]
        ask("POST", lease, "/baton/alice/lease", 413, **oversized)
        ask("POST", lease, "/baton/alice/lease", 401, json={"holder": "x"})
        commit = "/baton/{vessel}/commit"
        order = {"lease_id": taken["lease_id"], "generation": 1, "letter": letter(1), "state": state()}
        assert ask(
            "POST", commit, "/baton/alice/commit", 422, json={**order, "letter": "thin"}, headers=alice
        )
        ask("POST", commit, "/baton/alice/commit", 409, json={**order, "generation": 2}, headers=alice)
        extra = ask("POST", commit, "/baton/alice/commit", 422, json={**order, "force": True}, headers=alice)
        assert extra.json()["type"].endswith("/unknown-keys")
        assert (
            len(ask("POST", commit, "/baton/alice/commit", 400, json={}, headers=alice).json()["errors"]) == 4
        )
        ask("POST", commit, "/baton/alice/commit", 403, json=order, headers=bob)
        ask("POST", commit, "/baton/nobody/commit", 404, json=order, headers=alice)
        ask("POST", commit, "/baton/alice/commit", 413, **oversized)
        ask("POST", commit, "/baton/alice/commit", 401, json=order)
        done = ask("POST", commit, "/baton/alice/commit", json=order, headers=alice).json()
        assert (done["generation"], done["LOW_QUALITY"], done["passes"]) == (1, False, True)
        score = "/baton/{vessel}/score"
        assert (
            ask("POST", score, "/baton/anything/score", json={"letter": "thin"}, headers=bob).json()["words"]
            == 1
        )
        ask("POST", score, "/baton/alice/score", 400, json={"letter": 1}, headers=bob)
        ask("POST", score, "/baton/alice/score", 422, json={"letter": "thin", "strict": True}, headers=bob)
        ask("POST", score, "/baton/alice/score", 413, **oversized)
        ask("POST", score, "/baton/alice/score", 401, json={"letter": "thin"})

        # The routes that need no token
        for path in OPEN_PATHS:
            for method in ("GET", "HEAD"):
                ask(method, path)

        # Every operation: over the quota (429), failing (500), stopping (503)
        def urls() -> Iterator[tuple[str, str, str]]:
            for template, method, _operation in operations():
                ids = SEEDED_REPLY if template == ack else SEEDED
                yield method.upper(), template, template.replace("{id}", ids).replace("{vessel}", "alice")

        kept = service.limiter
        service.limiter = Limiter(0)
        for method, template, url in urls():
            answer = ask(method, template, url, 429, headers={"Content-Type": "text/markdown", **alice})
            assert 1 <= int(answer.headers["retry-after"]) <= 60
        service.limiter = _Failing(0)
        for method, template, url in urls():
            answer = ask(method, template, url, 500, headers={"Content-Type": "text/markdown", **alice})
            assert "ratelimit" not in answer.headers  # the failure came before the request was counted
        service.limiter = kept
        service.stopping = True
        for method, template, url in urls():
            assert ask(method, template, url, 503).headers["retry-after"] == "5"

    documented = {
        (template, method, status)
        for template, method, operation in operations()
        for status in operation["responses"]
    }
    assert documented - seen == set()
    assert seen - documented == set()


# -- slow: schemathesis -------------------------------------------------------------------------

TOKEN = token_file.new_token(b"\x2a" * 32)  # alice's: the schema's `bearer` and the hub's tokens file
CONFIG = {
    # The document's `bearer` scheme: sent where the document asks for it, and known to be
    # missing from the cases that go without it.
    "auth": {"openapi": {"bearer": {"bearer": TOKEN}}},
    "generation": {"max-examples": 30, "database": "none"},
    "checks": {
        # A schema-valid request is still refused for what no schema can know: a cursor past the
        # last reply (400), an Idempotency-Key that is not the body's id (400), the parser's rules
        # beyond the schema's (422: `..` in an id, a date that does not exist), a letter below the
        # gate (422).
        "positive_data_acceptance": {"enabled": False},
    },
}


def _at_once(value: object) -> object:
    """A valid `wait` becomes 0, so no generated request long-polls; an invalid one is kept."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return value
    try:
        seconds = float(value)
    except ValueError:
        return value
    return 0 if not math.isnan(seconds) and seconds > 0 else value


def _no_long_polls(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    if case.query and "wait" in case.query:
        case.query["wait"] = _at_once(case.query["wait"])


def _failures(stream: Iterator[Any]) -> list[str]:
    """What the engine's events report as failed or erred, one text each."""
    found: list[str] = []
    for event in stream:
        if isinstance(event, engine_events.ScenarioFinished) and event.status in (
            engine.Status.FAILURE,
            engine.Status.ERROR,
        ):
            failed = [
                check.failure_info
                for checks in event.recorder.checks.values()
                for check in checks
                if check.failure_info is not None
            ]
            found += [
                f"{event.label}: {info.failure.title}\n{info.failure.message}\n{info.code_sample}"
                for info in failed
            ] or [f"{event.label}: the {event.phase} phase ended {event.status}"]
        elif isinstance(event, engine_events.NonFatalError):
            found.append(f"{event.label}: {event.info.format()}")
        elif isinstance(event, engine_events.FatalError):
            found.append(f"fatal: {event.exception!r}")
    return found


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_the_app_answers_as_its_document_says(tmp_path: Path) -> None:
    """schemathesis's every phase (examples, coverage, fuzzing, stateful) over every operation,
    in-process, as `schemathesis run` would: on a hub with alice's token, a quota the run cannot
    exhaust, the envelope the document's examples name (dropped as a file and answered) and
    alice's vessel. Built at run time, so collecting the fast tests costs nothing."""
    hub = HubDir(
        tmp_path / "hub", state=tmp_path / "state", config=tmp_path / "config.toml", env=hub_env(tmp_path)
    )
    assert hub.slopd("init", "--no-home", str(hub.root)).returncode == 0
    tokens = tmp_path / "tokens"
    tokens.write_text(token_file.add("", "alice", TOKEN), encoding="utf-8")
    hub.write_config(f"[http]\ntokens = {toml_string(tokens)}\nrate_limit = 1000000\n")
    seed(hub, SEEDED)
    vessel(hub, "alice")
    answered: dict[str, set[int]] = {}
    with serving(hub) as (_service, asgi):
        config = SchemathesisConfig.from_dict(CONFIG)
        schema = schemathesis.openapi.from_dict(json.loads(DOCUMENT_BYTES), config=config)
        schema.app = asgi

        @schema.hook("after_call")
        def _record(context: Any, case: Any, response: Any) -> None:
            if response.request.headers.get("authorization") == f"Bearer {TOKEN}":
                answered.setdefault(f"{case.method} {case.path}", set()).add(response.status_code)

        # Every case, the coverage phase's too, goes through `before_call` (a process-wide hook,
        # so registered for this run only).
        schemathesis.hook("before_call")(_no_long_polls)
        try:
            failures = _failures(iter(engine.from_schema(schema).execute()))
        finally:
            GLOBAL_HOOK_DISPATCHER.unregister(_no_long_polls)
            schemathesis_asgi.shutdown_lifespans()
    assert not failures, "\n\n".join(failures)
    seated = {
        f"{method.upper()} {path}" for path, method, _operation in operations() if path not in OPEN_PATHS
    }
    assert {label for label, codes in answered.items() if codes - {401}} >= seated, "a valid token is let in"
    assert all(401 not in codes for codes in answered.values()), "a valid token is never refused"
