#!/usr/bin/env bash
# First start from a cold clone, side by side with its floor: the cold build
# of a minimal program that embeds duckdb-go (the same release go.mod pins).
# Each side gets an empty module cache and build cache of its own
# (GOMODCACHE, GOCACHE under WORK), so nothing is shared with the machine's
# caches or between the sides. Phases:
#
#   minimal   download (go list -deps), build, first answer (SELECT 42)
#   project   go-task: download + build of the task runner (go tool task --version)
#             msql:    download (go list -deps ./cmd/msql), build (go tool task build)
#             demo:    msql demo --throwaway to its first answer (SELECT 42 on stdin)
#
# The sum of the project's phases is what a cold `go tool task demo` costs.
# Also written: the module cache's size per module (largest first) and the
# slowest compile actions of msql's build (go build -debug-actiongraph).
#
#	bash benchmarks/coldstart.sh [WORK]     # WORK defaults to /tmp/coldstart
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/coldstart}
chmod -R u+w "$work" 2>/dev/null || true
rm -rf "$work"
mkdir -p "$work"
export GOFLAGS=-modcacherw GOTOOLCHAIN=local
duck=$(cd "$root" && go list -m -f '{{.Version}}' github.com/duckdb/duckdb-go/v2)

now() { date +%s.%N; }
phase() { # phase NAME CMD...: runs CMD, prints NAME and its wall seconds
	local name=$1 t0 t1
	shift
	t0=$(now)
	"$@" >"$work/$name.log" 2>&1 || { echo "coldstart: $name failed:"; tail -20 "$work/$name.log"; exit 1; }
	t1=$(now)
	printf '%-16s %7.1f s\n' "$name" "$(echo "$t1 - $t0" | bc)"
}

echo "coldstart: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start, $(go version | cut -d' ' -f3)"

# --- the floor: a minimal duckdb-go program ---------------------------------
mkdir -p "$work/minimal"
cat >"$work/minimal/main.go" <<'GO'
package main

import (
	"database/sql"
	"fmt"

	_ "github.com/duckdb/duckdb-go/v2"
)

func main() {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		panic(err)
	}
	var n int
	if err := db.QueryRow("SELECT 42").Scan(&n); err != nil {
		panic(err)
	}
	fmt.Println(n)
}
GO
(
	cd "$work/minimal"
	export GOMODCACHE="$work/minimal-mod" GOCACHE="$work/minimal-cache"
	go mod init minimal >/dev/null 2>&1
	phase minimal:download sh -c "go get github.com/duckdb/duckdb-go/v2@$duck && go list -deps . >/dev/null"
	phase minimal:build go build -o minimal .
	phase minimal:answer ./minimal
)

# --- the project: what a fresh clone does for `go tool task demo` ------------
mkdir -p "$work/project"
git -C "$root" archive HEAD | tar -x -C "$work/project"
(
	cd "$work/project"
	export GOMODCACHE="$work/project-mod" GOCACHE="$work/project-cache" MSQL_HOME="$work/home"
	phase go-task go tool task --version
	phase msql:download go list -deps ./cmd/msql
	phase msql:build go build -debug-actiongraph="$work/msql-actions.json" -o bin/msql ./cmd/msql
	phase demo:answer sh -c 'echo "SELECT 42;" | ./bin/msql demo --throwaway'
	grep -q 42 "$work/demo:answer.log"
)
echo "coldstart: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"

echo
echo "module cache, largest modules (project):"
du -sk "$work"/project-mod/cache/download/*/*/@v 2>/dev/null "$work"/project-mod/cache/download/*/@v 2>/dev/null \
	"$work"/project-mod/cache/download/*/*/*/@v 2>/dev/null "$work"/project-mod/cache/download/*/*/*/*/@v 2>/dev/null |
	sort -rn | awk '{sub(".*/download/", "", $2); sub("/@v$", "", $2); printf "  %6.1f MB  %s\n", $1/1024, $2}' | head -15
printf '  total %s (project), %s (minimal)\n' "$(du -sh "$work/project-mod" | cut -f1)" "$(du -sh "$work/minimal-mod" | cut -f1)"

echo
echo "slowest actions of msql's cold build (wall seconds):"
python3 - "$work/msql-actions.json" <<'PY'
import json, re, sys
from datetime import datetime
def t(s):
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?", s)
    return datetime.fromisoformat(m[1]).timestamp() + float("0." + (m[2] or "0"))
acts = json.load(open(sys.argv[1]))
rows = []
for a in acts:
    if a.get("TimeStart") and a.get("TimeDone") and a.get("Mode") in ("build", "link"):
        d = t(a["TimeDone"]) - t(a["TimeStart"])
        rows.append((d, a["Mode"], a.get("Package", "")))
rows.sort(reverse=True)
for d, mode, pkg in rows[:12]:
    print(f"  {d:7.1f}  {mode:5}  {pkg}")
PY
