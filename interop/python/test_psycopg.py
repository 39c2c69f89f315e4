"""psycopg 3 over pgwire: server-side binding, numeric → Decimal, timestamptz
→ an aware datetime, a server-side cursor fetching a large result in pieces,
a Grafana-style time-series query, PostgreSQL's column names and errors, a
scoped user that cannot leave its tenant, and time values — ±infinity in
binary, naive datetimes bound in the session's zone — compared with the
deployment's own PostgreSQL."""

import datetime
from decimal import Decimal

import psycopg
import pytest
from psycopg.adapt import Loader

from conftest import assert_totals


@pytest.fixture
def conn(deployment):
    with psycopg.connect(deployment.pg_dsn(), autocommit=True) as c:
        yield c


TOTALS = """SELECT tenant, strftime(balancing_day, '%Y-%m') AS month, sum(value) AS total, count(*) AS n
            FROM readings GROUP BY 1, 2 ORDER BY 1, 2"""


def test_resolved_totals_equal_msql(conn, deployment):
    rows = conn.execute(TOTALS).fetchall()
    assert_totals({(t, m): (s, n) for t, m, s, n in rows}, deployment.totals("all_resolved"), "readings over pgwire")
    assert all(isinstance(s, Decimal) for _, _, s, _ in rows)


def test_server_side_binding(conn, deployment):
    p = deployment.expected["precise"][0]
    with conn.cursor() as cur:
        cur.execute("""SELECT value, "from" FROM readings WHERE malo_id = %s AND obis_code = %s AND tenant = %s
                       AND "from" = %s""",
                    (p["malo_id"], p["obis_code"], p["tenant"], datetime.datetime.fromisoformat(p["from"])),
                    prepare=True)
        (value, frm), = cur.fetchall()
    assert isinstance(value, Decimal) and value == Decimal(p["value"]) and str(value) == p["value"]
    assert frm.tzinfo is not None and frm == datetime.datetime.fromisoformat(p["from"])
    # Binary parameters and results through the extended protocol.
    with conn.cursor(binary=True) as cur:
        cur.execute("SELECT count(*) FROM readings WHERE tenant = %s AND value >= %s", (p["tenant"], Decimal(0)))
        (n,), = cur.fetchall()
    want = sum(t["rows"] for t in deployment.expected["all_resolved"] if t["tenant"] == p["tenant"])
    assert n == want


def test_timestamptz_is_aware(conn):
    (frm, day), = conn.execute('SELECT min("from"), min(balancing_day) FROM readings').fetchall()
    assert isinstance(frm, datetime.datetime) and frm.utcoffset() is not None
    assert isinstance(day, datetime.date) and not isinstance(day, datetime.datetime)


def test_server_side_cursor_fetchmany_on_a_large_result(deployment):
    total = deployment.expected["all_rows"]
    assert total > 10_000
    with psycopg.connect(deployment.pg_dsn()) as c:
        with c.cursor(name="interop_big") as cur:
            cur.itersize = 1000
            cur.execute('SELECT malo_id, "from", value FROM readings')
            seen, batches = 0, 0
            while batch := cur.fetchmany(2500):
                assert len(batch) <= 2500
                seen += len(batch)
                batches += 1
            assert seen == total and batches >= total // 2500


def test_fetchmany_streams_a_large_result(deployment):
    """A client cursor's fetchmany over the whole of readings: every row, in pieces."""
    total = deployment.expected["all_rows"]
    with psycopg.connect(deployment.pg_dsn(), autocommit=True) as c:
        with c.cursor() as cur:
            cur.execute('SELECT malo_id, "from", value FROM readings')
            seen = 0
            while batch := cur.fetchmany(2500):
                assert all(isinstance(v, Decimal) for _, _, v in batch)
                seen += len(batch)
    assert seen == total > 10_000


def test_grafana_style_time_series(conn, deployment):
    rows = conn.execute("""SELECT date_trunc('day', "from") AS "time", tenant AS metric, sum(value) AS value
                           FROM readings WHERE "from" BETWEEN %s AND %s GROUP BY 1, 2 ORDER BY 1""",
                        (datetime.datetime(2025, 9, 1, tzinfo=datetime.timezone.utc),
                         datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc))).fetchall()
    assert rows and all(isinstance(t, datetime.datetime) and t.tzinfo is not None for t, _, _ in rows)
    got = {}
    for _, metric, v in rows:
        got[metric] = got.get(metric, 0) + v
    want = {}
    for t in deployment.expected["all_resolved"]:
        want[t["tenant"]] = want.get(t["tenant"], 0) + Decimal(t["sum"])
    assert got == want


@pytest.mark.parametrize("sql,names", [
    ("SELECT count(*) FROM readings", ["count"]),
    ("SELECT sum(value), min(value), max(value), avg(value) FROM readings", ["sum", "min", "max", "avg"]),
    ("SELECT count(DISTINCT tenant) FROM readings", ["count"]),
    ("SELECT 1", ["?column?"]),
    ("SELECT upper(tenant), tenant FROM readings LIMIT 1", ["upper", "tenant"]),
    ("SELECT CAST(value AS text) FROM readings LIMIT 1", ["value"]),
    ("SELECT value::text FROM readings LIMIT 1", ["value"]),
])
def test_column_names_as_postgresql_names_them(conn, sql, names):
    cur = conn.execute(sql)
    assert [d.name for d in cur.description] == names


@pytest.mark.parametrize("sql,sqlstate", [
    ("SELECT 1/0", "22012"),
    ("SELECT 1 % 0", "22012"),
    ("SELECT count(*) FROM no_such_table", "42P01"),
    ("SELECT no_such_column FROM readings", "42703"),
    ("SELEC 1", "42601"),
    ("DELETE FROM readings", "42501"),
    ("INSERT INTO readings_versions SELECT * FROM readings_versions LIMIT 1", "42501"),
    ("CREATE TABLE x (i int)", "42501"),
])
def test_errors_as_postgresql_raises_them(conn, sql, sqlstate):
    with pytest.raises(psycopg.Error) as err:
        conn.execute(sql).fetchall()
    assert err.value.sqlstate == sqlstate, (sql, err.value.sqlstate, str(err.value))


SCOPED_ESCAPES = [
    "SELECT DISTINCT tenant FROM readings",
    "SELECT DISTINCT tenant FROM readings_versions",
    "SELECT DISTINCT tenant FROM public.readings",
    "SELECT DISTINCT tenant FROM (SELECT * FROM readings) r",
    "WITH r AS (SELECT * FROM readings_versions) SELECT DISTINCT tenant FROM r",
    "SELECT DISTINCT tenant FROM readings WHERE tenant <> %(t)s OR true",
]


@pytest.mark.parametrize("sql", SCOPED_ESCAPES)
def test_scoped_user_sees_only_its_tenant(deployment, sql):
    with psycopg.connect(deployment.pg_dsn(deployment.scoped_user, deployment.scoped_password), autocommit=True) as c:
        rows = c.execute(sql, {"t": deployment.scoped_tenant} if "%(t)s" in sql else None).fetchall()
    assert rows == [(deployment.scoped_tenant,)], rows


@pytest.mark.parametrize("sql", [
    "SELECT * FROM read_parquet('/etc/passwd')",
    "SELECT * FROM postgres_scan('host=127.0.0.1', 'public', 'readings_versions')",
])
def test_scoped_user_cannot_reach_files_or_other_tables(deployment, sql):
    with psycopg.connect(deployment.pg_dsn(deployment.scoped_user, deployment.scoped_password), autocommit=True) as c:
        with pytest.raises(psycopg.Error):
            c.execute(sql).fetchall()


def test_scoped_totals_are_its_tenant_only(deployment):
    with psycopg.connect(deployment.pg_dsn(deployment.scoped_user, deployment.scoped_password), autocommit=True) as c:
        rows = c.execute(TOTALS).fetchall()
    want = {k: v for k, v in deployment.totals("all_resolved").items() if k[0] == deployment.scoped_tenant}
    assert_totals({(t, m): (s, n) for t, m, s, n in rows}, want, "scoped readings")


def test_wrong_password_is_refused(deployment):
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(deployment.pg_dsn(deployment.user, "wrong"))


class RawBinary(Loader):
    """Loads a binary value as the bytes the server sent, so two servers'
    answers are compared on the wire, not after psycopg's conversion (which
    refuses ±infinity)."""
    format = psycopg.pq.Format.BINARY

    def load(self, data):
        return bytes(data)


def both_servers(deployment):
    """msql serve and the real PostgreSQL the deployment's hot tier runs on."""
    return {"msql serve": deployment.pg_dsn(), "PostgreSQL": deployment.catalog_dsn}


def test_infinity_in_binary_as_postgresql_sends_it(deployment):
    q = """SELECT TIMESTAMPTZ '-infinity', TIMESTAMPTZ 'infinity', TIMESTAMP '-infinity', TIMESTAMP 'infinity',
               DATE '-infinity', DATE 'infinity'"""
    got = {}
    for name, dsn in both_servers(deployment).items():
        with psycopg.connect(dsn, autocommit=True) as c, c.cursor(binary=True) as cur:
            for t in ("timestamptz", "timestamp", "date"):
                cur.adapters.register_loader(t, RawBinary)
            got[name] = cur.execute(q).fetchone()
    assert got["msql serve"] == got["PostgreSQL"], got


@pytest.mark.parametrize("binary", [False, True])
def test_naive_datetime_parameters_mean_the_session_zone(deployment, binary):
    """psycopg sends a naive datetime as `timestamp` (OID 1114); PostgreSQL
    reads it in the session's TimeZone, so must msql serve."""
    midnight = datetime.datetime(2025, 10, 24, 0, 0)
    got = {}
    for name, dsn in both_servers(deployment).items():
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("SET TimeZone = 'Europe/Berlin'")
            with c.cursor(binary=binary) as cur:
                got[name] = cur.execute("SELECT %s::timestamptz, %s::timestamp", (midnight, midnight)).fetchone()
    assert got["msql serve"] == got["PostgreSQL"], got
    aware, naive = got["msql serve"]
    assert aware.utcoffset() == datetime.timedelta(hours=2) and naive == midnight


def test_a_window_bound_as_naive_datetimes_equals_its_literals(deployment):
    """The same Berlin day as literals and as bound naive datetimes counts the
    same rows: a parameter read as UTC would shift the window by two hours."""
    q = 'SELECT count(*), sum(value) FROM readings WHERE "from" >= {} AND "from" < {}'
    with psycopg.connect(deployment.pg_dsn(), autocommit=True) as c:
        (first,), = c.execute("SELECT min(balancing_day) FROM readings").fetchall()
        lo = datetime.datetime.combine(first + datetime.timedelta(days=1), datetime.time())
        hi = lo + datetime.timedelta(days=1)
        c.execute("SET TimeZone = 'Europe/Berlin'")
        literal = c.execute(q.format(f"'{lo}'", f"'{hi}'")).fetchone()
        bound = c.execute(q.format("%s", "%s"), (lo, hi)).fetchone()
    assert literal[0] > 0
    assert bound == literal
