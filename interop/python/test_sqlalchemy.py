"""SQLAlchemy 2 (psycopg 3 dialect) over pgwire: the inspector reflects the
relations and their columns with PostgreSQL's types, and a Core query over the
reflected table gives msql's totals."""

from decimal import Decimal

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from conftest import assert_totals


@pytest.fixture(scope="module")
def engine(deployment):
    e = sa.create_engine(f"postgresql+psycopg://{deployment.user}:{deployment.password}@"
                         f"{deployment.pg_host}:{deployment.pg_port}/meterstore")
    yield e
    e.dispose()


def test_inspector_lists_the_relations(engine):
    insp = sa.inspect(engine)
    assert "public" in insp.get_schema_names()
    names = set(insp.get_table_names()) | set(insp.get_view_names())
    assert {"readings", "readings_versions"} <= names, names


def test_inspector_reflects_columns(engine, deployment):
    cols = {c["name"]: c for c in sa.inspect(engine).get_columns("readings")}
    assert list(cols) == [f["name"] for f in deployment.expected["fields"]]
    assert isinstance(cols["value"]["type"], sa.Numeric) and (cols["value"]["type"].precision, cols["value"]["type"].scale) == (18, 6)
    assert isinstance(cols["from"]["type"], postgresql.TIMESTAMP) and cols["from"]["type"].timezone
    assert isinstance(cols["balancing_day"]["type"], sa.Date)
    assert isinstance(cols["malo_id"]["type"], sa.Text)
    required = {f["name"] for f in deployment.expected["fields"] if f["required"]}
    assert {n for n, c in cols.items() if not c["nullable"]} == required


def test_core_query_over_the_reflected_table(engine, deployment):
    readings = sa.Table("readings", sa.MetaData(), autoload_with=engine)
    month = sa.func.strftime(readings.c.balancing_day, "%Y-%m").label("month")
    q = sa.select(readings.c.tenant, month, sa.func.sum(readings.c.value), sa.func.count()).group_by(readings.c.tenant, month)
    with engine.connect() as c:
        rows = c.execute(q).all()
    assert all(isinstance(s, Decimal) for _, _, s, _ in rows)
    assert_totals({(t, m): (s, n) for t, m, s, n in rows}, deployment.totals("all_resolved"), "SQLAlchemy Core")


def test_bound_parameters(engine, deployment):
    p = deployment.expected["precise"][0]
    with engine.connect() as c:
        got = c.execute(sa.text("SELECT value FROM readings WHERE malo_id = :m AND obis_code = :o AND tenant = :t "
                                "AND \"from\" = CAST(:f AS timestamptz)"),
                        {"m": p["malo_id"], "o": p["obis_code"], "t": p["tenant"], "f": p["from"]}).scalar_one()
    assert got == Decimal(p["value"]) and str(got) == p["value"]
