"""psql, the real binary, against pgwire: \\d, \\dt listing readings, \\d NAME,
\\df meter_*, \\l, and tab completion of relation and column names (psql under
a pseudo-terminal, as a person types)."""

import glob
import os
import shutil
import subprocess

import pexpect
import pytest


def psql_binary():
    found = shutil.which("psql") or next(iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"), reverse=True)), None)
    assert found, "no psql: install postgresql-client"
    return found


def env(d, user=None, password=None):
    return dict(os.environ, PGPASSWORD=password or d.password, PGUSER=user or d.user, PGHOST=d.pg_host,
                PGPORT=str(d.pg_port), PGDATABASE="meterstore", PGSSLMODE="disable", PSQL_HISTORY="/dev/null",
                PSQLRC="/dev/null", TERM="dumb", LC_ALL="C.UTF-8")


def psql(d, command, user=None, password=None):
    r = subprocess.run([psql_binary(), "-X", "-v", "ON_ERROR_STOP=1", "-c", command], env=env(d, user, password),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "ERROR" not in r.stderr, f"psql {command}: {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout


def relation_lines(out):
    return [line.split("|")[1].strip() for line in out.splitlines() if line.strip().startswith("public")]


def test_backslash_d_lists_the_relations(deployment):
    assert relation_lines(psql(deployment, "\\d")) == ["readings", "readings_versions"]


def test_backslash_dt_lists_readings(deployment):
    assert relation_lines(psql(deployment, "\\dt")) == ["readings", "readings_versions"]


def test_backslash_d_name_describes_the_columns(deployment):
    out = psql(deployment, "\\d readings")
    assert 'Table "public.readings"' in out, out
    for f in deployment.expected["fields"]:
        line = next((l for l in out.splitlines() if l.strip().startswith(f["name"] + " ")), None)
        assert line, (f["name"], out)
        assert ("not null" in line) == f["required"], line
    assert "numeric(18,6)" in out and "timestamp with time zone" in out


def test_backslash_df_lists_the_meter_functions(deployment):
    out = psql(deployment, "\\df meter_*")
    names = {line.split("|")[1].strip() for line in out.splitlines() if line.count("|") >= 4 and "meter_" in line}
    assert {"meter_balancing_day", "meter_balancing_month", "meter_gas_day"} <= names, out


def test_backslash_l_lists_the_database(deployment):
    out = psql(deployment, "\\l")
    assert any(line.strip().startswith("meterstore ") for line in out.splitlines()), out


def test_scoped_user_lists_the_same_relations(deployment):
    out = psql(deployment, "\\dt", deployment.scoped_user, deployment.scoped_password)
    assert relation_lines(out) == ["readings", "readings_versions"]
    out = psql(deployment, "SELECT DISTINCT tenant FROM readings_versions", deployment.scoped_user, deployment.scoped_password)
    assert deployment.scoped_tenant in out and not any(t in out for t in deployment.expected["tenants"] if t != deployment.scoped_tenant)


@pytest.mark.parametrize("typed,completed", [
    ("SELECT * FROM readings_v", "readings_versions"),
    ("SELECT * FROM readings WHERE bal", "balancing_day"),
    ("SELECT * FROM readings WHERE version_s", "version_scope"),
])
def test_tab_completion(deployment, typed, completed):
    p = pexpect.spawn(psql_binary(), ["-X"], env=env(deployment), encoding="utf-8", timeout=20)
    try:
        p.expect("meterstore=>")
        p.send(typed + "\t")
        p.expect(completed[len(typed.split()[-1]):])
        p.sendcontrol("c")
        p.expect("meterstore=>")
    finally:
        p.sendline("\\q")
        p.close(force=True)
