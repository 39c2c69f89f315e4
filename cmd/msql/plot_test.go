package main

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/metering"
)

func unix(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

// The time axis is labelled on Berlin's clock: on the 25-hour day of the
// October change the six-hourly ticks are at 00, 06, 12 and 18 local (22, 05,
// 11 and 17 UTC), and hourly ticks skip no hour but the repeated one.
func TestTimeTicksFollowBerlinClock(t *testing.T) {
	berlin := metering.Berlin()
	lo := time.Date(2025, 10, 25, 22, 0, 0, 0, time.UTC)
	hi := time.Date(2025, 10, 26, 22, 45, 0, 0, time.UTC)
	ticks := timeTicks(unix(lo), unix(hi), berlin, 6)
	var got []string
	for _, tk := range ticks {
		got = append(got, time.Unix(int64(tk.at), 0).UTC().Format("15:04")+"="+tk.label)
	}
	require.Equal(t, []string{"22:00=10-26 00:00", "05:00=10-26 06:00", "11:00=10-26 12:00", "17:00=10-26 18:00"}, got)

	hourly := timeTicks(unix(lo), unix(hi), berlin, 30)
	require.Len(t, hourly, 24, "25 hours, the repeated 02:00 once")
	// The spring day has 23 hours and no 02:00.
	spring := timeTicks(unix(time.Date(2026, 3, 28, 23, 0, 0, 0, time.UTC)), unix(time.Date(2026, 3, 29, 21, 45, 0, 0, time.UTC)), berlin, 30)
	var labels []string
	for _, tk := range spring {
		labels = append(labels, tk.label)
	}
	require.Len(t, labels, 23)
	require.Equal(t, []string{"00:00", "01:00", "03:00"}, labels[:3])
	// Days start at local midnight.
	days := timeTicks(unix(lo), unix(lo.AddDate(0, 0, 9)), berlin, 10)
	require.Equal(t, "2025-10-26", days[0].label)
	require.Equal(t, unix(lo), days[0].at)
	require.Equal(t, unix(time.Date(2025, 10, 26, 23, 0, 0, 0, time.UTC)), days[1].at, "27 Oct starts at 23:00 UTC (CET)")
}

// A column without readings between readings at the usual spacing is drawn
// through; a gap longer than 1.5 spacings stays a gap.
func TestResampleKeepsGaps(t *testing.T) {
	s := plotSeries{x: []float64{0, 10, 20, 30, 80, 88, 90}, y: []float64{1, 2, 3, 4, 5, 6, 7}}
	got := resample(s, 0, 90, 18)
	require.Equal(t, 1.0, got[0])
	require.InDelta(t, 1.75, got[1], 1e-9, "interpolated between 1 and 2 at the column's middle, x = 7.5")
	for c := 7; c < 16; c++ {
		require.True(t, math.IsNaN(got[c]), "column %d lies in the gap 30…80", c)
	}
	require.Equal(t, 6.5, got[17], "mean of the points in the last column, 85…90")
}

func TestSeriesOfPivotsTextColumns(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2025, 10, d, 0, 0, 0, 0, time.UTC) }
	tb := table{columns: []string{"balancing_day", "sparte", "total"}, types: []string{"DATE", "VARCHAR", "DECIMAL(38,6)"},
		rows: [][]any{{day(2), "STROM", decimal.RequireFromString("2.5")}, {day(1), "STROM", decimal.RequireFromString("1.5")},
			{day(1), "GAS", decimal.RequireFromString("7")}, {day(2), "GAS", nil}}}
	d, err := seriesOf(tb)
	require.NoError(t, err)
	require.Len(t, d.series, 2)
	require.Equal(t, "STROM", d.series[0].name)
	require.Equal(t, []float64{unix(day(1)), unix(day(2))}, d.series[0].x, "sorted by time")
	require.Equal(t, []float64{1.5, 2.5}, d.series[0].y)
	require.Equal(t, plotSeries{name: "GAS", x: []float64{unix(day(1))}, y: []float64{7}}, d.series[1])
	require.Equal(t, time.UTC, d.axisLocation(), "a DATE is labelled as it is")

	_, err = seriesOf(table{columns: []string{"n"}, types: []string{"BIGINT"}, rows: [][]any{{int64(1)}}})
	require.ErrorIs(t, err, errNoTimeAxis)
}

// .plot in the terminal: a load curve over the 25-hour day, its axis on
// Berlin's clock (golden); .plot --png writes a report chart.
func TestPlotCommand(t *testing.T) {
	const dstDay = `SELECT ts AS "from", (0.1 + 0.05 * sin(extract(epoch FROM ts) / 3600 * pi() / 6))::DECIMAL(18,6) AS value FROM generate_series(TIMESTAMPTZ '2025-10-25 22:00:00+00', TIMESTAMPTZ '2025-10-26 22:45:00+00', INTERVAL 15 MINUTE) g(ts)`
	r := msql(t, dstDay+";\n.plot --width 100 --height 10\n", "--scratch", "--format", "csv")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "2025-10-26 22:45:00+00,0.069562\n", "the query's rows print first")
	golden(t, "plot_dst_day", r.stdout[len(r.stdout)-len(plotTail(r.stdout)):])

	file := filepath.Join(t.TempDir(), "load.png")
	r = msql(t, "", "--scratch", "-c", ".plot --png "+file+" "+dstDay)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "wrote "+file+" (1 series)\n", r.stdout)
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.Equal(t, 1056, img.Bounds().Dx())
	require.Equal(t, 432, img.Bounds().Dy())
	coloured := 0
	for y := 0; y < img.Bounds().Dy(); y += 2 {
		for x := 0; x < img.Bounds().Dx(); x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			if r != g || g != b { // the series' line; text and grid are grey
				coloured++
			}
		}
	}
	require.Greater(t, coloured, 200, "the line is drawn")

	r = msql(t, "", "--scratch", "-c", ".plot")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "there is none yet")
	r = msql(t, "", "--scratch", "-c", ".plot SELECT 1 AS n")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, errNoTimeAxis.Error())
}

// plotTail is the plot at the end of out: from the first line with the y axis.
func plotTail(out string) string {
	for i := 0; i < len(out); i++ {
		if (i == 0 || out[i-1] == '\n') && len(out) > i+12 && containsAxis(out[i:]) {
			return out[i:]
		}
	}
	return ""
}

func containsAxis(s string) bool {
	line := s
	for i := range s {
		if s[i] == '\n' {
			line = s[:i]
			break
		}
	}
	for _, r := range line {
		if r == '┤' || r == '┼' {
			return true
		}
	}
	return false
}
