"""The ADBC Flight SQL driver: statements, bound parameters, GetFlightInfo then
DoGet, the provenance keys on the schema equal to what msql reports, and a
scoped user confined to its tenant."""

from decimal import Decimal

import adbc_driver_flightsql.dbapi as flight_sql
import pyarrow as pa
import pytest

from conftest import assert_totals


def connect(d, user=None, password=None):
    return flight_sql.connect(f"grpc://127.0.0.1:{d.flight_port}",
                              db_kwargs={"username": user or d.user, "password": password or d.password})


@pytest.fixture
def conn(deployment):
    c = connect(deployment)
    yield c
    c.close()


TOTALS = """SELECT tenant, strftime(balancing_day, '%Y-%m') AS month, sum(value) AS total, count(*) AS n
            FROM readings GROUP BY ALL ORDER BY ALL"""


def test_totals_equal_msql(conn, deployment):
    with conn.cursor() as cur:
        cur.execute(TOTALS)
        table = cur.fetch_arrow_table()
    assert table.schema.field("total").type == pa.decimal128(38, 6)
    got = {(r["tenant"], r["month"]): (r["total"], r["n"]) for r in table.to_pylist()}
    assert_totals(got, deployment.totals("all_resolved"), "Flight SQL")


def test_bound_parameters(conn, deployment):
    p = deployment.expected["precise"][0]
    with conn.cursor() as cur:
        cur.execute("""SELECT value FROM readings WHERE malo_id = ? AND obis_code = ? AND tenant = ?
                       AND "from" = CAST(? AS TIMESTAMPTZ)""", (p["malo_id"], p["obis_code"], p["tenant"], p["from"]))
        rows = cur.fetchall()
    assert rows == [(Decimal(p["value"]),)] and str(rows[0][0]) == p["value"]


def test_flight_info_then_do_get_with_provenance(conn, deployment):
    want = deployment.expected["provenance"]
    with conn.cursor() as cur:
        info_schema = cur.adbc_execute_schema(want["sql"])
        partitions, schema = cur.adbc_execute_partitions(want["sql"])
        assert partitions, "GetFlightInfo returned no endpoint"
        batches = []
        for part in partitions:
            cur.adbc_read_partition(part)  # DoGet of the endpoint's ticket
            batches.append(cur.fetch_arrow_table())
    table = pa.concat_tables(batches)
    by_tenant = {r["tenant"]: r["n"] for r in table.to_pylist()}
    want_rows = {}
    for t in deployment.expected["all_resolved"]:
        want_rows[t["tenant"]] = want_rows.get(t["tenant"], 0) + t["rows"]
    assert by_tenant == want_rows
    for what, s in [("GetFlightInfo", schema), ("execute schema", info_schema), ("DoGet", table.schema)]:
        md = {k.decode(): v.decode() for k, v in (s.metadata or {}).items()}
        assert md.get("meterstore.watermark", "").startswith(want["watermark"].rstrip("Z")), (what, md)
        assert md.get("meterstore.tiers") == want["tiers"], (what, md)
        assert md.get("meterstore.read_mode") == want["mode"], (what, md)


def test_large_result_streams(conn, deployment):
    with conn.cursor() as cur:
        cur.execute('SELECT malo_id, "from", value FROM readings')
        n = 0
        for batch in cur.fetch_record_batch():
            n += batch.num_rows
    assert n == deployment.expected["all_rows"]


@pytest.mark.parametrize("sql", ["DELETE FROM readings", "CREATE TABLE x (i INTEGER)",
                                 "SELECT * FROM read_parquet('/etc/passwd')"])
def test_writes_and_files_are_refused(conn, sql):
    with conn.cursor() as cur:
        with pytest.raises(Exception):
            cur.execute(sql)
            cur.fetchall()


def test_scoped_user_sees_only_its_tenant(deployment):
    c = connect(deployment, deployment.scoped_user, deployment.scoped_password)
    try:
        with c.cursor() as cur:
            for sql in ["SELECT DISTINCT tenant FROM readings", "SELECT DISTINCT tenant FROM readings_versions",
                        "SELECT DISTINCT tenant FROM (SELECT * FROM readings_versions WHERE true OR tenant <> 'x')"]:
                cur.execute(sql)
                assert cur.fetchall() == [(deployment.scoped_tenant,)], sql
    finally:
        c.close()
