"""Shared fixtures of the interop programs: the deployment the harness stood up
(INTEROP_* environment variables) and the values msql and the Go oracle
computed on it (INTEROP_EXPECTED). Run through `go tool task interop`."""

import json
import os
from decimal import Decimal

import pytest


class Deployment:
    def __init__(self):
        e = os.environ
        missing = [k for k in ("INTEROP_EXPECTED", "INTEROP_PG_PORT", "INTEROP_REST_URI") if k not in e]
        if missing:
            raise RuntimeError(f"{', '.join(missing)} not set: run through `go tool task interop` "
                               "(or `go run ./interop/harness -keep` and export its lines)")
        self.env = e
        with open(e["INTEROP_EXPECTED"]) as f:
            self.expected = json.load(f)
        self.pg_host = e["INTEROP_PG_HOST"]
        self.pg_port = int(e["INTEROP_PG_PORT"])
        self.flight_port = int(e["INTEROP_FLIGHT_PORT"])
        self.rest_uri = e["INTEROP_REST_URI"]
        self.user, self.password = e["INTEROP_USER"], e["INTEROP_PASSWORD"]
        self.scoped_user, self.scoped_password = e["INTEROP_SCOPED_USER"], e["INTEROP_SCOPED_PASSWORD"]
        self.scoped_tenant = e["INTEROP_SCOPED_TENANT"]
        self.catalog_dsn = e["INTEROP_CATALOG_DSN"]
        self.catalog_name = e["INTEROP_CATALOG_NAME"]
        self.namespace = e["INTEROP_NAMESPACE"]
        self.warehouse = e["INTEROP_WAREHOUSE"]
        self.spec = e["INTEROP_SPEC"]
        self.work = e["INTEROP_WORK"]

    def totals(self, key):
        """Expected totals as {(tenant, month): (Decimal sum, rows)}."""
        return {(t["tenant"], t["month"]): (Decimal(t["sum"]), t["rows"]) for t in self.expected[key]}

    def pg_dsn(self, user=None, password=None):
        return (f"host={self.pg_host} port={self.pg_port} dbname=meterstore "
                f"user={user or self.user} password={password or self.password} sslmode=disable")


@pytest.fixture(scope="session")
def deployment():
    return Deployment()


def resolve(rows, key=("malo_id", "obis_code", "from", "tenant", "version_scope")):
    """The latest version per merge key and version_scope: MeterStore's
    resolution rule as a plain fold over the rows (dicts), not SQL."""
    best = {}
    for r in rows:
        k = tuple(r[c] for c in key)
        if k not in best or r["version"] > best[k]["version"]:
            best[k] = r
    return list(best.values())


def totals_of(rows):
    """{(tenant, balancing month): (sum, rows)} of rows (dicts with tenant,
    balancing_day, value)."""
    out = {}
    for r in rows:
        k = (r["tenant"], r["balancing_day"].strftime("%Y-%m"))
        s, n = out.get(k, (Decimal(0), 0))
        out[k] = (s + r["value"], n + 1)
    return out


def assert_totals(got, want, what):
    """Exact equality, every (tenant, month) named on a difference."""
    diffs = [f"{k}: got {got.get(k)} want {want.get(k)}" for k in sorted(set(got) | set(want)) if got.get(k) != want.get(k)]
    assert not diffs, f"{what}: totals differ from msql's:\n  " + "\n  ".join(diffs)
