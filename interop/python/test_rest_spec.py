"""The REST façade against the Iceberg REST catalog specification: the OpenAPI
document of apache/iceberg (tag apache-iceberg-1.10.1, commit
ccb8bc435062171e64bc8b7e5f56e6aed9c5b934, pinned unmodified as
interop/rest-catalog-open-api.yaml) drives schemathesis: every read route's
responses conform to the spec's status codes, content types, headers and
schemas; every mutating route answers 405 with an Iceberg error body, as the
façade documents; no request makes the server fail (5xx) or stop.

The façade advertises no prefix in /v1/config, so a client of the spec sends
the optional {prefix} segment empty: the document's paths are loaded with it
removed."""

import copy
import pathlib

import pytest
import requests
import schemathesis
import yaml
from hypothesis import HealthCheck, settings

from conftest import Deployment

READ_METHODS = {"get", "head"}
MAX_EXAMPLES = 5


def load_spec(path):
    raw = yaml.safe_load(pathlib.Path(path).read_text())
    spec = copy.deepcopy(raw)
    spec["paths"] = {}
    for p, item in raw["paths"].items():
        for op in [item] + [v for k, v in item.items() if isinstance(v, dict)]:
            if "parameters" in op:
                op["parameters"] = [x for x in op["parameters"] if x.get("$ref") != "#/components/parameters/prefix"]
        spec["paths"][p.replace("/v1/{prefix}/", "/v1/")] = item
    spec["servers"] = [{"url": "/"}]
    return spec


DEPLOYMENT = Deployment()
SCHEMA = schemathesis.openapi.from_dict(load_spec(DEPLOYMENT.spec))


def bearer(d):
    r = requests.post(f"{d.rest_uri}/v1/oauth/tokens", data={"grant_type": "client_credentials",
                                                              "client_id": d.user, "client_secret": d.password})
    r.raise_for_status()
    return {"Authorization": "Bearer " + r.json()["access_token"]}


HEADERS = bearer(DEPLOYMENT)


def is_read(case):
    return case.method.lower() in READ_METHODS or case.path == "/v1/oauth/tokens"


def test_spec_loaded_without_prefix():
    ops = [op for op in SCHEMA.get_all_operations()]
    paths = {o.ok().path for o in ops}
    assert "/v1/namespaces/{namespace}/tables/{table}" in paths
    assert not any("{prefix}" in p for p in paths)
    assert len(paths) > 15


@SCHEMA.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_read_routes_conform(case):
    if not is_read(case):
        return
    case.call_and_validate(base_url=DEPLOYMENT.rest_uri, headers=HEADERS if case.path != "/v1/oauth/tokens" else None)


@SCHEMA.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_mutating_routes_answer_405(case):
    if is_read(case):
        return
    r = case.call(base_url=DEPLOYMENT.rest_uri, headers=HEADERS)
    assert r.status_code == 405, (case.method, case.formatted_path, r.status_code, r.text[:300])
    body = r.json()
    assert set(body) == {"error"} and {"message", "type", "code"} <= set(body["error"]), body
    assert body["error"]["code"] == 405 and "read-only" in body["error"]["message"]
    allow = {k.lower(): v for k, v in r.headers.items()}.get("allow")
    assert allow is not None, r.headers
    allow = allow[0] if isinstance(allow, list) else allow
    assert allow in ("GET, HEAD", ""), allow  # "": a route of the spec with no read method


def test_server_still_serves(deployment):
    assert requests.get(f"{deployment.rest_uri}/healthz").status_code == 200
    r = requests.get(f"{deployment.rest_uri}/v1/namespaces", headers=HEADERS)
    assert r.status_code == 200 and ["meterstore"] in r.json()["namespaces"]
