// Package proof holds the tests that check the whole store against testkit's
// independent oracle: a seeded property suite over random interleavings of
// appends, late corrections, redeliveries, archival runs and queries; crash and
// fault injection (every archival step, cold appends, PostgreSQL restarted
// mid-scan, a full warehouse, racing archivers and ingest); a corpus of
// malformed deliveries; and interop — the cold tier's files read by readers
// that did not write them, with the published resolution SQL run unmodified.
//
//	go test ./proof            # the short run CI uses (~2 minutes)
//	go test ./proof -long      # more seeded cases
package proof
