"""Trino (the Iceberg connector on the REST catalog) reads through the REST
façade: readings_versions and the Iceberg view readings (its trino dialect).
Resolved totals through the view equal msql's, the naive sum over the table
overstates by exactly the superseded rows, decimals keep full precision, and
writes are refused without a new snapshot.

Trino is not installed by `go tool task interop:setup`: io.trino:trino-server
is an 821 MB archive that needs Java 24 or later, beyond what CI's time budget
carries beside Spark. To run these tests, unpack it and name it:
INTEROP_TRINO_HOME=<unpacked trino-server> (and INTEROP_TRINO_JAVA_HOME, default
/usr/lib/jvm/temurin-25-jdk-amd64). The server is started here, single node,
with the Iceberg plugin only, and stopped after the module."""

import os
import pathlib
import socket
import subprocess
import time
from decimal import Decimal

import pytest
import requests

from conftest import assert_totals

TRINO_HOME = pathlib.Path(os.environ.get("INTEROP_TRINO_HOME", "/nonexistent"))
JAVA_HOME = pathlib.Path(os.environ.get("INTEROP_TRINO_JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"))
CAT = "meterstore"  # the view's default-catalog: its SQL resolves readings_versions there
START_TIMEOUT = 600  # seconds; a loaded 2-core machine takes minutes

pytestmark = pytest.mark.skipif(
    not (TRINO_HOME / "lib").is_dir() or not (JAVA_HOME / "bin" / "java").is_file(),
    reason="Trino not installed: set INTEROP_TRINO_HOME to an unpacked io.trino:trino-server (476) and "
           "INTEROP_TRINO_JAVA_HOME to a JDK >= 24 (see docs/interop.md)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(etc, deployment, port):
    (etc / "catalog").mkdir(parents=True)
    plugins = etc / "plugin"
    plugins.mkdir()
    (plugins / "iceberg").symlink_to(TRINO_HOME / "plugin" / "iceberg")
    (etc / "config.properties").write_text("\n".join([
        "coordinator=true", "node-scheduler.include-coordinator=true",
        f"http-server.http.port={port}", f"discovery.uri=http://127.0.0.1:{port}",
        "node.environment=interop", "node.id=interop",
        f"plugin.dir={plugins}", f"catalog.config-dir={etc / 'catalog'}",
        "query.max-memory=1GB", "query.max-memory-per-node=512MB", ""]))
    uri = deployment.rest_uri
    (etc / "catalog" / f"{CAT}.properties").write_text("\n".join([
        "connector.name=iceberg", "iceberg.catalog.type=rest", f"iceberg.rest-catalog.uri={uri}",
        "iceberg.rest-catalog.security=OAUTH2",
        f"iceberg.rest-catalog.oauth2.credential={deployment.user}:{deployment.password}",
        f"iceberg.rest-catalog.oauth2.server-uri={uri}/v1/oauth/tokens",
        "iceberg.rest-catalog.view-endpoints-enabled=true",
        "fs.native-local.enabled=true", "local.location=/", ""]))


@pytest.fixture(scope="module")
def trino(deployment, tmp_path_factory):
    etc = tmp_path_factory.mktemp("trino")
    port = free_port()
    write_config(etc, deployment, port)
    log = open(etc / "server.log", "w")
    proc = subprocess.Popen([str(JAVA_HOME / "bin" / "java"), "-Xmx1536M", "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError",
                             "-Djdk.attach.allowAttachSelf=true", "-XX:+EnableDynamicAgentLoading", "-Dfile.encoding=UTF-8",
                             f"-Dconfig={etc / 'config.properties'}", "-cp", str(TRINO_HOME / "lib" / "*"),
                             "io.trino.server.TrinoServer"], cwd=etc, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while True:
            assert proc.poll() is None, f"Trino exited ({proc.returncode}): {etc / 'server.log'}"
            assert time.monotonic() < deadline, f"Trino not up in {START_TIMEOUT} s: {etc / 'server.log'}"
            try:
                if not requests.get(f"{base}/v1/info", timeout=5).json()["starting"]:
                    break
            except (requests.ConnectionError, requests.Timeout, ValueError, KeyError):
                pass
            time.sleep(2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


class TrinoError(Exception):
    pass


def query(base, deployment, sql):
    """Trino's client protocol: POST the statement, follow nextUri; (column names, rows)."""
    headers = {"X-Trino-User": deployment.user, "X-Trino-Catalog": CAT, "X-Trino-Schema": deployment.namespace}
    r = requests.post(f"{base}/v1/statement", data=sql.encode(), headers=headers, timeout=60).json()
    cols, rows = None, []
    while True:
        if "error" in r:
            raise TrinoError(r["error"].get("message", r["error"]))
        cols = cols or ([c["name"] for c in r["columns"]] if "columns" in r else None)
        rows += r.get("data", [])
        if "nextUri" not in r:
            return cols, rows
        r = requests.get(r["nextUri"], headers=headers, timeout=300).json()


def totals(base, deployment, relation):
    _, rows = query(base, deployment, f"""SELECT tenant, date_format(balancing_day, '%Y-%m'), sum(value), count(*)
                                         FROM {relation} GROUP BY 1, 2""")
    return {(t, m): (Decimal(s), n) for t, m, s, n in rows}


def table(deployment, name):
    return f'{CAT}."{deployment.namespace}"."{deployment.expected[name]}"'


def test_naive_totals_equal_msql(trino, deployment):
    assert_totals(totals(trino, deployment, table(deployment, "table")), deployment.totals("cold_naive"), "Trino: readings_versions")


def test_view_gives_msql_resolved_totals(trino, deployment):
    assert_totals(totals(trino, deployment, table(deployment, "view")), deployment.totals("cold_resolved"), "Trino: the view readings")


def test_naive_overstates_by_the_superseded_rows(trino, deployment):
    e = deployment.expected
    naive, resolved = totals(trino, deployment, table(deployment, "table")), totals(trino, deployment, table(deployment, "view"))
    assert sum(n for _, n in naive.values()) - sum(n for _, n in resolved.values()) == e["cold_superseded_rows"] > 0
    assert sum(s for s, _ in naive.values()) - sum(s for s, _ in resolved.values()) == Decimal(e["cold_superseded_sum"])


def test_decimals_keep_full_precision(trino, deployment):
    _, described = query(trino, deployment, f"DESCRIBE {table(deployment, 'view')}")
    types = {column: typ for column, typ, *_ in described}
    assert (types["value"], types["version"]) == ("decimal(18,6)", "decimal(20,0)"), types
    precise = deployment.expected["precise"]
    match = " OR ".join(f"""(malo_id = '{p["malo_id"]}' AND obis_code = '{p["obis_code"]}' AND tenant = '{p["tenant"]}'
                           AND "from" = from_iso8601_timestamp('{p["from"]}'))""" for p in precise)
    _, rows = query(trino, deployment, f"""SELECT malo_id, obis_code, tenant,
                    to_iso8601(CAST("from" AT TIME ZONE 'UTC' AS timestamp(0))) || 'Z', CAST(value AS varchar)
                    FROM {table(deployment, 'view')} WHERE {match}""")
    got = {}
    for m, o, t, f, v in rows:
        got.setdefault((m, o, t, f), []).append(v)
    for p in precise:
        assert got.get((p["malo_id"], p["obis_code"], p["tenant"], p["from"])) == [p["value"]], p


@pytest.mark.parametrize("statement", [
    "INSERT INTO {table} SELECT * FROM {table} LIMIT 1",
    "DELETE FROM {table} WHERE tenant = 'nobody'",
    "CREATE TABLE meterstore.\"meterstore\".interop_t (x INTEGER)",
    "DROP VIEW {view}",
])
def test_writes_are_refused(trino, deployment, statement):
    snapshots = f'{CAT}."{deployment.namespace}"."{deployment.expected["table"]}$snapshots"'
    _, before = query(trino, deployment, f"SELECT max(snapshot_id) FROM {snapshots}")
    with pytest.raises(TrinoError) as err:
        query(trino, deployment, statement.format(table=table(deployment, "table"), view=table(deployment, "view")))
    assert "405" in str(err.value) or "read-only" in str(err.value) or "not support" in str(err.value), str(err.value)[:2000]
    _, after = query(trino, deployment, f"SELECT max(snapshot_id) FROM {snapshots}")
    assert after == before
