package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
)

// .extensions says what loaded and which path each tier takes; .attach hot
// reads PostgreSQL's own tables through the postgres extension, read-only,
// and never in a scoped session; without the extensions the shell says so
// and answers through the Go paths.
func TestShellExtensionsAndAttachHot(t *testing.T) {
	dep := tinyDemo(t)
	without := []string{engine.EnvExtensionDirectory + "="}
	r := msqlEnv(t, without, "", append(dep, "-c", ".extensions", "-c", ".attach hot")...)
	require.Contains(t, r.stdout, "hot tier through meter_hot_scan, cold tier through read_parquet")
	require.Contains(t, r.stdout, "extension directory: none")
	require.Contains(t, r.stderr, "postgres_scanner is not loaded")

	dir, err := filepath.Abs(filepath.Join("..", "..", ".cache", "duckdb-extensions"))
	require.NoError(t, err)
	if x := os.Getenv(engine.EnvExtensionDirectory); x != "" {
		dir = x
	}
	if _, err := os.Stat(filepath.Join(dir, "installed")); err != nil {
		t.Skip("DuckDB's extensions are not installed: go tool task extensions")
	}
	with := []string{engine.EnvExtensionDirectory + "=" + dir}
	r = msqlEnv(t, with, "", append(dep, "--format", "csv", "-c", ".extensions", "-c", ".attach hot",
		"-c", "SELECT count(*) > 0 AS has_rows FROM hot.public.readings_versions", "-c", ".detach",
		"-c", "SELECT count(*) > 0 AS through_engine FROM readings")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "loaded: postgres_scanner")
	require.Contains(t, r.stdout, "loaded: iceberg")
	require.Contains(t, r.stdout, "PostgreSQL attached read-only as hot")
	require.Contains(t, r.stdout, "has_rows\ntrue\n")
	require.Contains(t, r.stdout, "through_engine\ntrue\n")

	r = msqlEnv(t, with, "", append(dep, "-c", ".attach hot", "-c", "DELETE FROM hot.public.readings_versions")...)
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "read-only")
	r = msqlEnv(t, with, "", append(dep, "--format", "csv", "-c", "SELECT count(*) > 0 AS kept FROM readings_versions")...)
	require.Contains(t, r.stdout, "kept\ntrue\n")

	r = msqlEnv(t, with, "", append(dep, "--scope", "tenant=tenant01", "-c", ".attach hot")...)
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, engine.ErrConfined.Error())
}

// msql install-extensions runs DuckDB's INSTALL in msql's own DuckDB from a
// repository — here the local one go tool task extensions fills, as a mirror
// would be — into a fresh directory the shell then loads the extensions from.
func TestInstallExtensionsCommand(t *testing.T) {
	r := msqlEnv(t, []string{engine.EnvExtensionDirectory + "="}, "", "install-extensions")
	require.Equal(t, 2, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "no extension directory: pass --dir")

	repo, err := filepath.Abs(filepath.Join("..", "..", ".cache", "duckdb-extensions"))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(repo, "installed")); err != nil {
		t.Skip("no local repository: go tool task extensions")
	}
	dir := t.TempDir()
	r = msql(t, "", "install-extensions", "--dir", dir, "--repository", repo)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "installed into "+dir+": postgres_scanner, avro, iceberg, httpfs")

	r = msqlEnv(t, []string{engine.EnvExtensionDirectory + "=" + dir}, "", append(tinyDemo(t), "-c", ".extensions")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "loaded: postgres_scanner")
	require.Contains(t, r.stdout, "loaded: iceberg")
}
