// Package testkit is MeterStore's proof kit, published so a deployment can
// check the store against its own table configuration and volumes: a seeded
// workload generator and an independent oracle.
//
// # Workload
//
// A Workload describes synthetic but realistic German metering traffic: valid
// MaLo-IDs (check digit computed by asking metering.ParseMaloID), real BDEW
// operator codes, all four Sparten with their units, 15- and 1-minute grids,
// a range spanning a DST change, household load and PV feed-in shapes, gas
// and heat with a daily shape, 1 % SUBSTITUTED values, rare late corrections
// at the next version, gaps, identical redeliveries, tenants and point-table
// Zählerstände. The seed alone replays a workload: every random draw comes
// from math/rand/v2 PCG streams derived from Workload.Seed, never from the
// clock.
//
//	b, err := testkit.NewWorkload(0x5EED).Generate()
//	for _, d := range b.Deliveries { /* ingest d.Series in this order */ }
//
// # Oracle
//
// Oracle is a deliberately different implementation of resolution: a Go map
// fold over the rows Encode produces, keeping every version of every reading
// and picking the latest version per (merge key, version_scope) at query
// time, under optional version and recorded_at ceilings. It never runs SQL, so
// it cannot share a mistake with resolution.sql. It answers row counts, sums
// (resolved and naive), sums per MaLo/channel/balancing day, the winning rows,
// completeness and the readings known at an instant.
//
// # A store to check
//
// testkit/storetest starts a throwaway store — a real PostgreSQL from the
// system's binaries (testkit/pgtest) and a file:// Iceberg warehouse — for a
// deployment's own table declaration; its Example feeds it a workload and
// compares the answers with the oracle.
//
// # The rules both tiers hold
//
// testkit/rulecases is the one list of writes the hot tier's constraints
// refuse, with controls they accept: hot's tests run it through PostgreSQL,
// store's through every cold write path (a late correction, a history load).
package testkit
