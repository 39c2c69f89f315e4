// Package embedded is the embedded default deployment: the private PostgreSQL
// cluster (hot tier and Iceberg SQL catalog) and the file:// Iceberg warehouse
// under one data directory, $MSQL_HOME, that msql opens when it is given no
// configuration, no --dsn and no --warehouse. A reporting job uses it to read
// what the shell shows without a DSN of its own:
//
//	d, err := embedded.Open(ctx, embedded.Options{}) // reuses a running cluster, else starts one
//	defer d.Close()                                  // stops it if no other process uses it
//	pool, err := pgxpool.New(ctx, d.DSN)
//	cat, err := catalog.Open(ctx, catalog.Options{DSN: d.DSN, Warehouse: d.Warehouse, Pool: pool})
//	st, err := store.Open(ctx, store.Config{Pool: pool, Catalog: cat, Tables: []meterstore.TableConfig{embedded.Table()}})
//
// Every process sharing a home uses one cluster: whichever starts it, it runs
// in a session of its own until the last process using it closes (the kernel
// counts the users: each holds home/pg.users locked shared), so msql serve
// keeps its PostgreSQL when the shell that started it quits. Find only looks:
// the DSN of a cluster already running under a home, or ErrNotRunning; Stop
// stops one no process uses (msql --keep-running leaves one running, as does
// a process killed while it used it), and otherwise refuses, naming each user
// by pid and command line (each leaves them in home/pg.users.d). The cluster runs from the system's
// PostgreSQL binaries; nothing is downloaded.
package embedded
