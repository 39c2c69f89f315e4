package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/mscons"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// The public samples as published are refused message by message, each
// naming the file, the message, the segment and the rule (the reasons were
// read off the files by hand: mscons/samples_test.go); nothing of them is
// stored, and the import goes on to the next file.
func TestPublicSamplesRefusedWithTheirReasons(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	dir := "../testdata/mscons/"
	files := []string{
		dir + "msconsconverter/MSCONS_TL_SAMPLE01.txt",
		dir + "msconsconverter/MSCONS_TL_Multiple_LOC_SAMPLE.txt",
		dir + "mscons-restify/mscons-message-example.txt",
	}
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, files...)
	require.NoError(t, err)
	require.Equal(t, 3, rep.Files)
	require.Equal(t, 5, rep.Batches)
	require.Len(t, rep.Refused, 5)
	require.Zero(t, rep.Rows)
	msgs := make([]string, len(rep.Refused))
	for i, r := range rep.Refused {
		require.ErrorIs(t, r, mscons.ErrRefused)
		msgs[i] = r.Error()
	}
	require.Contains(t, msgs[0], `MSCONS_TL_SAMPLE01.txt: mscons: message "1" (document 13337815E25-1), segment 3 DTM at line 1`)
	require.Contains(t, msgs[0], `format "203" carries no UTC offset`)
	require.Contains(t, msgs[0], "--time-zone Europe/Berlin", "the refusal names the way round it")
	for _, m := range msgs[1:3] {
		require.Contains(t, m, "MSCONS_TL_Multiple_LOC_SAMPLE.txt")
		require.Contains(t, m, "segment 14 PIA")
		require.Contains(t, m, "13022")
	}
	for _, m := range msgs[3:] {
		require.Contains(t, m, "mscons-message-example.txt")
		require.Contains(t, m, "9920455302123")
	}
}

// sample01Day1 is the first 80 values of SAMPLE01 (see mscons/samples_test.go)
// with its sender's check digit and its Prüfidentifikator repaired in memory,
// and its document date given its offset too when repairDate; opt resolves
// its MeLo to maloA.
func sample01Day1(t *testing.T, repairDate bool) (text string, opt ingest.Options) {
	b, err := os.ReadFile("../testdata/mscons/msconsconverter/MSCONS_TL_SAMPLE01.txt")
	require.NoError(t, err)
	text = string(b)
	repairs := map[string]string{
		"NAD+MS+1234567889111::293'": "NAD+MS+1234567889115::293'",
		"RFF+Z13:13008'":             "RFF+Z13:13018'",
	}
	if repairDate {
		repairs["DTM+137:201601121347:203'"] = "DTM+137:201601121347?+01:303'"
	}
	for old, new := range repairs {
		require.Equal(t, 1, strings.Count(text, old), old)
		text = strings.Replace(text, old, new, 1)
	}
	cut := strings.Index(text, "QTY+220:0'DTM+163:201512012000?+01:303'")
	require.Positive(t, cut)
	text = text[:cut] + "UNT+254+1'UNZ+1+13337815E25'"
	melo, err := metering.ParseMeloID("US0001062600000001000000022345671")
	require.NoError(t, err)
	malo, err := metering.ParseMaloID(maloA)
	require.NoError(t, err)
	return text, ingest.Options{MaloOf: func(m metering.MeloID) (metering.MaloID, error) {
		if m != melo {
			return metering.MaloID{}, fmt.Errorf("MeLo %s unknown", m)
		}
		return malo, nil
	}}
}

// The first 80 values of SAMPLE01 with its three defects repaired in memory
// (see mscons/samples_test.go) go in as history: 1 December 2015,
// quarter-hours, total 11.262 summed from the file's text by hand.
func TestRepairedSampleGoesIn(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	text, opt := sample01Day1(t, true)

	rep, err := ingest.Read(ctx, st.Store, opt, "sample01-day1.txt", strings.NewReader(text))
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())
	require.Equal(t, 80, rep.Rows)
	require.Equal(t, 80, rep.BulkRows)
	require.EqualValues(t, 80, scalar(t, st, `SELECT count(*) FROM readings WHERE malo_id = $1 AND obis_code = '1-1:1.10.0'`, maloA))
	require.Equal(t, "11.262000", decimalOf(t, scalar(t, st, `SELECT sum(value) FROM readings`)))
	require.Equal(t, "1234567889115:2015-12", scalar(t, st, `SELECT any_value(version_scope) FROM readings`))
	require.Equal(t, `{"MSCONS":{"sender":"1234567889115","message_ref":"13337815E25-1"}}`, scalar(t, st, `SELECT any_value(source_detail) FROM readings`))

	again, err := ingest.Read(ctx, st.Store, opt, "sample01-day1.txt", strings.NewReader(text))
	require.NoError(t, err)
	require.Equal(t, 80, again.Duplicate)
	require.False(t, again.Changed())
}

// SAMPLE01's document date as published — format 203, a local time without
// an offset — goes in with Options.TimeZone Europe/Berlin (msql import
// --time-zone): read as Berlin wall-clock time, 12:47 UTC, it derives the
// version the date with its offset written out derives; without the option
// the message is refused, naming it.
func TestSampleLocalDocumentDateInAZone(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	text, opt := sample01Day1(t, false)
	rep, err := ingest.Read(ctx, st.Store, opt, "sample01-day1.txt", strings.NewReader(text))
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1)
	require.Contains(t, rep.Refused[0].Error(), "segment 3 DTM")
	require.Contains(t, rep.Refused[0].Error(), "--time-zone Europe/Berlin")
	require.Zero(t, rep.Rows)

	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	opt.TimeZone = berlin
	rep, err = ingest.Read(ctx, st.Store, opt, "sample01-day1.txt", strings.NewReader(text))
	require.NoError(t, err)
	require.True(t, rep.OK(), rep.String())
	require.Equal(t, 80, rep.Inserted)
	// date -u -d 2016-01-12T12:47:00Z +%s = 1452602820: the document date in
	// Unix milliseconds is the version of a message without DTM+293.
	require.Equal(t, "1452602820000", scalar(t, st, `SELECT CAST(any_value(version) AS VARCHAR) FROM readings`))
	require.Equal(t, "11.262000", decimalOf(t, scalar(t, st, `SELECT sum(value) FROM readings`)))
}

// Generated deliveries — corrections, redeliveries, gaps, substituted
// values, minute and quarter-hour grids, gas — written as MSCONS and
// imported give in readings exactly the oracle's fold of the same
// deliveries, part of them as bulk history and part into PostgreSQL; a
// message cut in the middle of a later file is refused and changes nothing.
func TestGeneratedMSCONSEqualsTheOracle(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			ctx := context.Background()
			w := testkit.NewWorkload(seed)
			w.MaLos, w.Days, w.Mix = 6, 14, testkit.Mix{Strom: 2, Gas: 1}
			w.Start = time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC) // history up to 13 March, the rest hot
			w.MinuteShare, w.GapRate, w.SubstitutedRate = 0.3, 0.01, 0.05
			w.CorrectionRate, w.RedeliveryRate = 0.2, 0.2
			b, err := w.Generate()
			require.NoError(t, err)
			cfg := w.IntervalTable("readings_versions").MustBuild()
			st := storetest.Start(t, storetest.Options{Now: now}, cfg)
			oracle := testkit.NewOracle(cfg)
			_, err = oracle.RecordDeliveries(b.Deliveries...)
			require.NoError(t, err)

			var ds []metering.Delivery
			rows := 0
			for _, d := range b.Deliveries {
				ds = append(ds, d.Series.Delivery)
				rows += len(d.Series.Intervals)
			}
			var buf bytes.Buffer
			require.NoError(t, mscons.Write(&buf, ds, mscons.WriteOptions{DecimalComma: seed%2 == 0, LineBreaks: true}))
			path := filepath.Join(t.TempDir(), "deliveries.edi")
			require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))

			rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, path)
			require.NoError(t, err)
			require.True(t, rep.OK(), rep.String())
			// The bulk commit moves the watermark to 13 March, into the
			// Berlin days that begin at 23:00 UTC on the 12th: each of their
			// messages goes in as two halves, one per tier.
			mark, err := st.Store.Tables()[0].Watermark(ctx)
			require.NoError(t, err)
			across := 0
			for _, d := range ds {
				below, above := false, false
				for _, iv := range d.Intervals {
					below, above = below || iv.From.Before(mark), above || !iv.From.Before(mark)
				}
				if below && above {
					across++
				}
			}
			require.Positive(t, across)
			require.Equal(t, len(ds)+across, rep.Batches, rep.String())
			require.Equal(t, rows, rep.Rows)
			require.Positive(t, rep.BulkRows, rep.String())
			require.Positive(t, rep.HotRows, rep.String())
			require.Positive(t, rep.Duplicate, "the redeliveries")

			want := oracle.Winners(time.Time{}, time.Time{})
			res, err := st.Store.Query(ctx, `SELECT malo_id, obis_code, "from", value, quality, version FROM readings ORDER BY malo_id, obis_code, "from"`)
			require.NoError(t, err)
			require.Len(t, res.Rows, len(want))
			for i, r := range want {
				got := res.Rows[i]
				line := fmt.Sprintf("%v %v %v %v %v %v", got[0], got[1], got[2].(time.Time).UTC().Format(time.RFC3339), got[3].(interface{ String() string }).String(), got[4], got[5])
				require.Equal(t, fmt.Sprintf("%s %s %s %s %s %d", r.MaloID, r.ObisCode, r.From.Format(time.RFC3339), r.Value.String(), r.Quality, r.Version), line, "row %d", i)
			}

			// A file cut mid-message: the message is refused, nothing changes.
			cut := buf.Bytes()[:buf.Len()/2]
			rep, err = ingest.Read(ctx, st.Store, ingest.Options{}, "cut.edi", bytes.NewReader(cut))
			require.NoError(t, err)
			require.False(t, rep.OK())
			last := rep.Refused[len(rep.Refused)-1]
			require.True(t, errors.Is(last, mscons.ErrSyntax), last.Error())
			require.Zero(t, rep.Inserted+rep.Superseded+rep.Shadowed)
		})
	}
}
