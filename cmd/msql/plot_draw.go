package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/guptarohit/asciigraph"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// drawTerminal draws d in width × height character cells with asciigraph,
// and under it a time axis whose ticks fall on the local clock's boundaries.
func drawTerminal(w io.Writer, d plotData, width, height int, colour bool) error {
	lo, hi := d.xRange()
	yLabel := yLabelWidth(d)
	cols := max(10, width-yLabel-2)
	data := make([][]float64, len(d.series))
	var names []string
	for i, s := range d.series {
		data[i] = resample(s, lo, hi, cols)
		names = append(names, s.name)
	}
	opts := []asciigraph.Option{asciigraph.Height(max(3, height)), asciigraph.Precision(precisionFor(d)),
		asciigraph.Caption(d.yName + " by " + d.xTitle())}
	if len(d.series) > 1 {
		opts = append(opts, asciigraph.SeriesLegends(names...))
	}
	if colour {
		opts = append(opts, asciigraph.SeriesColors(seriesColours[:len(d.series)]...))
	}
	graph := asciigraph.PlotMany(data, opts...)
	if !colour { // the legend's swatches carry colour codes even uncoloured
		graph = stripANSI(graph)
	}
	lines := strings.Split(graph, "\n")
	offset := axisColumn(lines)
	if offset < 0 {
		_, err := fmt.Fprintln(w, graph)
		return err
	}
	// The axis goes under the plot, above the caption and legend.
	plotLines := 0
	for plotLines < len(lines) && strings.ContainsAny(lines[plotLines], "┤┼") {
		plotLines++
	}
	axis := timeAxis(lo, hi, cols, offset+1, d.axisLocation())
	out := append(append(append([]string{}, lines[:plotLines]...), axis...), lines[plotLines:]...)
	_, err := fmt.Fprintln(w, strings.Join(out, "\n"))
	return err
}

var seriesColours = []asciigraph.AnsiColor{asciigraph.Blue, asciigraph.Red, asciigraph.Green, asciigraph.Goldenrod,
	asciigraph.DarkViolet, asciigraph.DarkCyan, asciigraph.Chocolate, asciigraph.DeepPink, asciigraph.Olive,
	asciigraph.SlateGray, asciigraph.Teal, asciigraph.Maroon}

// axisColumn is the rune column of the y axis (┤ or ┼) in asciigraph's output.
func axisColumn(lines []string) int {
	for _, l := range lines {
		l = stripANSI(l)
		for i, r := range []rune(l) {
			if r == '┤' || r == '┼' {
				return i
			}
		}
	}
	return -1
}

// timeAxis is a rule with tick marks at local boundaries and their labels,
// for cols columns starting at rune column start.
func timeAxis(lo, hi float64, cols, start int, loc *time.Location) []string {
	ticks := timeTicks(lo, hi, loc, max(2, cols/14))
	rule := []rune(strings.Repeat(" ", start-1) + "└" + strings.Repeat("─", cols))
	labels := []rune(strings.Repeat(" ", start+cols+20))
	free := 0 // the first rune column a label may use
	for _, tk := range ticks {
		c := start + int(math.Round((tk.at-lo)/(hi-lo)*float64(cols-1)))
		if c < start || c >= start+cols {
			continue
		}
		rule[c] = '┬'
		n := utf8.RuneCountInString(tk.label)
		at := max(c-n/2, 0)
		if at < free {
			continue
		}
		copy(labels[at:], []rune(tk.label))
		free = at + n + 2
	}
	return []string{string(rule), strings.TrimRight(string(labels), " ")}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// precisionFor shows small values (kWh per quarter-hour) with three decimals.
func precisionFor(d plotData) uint {
	hi := 0.0
	for _, s := range d.series {
		for _, y := range s.y {
			hi = max(hi, math.Abs(y))
		}
	}
	switch {
	case hi < 10:
		return 3
	case hi < 1000:
		return 2
	}
	return 1
}

func yLabelWidth(d plotData) int {
	hi := 0.0
	for _, s := range d.series {
		for _, y := range s.y {
			hi = max(hi, math.Abs(y))
		}
	}
	return len(fmt.Sprintf("%.*f", precisionFor(d), -hi)) + 2
}

// drawPNG writes d as a PNG report chart (gonum/plot), the time axis in
// Berlin local time for instants.
func drawPNG(path string, d plotData, title string) error {
	p := plot.New()
	if r := []rune(title); len(r) > 120 {
		title = string(r[:119]) + "…"
	}
	p.Title.Text = title
	p.X.Label.Text = d.xTitle()
	p.Y.Label.Text = d.yName
	loc := d.axisLocation()
	p.X.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		var out []plot.Tick
		for _, tk := range timeTicks(lo, hi, loc, 8) {
			out = append(out, plot.Tick{Value: tk.at, Label: tk.label})
		}
		return out
	})
	p.Add(plotter.NewGrid())
	for i, s := range d.series {
		c := plotutil.Color(i)
		for j, seg := range segments(s) {
			l, err := plotter.NewLine(seg)
			if err != nil {
				return fmt.Errorf("plot %s: %w", s.name, err)
			}
			l.Color, l.Width = c, vg.Points(1.2)
			p.Add(l)
			if j == 0 && len(d.series) > 1 {
				p.Legend.Add(s.name, l)
			}
		}
	}
	p.Legend.Top = true
	p.BackgroundColor = color.White
	return p.Save(11*vg.Inch, 4.5*vg.Inch, path)
}

// segments splits a series where the data has a gap (spacing above 1.5 times
// the usual), so the line is not drawn across missing readings.
func segments(s plotSeries) []plotter.XYs {
	maxGap := 1.5 * medianSpacing(s.x)
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range s.x {
		if i > 0 && s.x[i]-s.x[i-1] > maxGap && maxGap > 0 {
			out, cur = append(out, cur), nil
		}
		cur = append(cur, plotter.XY{X: s.x[i], Y: s.y[i]})
	}
	return append(out, cur)
}
