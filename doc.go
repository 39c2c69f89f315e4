// Package meterstore is the storage contract both tiers share: the table
// declaration (TableSpec, validated once into TableConfig), the physical columns
// and their stable Iceberg field ids, the merge key, the encoder that turns a
// metering.Delivery into stored rows (the only writer of balancing_day), and the
// published resolution statement rendered per table from the embedded
// resolution.sql.
//
// hot/ and catalog/ both import this package and never each other, so the primary
// key, the ON CONFLICT target, the cold partitioning and the resolution PARTITION
// BY are derived from one MergeKey and cannot disagree (design invariant 4).
//
//	cfg, err := meterstore.TableSpec{
//		Name:    "readings_versions",
//		Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}},
//	}.Build()
//	fmt.Println(cfg.ResolvedName(), cfg.MergeKey()) // readings [malo_id obis_code from tenant]
package meterstore
