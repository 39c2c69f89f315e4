"""PyIceberg reads the cold tier through the REST façade and directly through
the SQL catalog in PostgreSQL: resolved totals equal msql's, the naive sum
overstates by exactly the superseded rows, decimals keep full precision, the
layout reads as MeterStore wrote it, and writes through the façade are refused."""

from decimal import Decimal

import pyarrow as pa
import pytest
import requests
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import EqualTo
from pyiceberg.types import DecimalType

from conftest import assert_totals, resolve, totals_of


def open_catalog(d, kind):
    if kind == "rest":
        return RestCatalog("meterstore", uri=d.rest_uri, credential=f"{d.user}:{d.password}",
                           **{"oauth2-server-uri": f"{d.rest_uri}/v1/oauth/tokens"})
    host_port_db = d.catalog_dsn.split("@", 1)[1].split("?", 1)[0]
    return SqlCatalog(d.catalog_name, uri=f"postgresql+psycopg2://postgres@{host_port_db}", warehouse=d.warehouse)


@pytest.fixture(scope="module", params=["rest", "sql"])
def catalog(request, deployment):
    return request.param, open_catalog(deployment, request.param)


@pytest.fixture(scope="module")
def rows(catalog, deployment):
    _, cat = catalog
    tbl = cat.load_table((deployment.namespace, deployment.expected["table"]))
    return tbl.scan().to_arrow().to_pylist()


def test_lists_the_table(catalog, deployment):
    _, cat = catalog
    names = [t[-1] for t in cat.list_tables(deployment.namespace)]
    assert deployment.expected["table"] in names, names


def test_resolved_totals_equal_msql(rows, deployment):
    assert_totals(totals_of(resolve(rows)), deployment.totals("cold_resolved"), "resolved over the scan")


def test_naive_sum_overstates_by_the_superseded_rows(rows, deployment):
    e = deployment.expected
    naive = totals_of(rows)
    assert_totals(naive, deployment.totals("cold_naive"), "naive over the scan")
    resolved = totals_of(resolve(rows))
    extra_rows = sum(n for _, n in naive.values()) - sum(n for _, n in resolved.values())
    extra_sum = sum(s for s, _ in naive.values()) - sum(s for s, _ in resolved.values())
    assert extra_rows == e["cold_superseded_rows"] > 0
    assert extra_sum == Decimal(e["cold_superseded_sum"])


def test_decimals_keep_full_precision(catalog, deployment):
    _, cat = catalog
    tbl = cat.load_table((deployment.namespace, deployment.expected["table"]))
    vt = tbl.schema().find_field("value").field_type
    assert isinstance(vt, DecimalType) and (vt.precision, vt.scale) == (18, 6), vt
    precise = deployment.expected["precise"]
    assert precise, "msql found no value with six decimals"
    by_key = {}
    for r in resolve(tbl.scan(row_filter=EqualTo("malo_id", precise[0]["malo_id"])).to_arrow().to_pylist()):
        by_key[(r["obis_code"], r["from"].strftime("%Y-%m-%dT%H:%M:%SZ"), r["tenant"])] = r["value"]
    for p in precise:
        if p["malo_id"] != precise[0]["malo_id"]:
            continue
        got = by_key[(p["obis_code"], p["from"], p["tenant"])]
        assert isinstance(got, Decimal) and got == Decimal(p["value"]) and str(got) == p["value"], (p, got)


def test_layout_reads_as_written(catalog, deployment):
    _, cat = catalog
    e = deployment.expected
    tbl = cat.load_table((deployment.namespace, e["table"]))
    sc = tbl.schema()
    got = [(f.field_id, f.name, str(f.field_type), f.required) for f in sc.fields]
    want = [(f["id"], f["name"], f["type"], f["required"]) for f in e["fields"]]
    assert got == want
    spec = [(f.source_id, sc.find_column_name(f.source_id), str(f.transform), f.name) for f in tbl.spec().fields]
    assert spec == [(p["source_id"], p["source"], p["transform"], p["name"]) for p in e["partition_spec"]]
    order = [(f.source_id, sc.find_column_name(f.source_id), f.direction.value, f.null_order.value)
             for f in tbl.sort_order().fields]
    assert order == [(s["source_id"], s["source"], s["direction"], s["null_order"]) for s in e["sort_order"]]


def test_view_carries_the_resolution_sql(deployment):
    e = deployment.expected
    cat = open_catalog(deployment, "rest")
    assert (deployment.namespace, e["view"]) in [tuple(v) for v in cat.list_views(deployment.namespace)]
    view = cat.load_view((deployment.namespace, e["view"]))
    md = view.metadata
    current = next(v for v in md.versions if v.version_id == md.current_version_id)
    dialects = {r.root.dialect: r.root.sql for r in current.representations}
    assert set(dialects) >= {"spark", "trino", "duckdb"}, dialects
    for dialect, sql in dialects.items():
        q = "`" if dialect == "spark" else '"'  # Spark SQL quotes identifiers with backticks
        key = ", ".join(f"{q}{c}{q}" for c in ["malo_id", "obis_code", "from", "tenant", "version_scope"])
        assert f"PARTITION BY {key}" in sql, (dialect, sql)
        assert f"ORDER BY {q}version{q} DESC" in sql and f"FROM {q}readings_versions{q}" in sql, (dialect, sql)
    schema = next(s for s in md.schemas if s.schema_id == current.schema_id)
    assert [(f.field_id, f.name) for f in schema.fields] == [(f["id"], f["name"]) for f in e["fields"]]


def test_writes_through_the_facade_are_refused(deployment):
    """PyIceberg reads the endpoints /v1/config advertises (reads only) and
    refuses a write before sending it; the routes themselves answer 405 with
    the reason to a client that sends one anyway."""
    e = deployment.expected
    cat = open_catalog(deployment, "rest")
    tbl = cat.load_table((deployment.namespace, e["table"]))
    before = tbl.metadata.current_snapshot_id
    with pytest.raises(NotImplementedError, match="does not support endpoint: POST"):
        with tbl.transaction() as tx:
            tx.set_properties(interop="must-not-commit")
    with pytest.raises(NotImplementedError, match="does not support endpoint: POST"):
        cat.create_namespace("interop_should_not_exist")
    with pytest.raises(NotImplementedError, match="does not support endpoint: DELETE"):
        cat.drop_table((deployment.namespace, e["table"]))
    with pytest.raises(NotImplementedError, match="does not support endpoint: DELETE"):
        cat.drop_view((deployment.namespace, e["view"]))

    auth = (deployment.user, deployment.password)
    base = f"{deployment.rest_uri}/v1/namespaces"
    tpath = f"{base}/{deployment.namespace}/tables/{e['table']}"
    for method, url, body in [
        ("POST", base, {"namespace": ["interop_should_not_exist"]}),
        ("POST", tpath, {"requirements": [], "updates": [{"action": "set-properties", "updates": {"interop": "x"}}]}),
        ("DELETE", tpath, None),
        ("DELETE", f"{base}/{deployment.namespace}", None),
        ("POST", f"{base}/{deployment.namespace}/tables", {"name": "interop_t", "schema": {"type": "struct", "fields": []}}),
        ("POST", f"{base}/{deployment.namespace}/register", {"name": "x", "metadata-location": "file:///x"}),
        ("POST", f"{deployment.rest_uri}/v1/tables/rename", {"source": {"namespace": ["meterstore"], "name": "readings_versions"},
                                                            "destination": {"namespace": ["meterstore"], "name": "x"}}),
        ("POST", f"{deployment.rest_uri}/v1/transactions/commit", {"table-changes": []}),
        ("DELETE", f"{base}/{deployment.namespace}/views/{e['view']}", None),
    ]:
        r = requests.request(method, url, json=body, auth=auth)
        assert r.status_code == 405, (method, url, r.status_code, r.text)
        assert "read-only" in r.json()["error"]["message"], r.text
        assert r.json()["error"]["code"] == 405
    after = cat.load_table((deployment.namespace, e["table"]))
    assert after.metadata.current_snapshot_id == before
    assert "interop" not in after.properties
    assert cat.view_exists((deployment.namespace, e["view"]))
    assert "interop_should_not_exist" not in [n[0] for n in cat.list_namespaces()]


def test_scoped_user_is_refused_the_catalog(deployment):
    r = requests.get(f"{deployment.rest_uri}/v1/namespaces", auth=(deployment.scoped_user, deployment.scoped_password))
    assert r.status_code == 403, (r.status_code, r.text)
    with pytest.raises(Exception):
        RestCatalog("meterstore", uri=deployment.rest_uri,
                    credential=f"{deployment.scoped_user}:{deployment.scoped_password}",
                    **{"oauth2-server-uri": f"{deployment.rest_uri}/v1/oauth/tokens"}).list_tables(deployment.namespace)
