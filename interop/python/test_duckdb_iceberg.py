"""DuckDB's own iceberg extension (1.5.5, loaded from the PyPI extension
wheels, never downloaded) attaches the REST façade: the naive sum over
readings_versions equals msql's naive one, the Iceberg view's DuckDB SQL run
unmodified gives msql's resolved totals, decimals keep full precision, and
writes through the façade are refused with 405."""

import importlib.util
import pathlib
from decimal import Decimal

import duckdb
import pytest
import requests

from conftest import assert_totals


def extension(module, name):
    root = pathlib.Path(importlib.util.find_spec(module).origin).parent
    found = sorted(root.glob(f"extensions/v*/{name}.duckdb_extension"))
    assert found, f"{module} holds no {name}.duckdb_extension"
    return str(found[-1])


@pytest.fixture(scope="module")
def con(deployment):
    c = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    for module, name in [("duckdb_extension_avro", "avro"), ("duckdb_extension_httpfs", "httpfs"),
                         ("duckdb_extension_iceberg", "iceberg")]:
        c.execute(f"LOAD '{extension(module, name)}'")
    c.execute(f"""CREATE SECRET meterstore_rest (TYPE iceberg, CLIENT_ID '{deployment.user}',
        CLIENT_SECRET '{deployment.password}', OAUTH2_SERVER_URI '{deployment.rest_uri}/v1/oauth/tokens')""")
    c.execute(f"ATTACH 'meterstore' AS ice (TYPE iceberg, ENDPOINT '{deployment.rest_uri}', SECRET meterstore_rest)")
    c.execute(f"USE ice.{deployment.namespace}")
    yield c
    c.close()


TOTALS = """SELECT tenant, strftime(balancing_day, '%Y-%m') AS month, sum(value) AS total, count(*) AS n
            FROM ({}) GROUP BY ALL"""


def totals(con, relation):
    return {(t, m): (s, n) for t, m, s, n in con.execute(TOTALS.format(relation)).fetchall()}


def view_sql(deployment, dialect="duckdb"):
    e = deployment.expected
    r = requests.get(f"{deployment.rest_uri}/v1/namespaces/{deployment.namespace}/views/{e['view']}",
                     auth=(deployment.user, deployment.password))
    r.raise_for_status()
    md = r.json()["metadata"]
    current = next(v for v in md["versions"] if v["version-id"] == md["current-version-id"])
    return next(x["sql"] for x in current["representations"] if x["dialect"] == dialect)


def test_extension_versions(con):
    loaded = dict(con.execute("SELECT extension_name, loaded FROM duckdb_extensions() WHERE loaded").fetchall())
    assert {"iceberg", "avro", "httpfs"} <= set(loaded)
    assert duckdb.__version__ == "1.5.5"


def test_naive_totals_equal_msql(con, deployment):
    assert_totals(totals(con, "SELECT * FROM readings_versions"), deployment.totals("cold_naive"), "naive")


def test_view_sql_gives_msql_resolved_totals(con, deployment):
    assert_totals(totals(con, view_sql(deployment)), deployment.totals("cold_resolved"), "the view's duckdb SQL")


def test_published_resolution_sql_is_the_views(deployment):
    r = requests.get(f"{deployment.rest_uri}/v1/meterstore/resolution/{deployment.expected['table']}",
                     auth=(deployment.user, deployment.password))
    r.raise_for_status()
    assert r.text.strip() == view_sql(deployment).strip()


def test_naive_overstates_by_the_superseded_rows(con, deployment):
    e = deployment.expected
    naive = totals(con, "SELECT * FROM readings_versions")
    resolved = totals(con, view_sql(deployment))
    assert sum(n for _, n in naive.values()) - sum(n for _, n in resolved.values()) == e["cold_superseded_rows"] > 0
    assert sum(s for s, _ in naive.values()) - sum(s for s, _ in resolved.values()) == Decimal(e["cold_superseded_sum"])


def test_decimals_keep_full_precision(con, deployment):
    types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE readings_versions)").fetchall())
    assert types["value"] == "DECIMAL(18,6)" and types["version"] == "DECIMAL(20,0)", types
    view = view_sql(deployment)
    for p in deployment.expected["precise"]:
        got = con.execute(f"""SELECT value FROM ({view}) WHERE malo_id = ? AND obis_code = ? AND tenant = ?
                              AND "from" = CAST(? AS TIMESTAMPTZ)""",
                          [p["malo_id"], p["obis_code"], p["tenant"], p["from"]]).fetchall()
        assert got == [(Decimal(p["value"]),)], (p, got)
        assert str(got[0][0]) == p["value"]


def test_columns_read_as_written(con, deployment):
    got = [r[0] for r in con.execute("SELECT column_name FROM (DESCRIBE readings_versions)").fetchall()]
    assert got == [f["name"] for f in deployment.expected["fields"]]


def snapshot(deployment):
    r = requests.get(f"{deployment.rest_uri}/v1/namespaces/{deployment.namespace}/tables/{deployment.expected['table']}",
                     auth=(deployment.user, deployment.password))
    r.raise_for_status()
    return r.json()["metadata"]["current-snapshot-id"]


@pytest.mark.parametrize("statement", [
    "CREATE SCHEMA ice.interop_should_not_exist",
    "DROP TABLE ice.meterstore.readings_versions",
    "CREATE TABLE ice.meterstore.interop_t (x INTEGER)",
])
def test_writes_are_refused_with_405(con, deployment, statement):
    before = snapshot(deployment)
    with pytest.raises(duckdb.Error, match="405") as err:
        con.execute(statement)
    assert "read-only" in str(err.value)
    assert snapshot(deployment) == before
    assert con.execute("SELECT count(*) FROM readings_versions").fetchone()[0] > 0
