// Package catalog is MeterStore's cold tier: Apache Iceberg tables (format v2)
// written and planned with iceberg-go, their catalog kept in the deployment's
// PostgreSQL (iceberg-go's SQL catalog) or a REST catalog.
//
// The tiering watermark lives in the summary of the Iceberg snapshot that adds
// the data it describes ("meterstore.tiering_watermark", RFC 3339 UTC), so the
// rows and the watermark become durable together or not at all. A snapshot
// without the property (written by an out-of-band tool) is skipped by walking
// the parent chain.
//
// Files are written with arrow-go's Parquet writer (writer.go: page index,
// sized bloom filters) and registered with iceberg-go, in files per
// (partition, version) — bounded by MaxVersionFilesPerPartition, a new file
// every maxRowGroupsPerFile row groups — so that
// version statistics let the engine skip resolution; rows reach each file in
// the order the source yields them (the hot tier's keyset order: malo_id,
// obis_code, from). The table's sort order declares that order.
//
// Every cold write path refuses what PostgreSQL's constraints refuse on the
// hot tier (rules.go): a late correction (AppendCold) and a history load
// (CommitHistory) are checked against the rows stored over the intervals they
// write — only files whose bounds admit such a row are read — and among
// themselves; compaction checks its inputs. The refusals wrap the root
// package's meterstore.ErrOverlap, ErrSecondOperator and ErrRestatement, as
// the hot tier's do.
//
// Compaction (compact.go) merges a month's files in a partition — a closed
// month once quiet, the open month's settled days as they accumulate —
// whatever their versions, by a k-way merge of the sorted files into files
// sorted by the resolution key: the current row of every key in files marked
// keys-unique, the rows they supersede in a file marked superseded by them
// (footer marks, marks.go). One commit per partition replaces the files and
// carries the watermark unchanged.
//
// Metadata does not grow with every commit where planning reads it: appends
// merge the snapshot's manifests once there are ManifestsToMerge of them (the
// table properties commit.manifest-merge.enabled and
// commit.manifest.min-count-to-merge; a table created before gets them with
// its next commit), and a compaction that left more ends with an empty append
// that merges them. Snapshots stay in the metadata file for their retention
// (as-of reads need them), so a handle reads that file again only when the
// catalog names a new one (Refresh), and after its own commit it holds the
// table read back from the catalog rather than the one iceberg-go's commit
// returns, which keeps every earlier version of the metadata reachable.
package catalog
