package main

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore/internal/duckfmt"
	"github.com/meterstore/meterstore/metering"
)

// A plot is a result's time series: the first DATE, TIMESTAMP or TIMESTAMPTZ
// column is the time axis, every numeric column a series. With text columns
// as well (SELECT day, sparte, sum(value) … GROUP BY ALL) each distinct text
// value is a series of its own, as a pivot would make it.
type plotData struct {
	xName  string
	xKind  duckfmt.Kind
	yName  string
	series []plotSeries
}

type plotSeries struct {
	name string
	x    []float64 // seconds since the epoch, ascending
	y    []float64
}

// maxPlotSeries keeps a plot readable; more series need a WHERE.
const maxPlotSeries = 12

var errNoTimeAxis = errors.New("a plot needs a DATE, TIMESTAMP or TIMESTAMPTZ column for its time axis")

func seriesOf(t table) (plotData, error) {
	types := t.columnTypes()
	xi := -1
	var ys, labels []int
	for i, ty := range types {
		switch {
		case xi < 0 && ty.Temporal():
			xi = i
		case ty.Numeric():
			ys = append(ys, i)
		case ty.Kind == duckfmt.Varchar:
			labels = append(labels, i)
		}
	}
	if xi < 0 {
		return plotData{}, errNoTimeAxis
	}
	if len(ys) == 0 {
		return plotData{}, errors.New("a plot needs a numeric column to draw")
	}
	d := plotData{xName: t.columns[xi], xKind: types[xi].Kind}
	var ynames []string
	for _, y := range ys {
		ynames = append(ynames, t.columns[y])
	}
	d.yName = strings.Join(ynames, ", ")
	byName := map[string]*plotSeries{}
	var order []string
	for _, row := range t.rows {
		tm, ok := row[xi].(time.Time)
		if !ok {
			continue
		}
		var label []string
		for _, l := range labels {
			label = append(label, duckfmt.Formatter{}.Text(row[l], types[l]))
		}
		for _, y := range ys {
			v, ok := plotValue(row[y])
			if !ok {
				continue
			}
			name := strings.Join(label, " · ")
			if len(ys) > 1 || name == "" {
				name = strings.TrimPrefix(name+" · "+t.columns[y], " · ")
			}
			s := byName[name]
			if s == nil {
				if len(byName) == maxPlotSeries {
					return plotData{}, fmt.Errorf("the result has more than %d series (%s × %s); narrow it with WHERE", maxPlotSeries,
						strings.Join(columnsAt(t, labels), ", "), d.yName)
				}
				s = &plotSeries{name: name}
				byName[name] = s
				order = append(order, name)
			}
			s.x = append(s.x, float64(tm.UnixMicro())/1e6)
			s.y = append(s.y, v)
		}
	}
	for _, n := range order {
		s := byName[n]
		sort.Sort(byX{s})
		d.series = append(d.series, *s)
	}
	if len(d.series) == 0 {
		return plotData{}, errors.New("nothing to plot: every value or time is NULL")
	}
	return d, nil
}

func columnsAt(t table, idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, t.columns[i])
	}
	return out
}

type byX struct{ s *plotSeries }

func (b byX) Len() int           { return len(b.s.x) }
func (b byX) Less(i, j int) bool { return b.s.x[i] < b.s.x[j] }
func (b byX) Swap(i, j int) {
	b.s.x[i], b.s.x[j] = b.s.x[j], b.s.x[i]
	b.s.y[i], b.s.y[j] = b.s.y[j], b.s.y[i]
}

func plotValue(v any) (float64, bool) {
	switch x := v.(type) {
	case decimal.Decimal:
		return x.InexactFloat64(), true
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return f, true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case float32:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case int:
		return float64(x), true
	}
	return 0, false
}

// axisLocation is where the time axis is labelled: instants in Berlin local
// time, where the market's days and hours are; a DATE or a wall-clock
// TIMESTAMP as it is.
func (d plotData) axisLocation() *time.Location {
	if d.xKind == duckfmt.TimestampTZ {
		return metering.Berlin()
	}
	return time.UTC
}

func (d plotData) xTitle() string {
	if d.xKind == duckfmt.TimestampTZ {
		return d.xName + " (Europe/Berlin)"
	}
	return d.xName
}

func (d plotData) xRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range d.series {
		lo, hi = min(lo, s.x[0]), max(hi, s.x[len(s.x)-1])
	}
	if hi == lo {
		hi = lo + 1
	}
	return lo, hi
}

// timeTick is one labelled position on the time axis.
type timeTick struct {
	at    float64
	label string
}

// timeTicks are ticks at local boundaries (hours, days, weeks, months) in
// loc, about want of them over [lo, hi]: on a DST day the hours fall where
// the clock shows them, 25 or 23 to the day.
func timeTicks(lo, hi float64, loc *time.Location, want int) []timeTick {
	type step struct {
		d      time.Duration
		months int
		layout string
	}
	steps := []step{
		{d: 15 * time.Minute, layout: "15:04"}, {d: time.Hour, layout: "15:04"}, {d: 3 * time.Hour, layout: "15:04"},
		{d: 6 * time.Hour, layout: "01-02 15:04"}, {d: 12 * time.Hour, layout: "01-02 15:04"},
		{d: 24 * time.Hour, layout: "2006-01-02"}, {d: 2 * 24 * time.Hour, layout: "2006-01-02"},
		{d: 7 * 24 * time.Hour, layout: "2006-01-02"}, {months: 1, layout: "2006-01"}, {months: 3, layout: "2006-01"},
		{months: 12, layout: "2006"},
	}
	span := time.Duration((hi - lo) * float64(time.Second))
	chosen := steps[len(steps)-1]
	for _, s := range steps {
		approx := s.d
		if s.months > 0 {
			approx = time.Duration(s.months) * 30 * 24 * time.Hour
		}
		if span/approx <= time.Duration(want) {
			chosen = s
			break
		}
	}
	start := time.Unix(0, int64(lo*1e9)).In(loc)
	end := time.Unix(0, int64(hi*1e9)).In(loc)
	t := floorLocal(start, chosen.d, chosen.months)
	var out []timeTick
	for i := 0; !t.After(end) && i < 1000; i++ {
		if !t.Before(start) {
			out = append(out, timeTick{at: float64(t.UnixMicro()) / 1e6, label: t.Format(chosen.layout)})
		}
		switch {
		case chosen.months > 0:
			t = time.Date(t.Year(), t.Month()+time.Month(chosen.months), 1, 0, 0, 0, 0, loc)
		case chosen.d >= 24*time.Hour:
			t = time.Date(t.Year(), t.Month(), t.Day()+int(chosen.d/(24*time.Hour)), 0, 0, 0, 0, loc)
		case chosen.d >= time.Hour: // by the clock: 00, 06, 12, 18 also on a 25-hour day
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour()+int(chosen.d/time.Hour), 0, 0, 0, loc)
		default:
			t = t.Add(chosen.d)
		}
	}
	return out
}

// floorLocal is the last boundary of the step at or before t on loc's clock.
func floorLocal(t time.Time, d time.Duration, months int) time.Time {
	switch {
	case months > 0:
		m := (int(t.Month()) - 1) / months * months
		return time.Date(t.Year(), time.Month(m+1), 1, 0, 0, 0, 0, t.Location())
	case d >= 24*time.Hour:
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
	}
	if d >= time.Hour {
		h := int(d / time.Hour)
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour()/h*h, 0, 0, 0, t.Location())
	}
	hour := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, t.Location())
	return hour.Add(t.Sub(hour) / d * d)
}

// resample puts a series on n equal columns over [lo, hi]: the mean of the
// points in each column, the line drawn on through a column without points
// only when the points either side are no further apart than 1.5 times the
// series' usual spacing (a gap in the data stays a gap, NaN).
func resample(s plotSeries, lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	sum := make([]float64, n)
	cnt := make([]int, n)
	width := (hi - lo) / float64(n)
	col := func(x float64) int { return min(n-1, max(0, int((x-lo)/width))) }
	for i, x := range s.x {
		c := col(x)
		sum[c] += s.y[i]
		cnt[c]++
	}
	maxGap := 1.5 * medianSpacing(s.x)
	for c := range out {
		if cnt[c] > 0 {
			out[c] = sum[c] / float64(cnt[c])
			continue
		}
		out[c] = math.NaN()
		mid := lo + (float64(c)+0.5)*width
		j := sort.SearchFloat64s(s.x, mid)
		if j == 0 || j == len(s.x) || s.x[j]-s.x[j-1] > maxGap {
			continue
		}
		f := (mid - s.x[j-1]) / (s.x[j] - s.x[j-1])
		out[c] = s.y[j-1] + f*(s.y[j]-s.y[j-1])
	}
	return out
}

func medianSpacing(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	d := make([]float64, len(xs)-1)
	for i := range d {
		d[i] = xs[i+1] - xs[i]
	}
	sort.Float64s(d)
	return d[len(d)/2]
}

// dotPlot draws the last result (or QUERY's) in the terminal, or as a PNG.
func (sh *shell) dotPlot(_ []string, rest string) error {
	png, width, height := "", 0, 0
	for {
		rest = strings.TrimSpace(rest)
		flag, after, _ := strings.Cut(rest, " ")
		var err error
		switch flag {
		case "--png":
			png, rest, _ = strings.Cut(strings.TrimSpace(after), " ")
			if png == "" {
				return errors.New(".plot --png takes a file name")
			}
			continue
		case "--width", "--height":
			var v string
			v, rest, _ = strings.Cut(strings.TrimSpace(after), " ")
			n, least := 0, 20
			if flag == "--height" {
				least = 3
			}
			if _, err = fmt.Sscanf(v, "%d", &n); err != nil || n < least {
				return fmt.Errorf(".plot %s %q: a number of at least %d character cells", flag, v, least)
			}
			if flag == "--width" {
				width = n
			} else {
				height = n
			}
			continue
		}
		break
	}
	t, title := sh.last, "last result"
	if rest != "" {
		res, err := sh.collect(rest, sh.params.args())
		if err != nil {
			return err
		}
		t, title = &res, rest
	}
	if t == nil {
		return fmt.Errorf(".plot draws the last result, and there is none yet (a result of more than %d rows is printed as it is read, not kept); run a query first or give one: .plot SELECT …", windowRows)
	}
	d, err := seriesOf(*t)
	if err != nil {
		return withHint(err, `e.g. .plot SELECT "from", value FROM readings WHERE malo_id = $malo ORDER BY "from"`)
	}
	if png != "" {
		if err := drawPNG(png, d, title); err != nil {
			return err
		}
		_, err := fmt.Fprintf(sh.p.target(), "wrote %s (%d series)\n", png, len(d.series))
		return err
	}
	tw, th := sh.p.terminalSize()
	if width == 0 {
		width = tw
	}
	if height == 0 {
		height = max(8, min(20, th/2))
	}
	return drawTerminal(sh.p.target(), d, width, height, sh.p.toTerminal())
}
