package store_test

import (
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// TestIcebergDeleteFilesAreRefused: another engine deletes rows of the cold
// tier with a position delete (PyIceberg's merge-on-read) or an equality
// delete (Spark, Flink). Iceberg's own reader then no longer returns them, but
// MeterStore reads data files whole: planning (queries, compaction) refuses
// the table with ErrDeleteFiles, naming the delete files, instead of counting
// the deleted rows as live.
func TestIcebergDeleteFilesAreRefused(t *testing.T) {
	for _, kind := range []string{"position", "equality"} {
		t.Run("deletes="+kind, func(t *testing.T) {
			e := open(t, nil, intervalTable(t, nil))
			tbl, _ := e.st.Table("readings_versions")
			_, err := e.st.Append(e.ctx, mk(t, dl{from: day0, value: "1"}), mk(t, dl{malo: maloB, from: day0, value: "2"}),
				mk(t, dl{from: day0.Add(96 * time.Hour), value: "9"}))
			require.NoError(t, err)
			e.archiveThrough(t, tbl, day0.Add(24*time.Hour))
			require.Equal(t, int64(12), e.scalar(t, `SELECT count(*) FROM readings`))

			var named string
			if kind == "position" {
				storetest.DeletePositions(t, e.ctx, tbl.Cold(), iceberg.EqualTo(iceberg.Reference("malo_id"), maloB))
				named = "(position deletes)"
			} else {
				named = storetest.DeleteEqual(t, e.ctx, tbl.Cold(), maloB)
			}
			live, err := tbl.Cold().ReadRows(e.ctx, catalog.PlanRequest{})
			require.NoError(t, err)
			require.Len(t, live, 4, "Iceberg's own reader applies the deletes")

			_, err = e.st.Query(e.ctx, `SELECT count(*) FROM readings`)
			require.ErrorIs(t, err, catalog.ErrDeleteFiles, "the deleted rows must not be counted as live")
			require.Contains(t, err.Error(), named)
			_, err = tbl.Cold().Compact(e.ctx, catalog.CompactOptions{Force: true})
			require.ErrorIs(t, err, catalog.ErrDeleteFiles, "compaction must not rewrite around the deletes")
			_, err = e.st.Query(e.ctx, `SELECT count(*) FROM readings WHERE "from" >= $1`, day0.Add(24*time.Hour))
			require.NoError(t, err, "a read the watermark keeps in the hot tier plans no cold file")
		})
	}
}
