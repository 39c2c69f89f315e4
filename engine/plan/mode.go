package plan

// ReadMode says which tiers a session reads.
type ReadMode uint8

const (
	// Unified reads both tiers split at the watermark (the default).
	Unified ReadMode = iota
	// Historical reads Iceberg only and never touches PostgreSQL.
	Historical
	// Operational reads the hot window only.
	Operational
	// AsOf reads Iceberg pinned to one snapshot, optionally under a version ceiling.
	AsOfMode
)

func (m ReadMode) String() string {
	switch m {
	case Historical:
		return "historical"
	case Operational:
		return "operational"
	case AsOfMode:
		return "as-of"
	}
	return "unified"
}
