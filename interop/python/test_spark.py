"""PySpark (local mode) with the Iceberg Spark runtime reads through the REST
façade: readings_versions and the Iceberg view readings. Resolved totals
through the view equal msql's, the naive sum over the table overstates by
exactly the superseded rows, decimals keep full precision, field ids,
partition spec and sort order read as written, and writes are refused without
leaving files behind."""

import os
import pathlib
from decimal import Decimal

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import DecimalType

from conftest import assert_totals

CAT = "meterstore"  # the view's default-catalog: its SQL resolves readings_versions there


@pytest.fixture(scope="module")
def spark(deployment):
    jar = os.environ.get("INTEROP_ICEBERG_SPARK_JAR", "")
    assert jar and pathlib.Path(jar).is_file(), f"INTEROP_ICEBERG_SPARK_JAR={jar!r}: no Iceberg Spark runtime jar"
    uri = deployment.rest_uri
    s = (SparkSession.builder.master("local[2]").appName("meterstore-interop")
         .config("spark.jars", jar)
         .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
         .config(f"spark.sql.catalog.{CAT}", "org.apache.iceberg.spark.SparkCatalog")
         .config(f"spark.sql.catalog.{CAT}.type", "rest")
         .config(f"spark.sql.catalog.{CAT}.uri", uri)
         .config(f"spark.sql.catalog.{CAT}.credential", f"{deployment.user}:{deployment.password}")
         .config(f"spark.sql.catalog.{CAT}.oauth2-server-uri", f"{uri}/v1/oauth/tokens")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "4")
         .config("spark.driver.memory", "1g")
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def table(deployment, name):
    return f"{CAT}.{deployment.namespace}.{deployment.expected[name]}"


def totals(spark, relation):
    rows = spark.sql(f"""SELECT tenant, date_format(balancing_day, 'yyyy-MM') AS month, sum(value) AS total,
                         count(*) AS n FROM {relation} GROUP BY 1, 2""").collect()
    return {(r.tenant, r.month): (r.total, r.n) for r in rows}


def test_naive_totals_equal_msql(spark, deployment):
    assert_totals(totals(spark, table(deployment, "table")), deployment.totals("cold_naive"), "readings_versions")


def test_view_gives_msql_resolved_totals(spark, deployment):
    assert_totals(totals(spark, table(deployment, "view")), deployment.totals("cold_resolved"), "the view readings")


def test_naive_overstates_by_the_superseded_rows(spark, deployment):
    e = deployment.expected
    naive, resolved = totals(spark, table(deployment, "table")), totals(spark, table(deployment, "view"))
    assert sum(n for _, n in naive.values()) - sum(n for _, n in resolved.values()) == e["cold_superseded_rows"] > 0
    assert sum(s for s, _ in naive.values()) - sum(s for s, _ in resolved.values()) == Decimal(e["cold_superseded_sum"])


def test_decimals_keep_full_precision(spark, deployment):
    df = spark.table(table(deployment, "view"))
    assert df.schema["value"].dataType == DecimalType(18, 6)
    assert df.schema["version"].dataType == DecimalType(20, 0)
    precise = deployment.expected["precise"]
    # One scan for all the readings (a query each costs a Spark job each).
    match = " OR ".join(f"(malo_id = '{p['malo_id']}' AND obis_code = '{p['obis_code']}' AND tenant = '{p['tenant']}' "
                        f"AND `from` = timestamp'{p['from'].replace('T', ' ').rstrip('Z')}')" for p in precise)
    got = {}
    for r in spark.sql(f"""SELECT malo_id, obis_code, tenant, date_format(`from`, "yyyy-MM-dd'T'HH:mm:ss'Z'") AS f, value
                           FROM {table(deployment, 'view')} WHERE {match}""").collect():
        got.setdefault((r.malo_id, r.obis_code, r.tenant, r.f), []).append(r.value)
    for p in precise:
        values = got.get((p["malo_id"], p["obis_code"], p["tenant"], p["from"]))
        assert values == [Decimal(p["value"])], (p, values)
        assert str(values[0]) == p["value"]


def test_field_ids_read_as_written(spark, deployment):
    """The data files' column statistics are keyed by field id: every key is
    a declared field, and every required field has statistics."""
    e = deployment.expected
    want = {f["id"] for f in e["fields"]}
    required = {f["id"] for f in e["fields"] if f["required"]}
    files = spark.sql(f"SELECT column_sizes, record_count FROM {table(deployment, 'table')}.files").collect()
    assert files
    for f in files:
        keys = set(f.column_sizes)
        assert keys <= want, keys - want
        assert required <= keys, required - keys
    names = [c.name for c in spark.table(table(deployment, "table")).schema]
    assert names == [f["name"] for f in e["fields"]]


def test_partition_spec_and_sort_order_read_as_written(spark, deployment):
    e = deployment.expected
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {table(deployment, 'table')}").collect()
    parts = [r.data_type for r in rows if r.col_name.startswith("Part ")]
    spark_transform = {"identity": "{}", "month": "months({})", "day": "days({})", "year": "years({})"}
    assert parts == [spark_transform[p["transform"]].format(p["source"]) for p in e["partition_spec"]], parts
    props = dict((r.key, r.value) for r in spark.sql(f"SHOW TBLPROPERTIES {table(deployment, 'table')}").collect())
    want = ", ".join(f"{s['source']} {s['direction'].upper()} {s['null_order'].upper().replace('-', ' ')}"
                     for s in e["sort_order"])
    assert props.get("sort-order") == want, props


def warehouse_files(deployment):
    root = pathlib.Path(deployment.warehouse.removeprefix("file://"))
    return sorted(str(p) for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("statement", [
    "INSERT INTO {table} SELECT * FROM {table} LIMIT 1",
    "ALTER TABLE {table} SET TBLPROPERTIES ('interop' = 'must-not-commit')",
    "CREATE TABLE meterstore.meterstore.interop_t (x INT) USING iceberg",
    "DROP VIEW {view}",
    "CREATE NAMESPACE meterstore.interop_should_not_exist",
])
def test_writes_are_refused_and_leave_nothing(spark, deployment, statement):
    before_files = warehouse_files(deployment)
    before = spark.sql(f"SELECT max(snapshot_id) AS s FROM {table(deployment, 'table')}.snapshots").collect()[0].s
    with pytest.raises(Exception) as err:
        spark.sql(statement.format(table=table(deployment, "table"), view=table(deployment, "view"))).collect()
    assert "does not support endpoint" in str(err.value) or "405" in str(err.value), str(err.value)[:2000]
    after = spark.sql(f"SELECT max(snapshot_id) AS s FROM {table(deployment, 'table')}.snapshots").collect()[0].s
    assert after == before
    # Spark writes an INSERT's data files (and a manifest list) before the
    # refused commit and leaves them: the façade cannot stop writes to
    # storage. None of them is part of the table.
    referenced = {r.file_path.removeprefix("file:") for r in
                  spark.sql(f"SELECT file_path FROM {table(deployment, 'table')}.all_files").collect()}
    new = [f for f in warehouse_files(deployment) if f not in before_files]
    assert not [f for f in new if f in referenced], new
    if not statement.startswith("INSERT"):
        assert not new, new
