package sim

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Sample is the machine's state from T until the next sample.
type Sample struct {
	T           float64 // seconds from time zero
	Utilization float64 // busy cores / all cores, 0..1
	Queued      int     // jobs waiting
}

// maxPlotPoints bounds the points drawn per series: a long trace yields
// hundreds of thousands of samples, far more than the plot has pixel
// columns, and an SVG path that long is slow to write and to view.
const maxPlotPoints = 2000

// maxPlotTime bounds |T| (about 30 million years): past it the axis span
// can overflow to +Inf, on which gonum's tick placement misbehaves.
const maxPlotTime = 1e15

// hoursAbove and daysAbove are the spans past which the time axis is in
// hours, and in days: a reader counts a 144-day trace in days, not in
// 3,456 hours.
const (
	hoursAbove = 2 * 3600
	daysAbove  = 2 * 86400
)

// axisUnit is the time axis's unit for a span of seconds, and the scale
// that turns seconds into it.
func axisUnit(span float64) (scale float64, unit string) {
	switch {
	case span > daysAbove:
		return 1.0 / 86400, "d"
	case span > hoursAbove:
		return 1.0 / 3600, "h"
	}
	return 1, "s"
}

// Plot size: wide, since time is the long dimension.
const (
	plotWidth  = 9 * vg.Inch
	plotHeight = 6 * vg.Inch
)

// Format is the kind of file a plot is written as.
type Format int

// The plot formats: SVG, the default, and PNG.
const (
	SVG Format = iota
	PNG
)

// notDrawn are image extensions a user may try that gonum could draw but
// fluxsched does not: refused, rather than an SVG written under that name.
var notDrawn = []string{".pdf", ".eps", ".ps", ".jpg", ".jpeg", ".gif", ".tif", ".tiff", ".bmp", ".webp"}

// FormatOf is the format of a plot written to path, by its extension:
// .png is a PNG, .svg or any other name an SVG (as before PNG was drawn),
// and another image extension is an error.
func FormatOf(path string) (Format, error) {
	ext := strings.ToLower(filepath.Ext(path))
	switch {
	case ext == ".png":
		return PNG, nil
	case slices.Contains(notDrawn, ext):
		return SVG, fmt.Errorf("%s: a plot is drawn as .svg or .png", path)
	}
	return SVG, nil
}

// Series is one simulation on a plot.
type Series struct {
	Label   string   // its legend entry, when a plot has several
	Samples []Sample // in time order
}

// Plot is a figure of one or more simulations of one trace: utilization
// (percent) above queue length over one time axis. With one series the
// raw utilization is drawn with its moving mean over it; with several,
// each one's moving mean and queue length, in its own colour, on the same
// axes.
type Plot struct {
	Title  []string // lines of the title
	Series []Series
	// Window is the moving mean's width in seconds; 0 is AutoWindow of
	// the longest series' span.
	Window float64
	Format Format
}

// WritePlot draws samples as an SVG with title on top: Plot with one
// series. Samples must be in time order; an empty slice draws empty axes.
func WritePlot(w io.Writer, samples []Sample, title string) error {
	return Plot{Title: []string{title}, Series: []Series{{Samples: samples}}}.Write(w)
}

// Write draws the plot to w in its format.
func (p Plot) Write(w io.Writer) (err error) {
	for _, s := range p.Series {
		if err := checkSamples(s.Samples); err != nil {
			if len(p.Series) > 1 {
				return fmt.Errorf("%s: %w", s.Label, err)
			}
			return err
		}
	}
	if !(p.Window >= 0 && p.Window <= maxPlotTime) {
		return fmt.Errorf("plot: window %v is not within 0..%g s", p.Window, float64(maxPlotTime))
	}
	// Inputs are checked above; this only turns a gonum bug on some
	// unforeseen value into an error instead of a crash of the simulator.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot: drawing failed: %v", r)
		}
	}()

	xmin, xmax := p.span()
	window := p.MeanWindow()
	scale, unit := axisUnit(xmax - xmin)
	xmin, xmax = xmin*scale, xmax*scale
	if xmax <= xmin {
		xmax = xmin + max(1, math.Abs(xmin)*1e-6)
	}

	top := plot.New()
	lines := make([]string, len(p.Title))
	for i, l := range p.Title {
		lines[i] = cleanTitle(l)
	}
	top.Title.Text = strings.Join(lines, "\n")
	top.Y.Label.Text = "utilization (%)"
	top.Y.Min, top.Y.Max = 0, 100
	// The panels share the time axis: its labels are drawn once, below.
	top.X.Tick.Marker = blankLabels{plot.DefaultTicks{}}

	bottom := plot.New()
	bottom.X.Label.Text = "time (" + unit + ")"
	bottom.Y.Label.Text = "queued jobs"
	bottom.Y.Tick.Marker = integerTicks{}

	for _, pl := range []*plot.Plot{top, bottom} {
		pl.X.Min, pl.X.Max = xmin, xmax
		pl.Add(plotter.NewGrid())
	}
	meanLabel := "moving mean over " + FormatWindow(window)
	var legend []legendEntry
	maxQueued := 0
	for i, s := range p.Series {
		pts := thin(s.Samples, maxPlotPoints)
		util := make(plotter.XYs, len(pts))
		queue := make(plotter.XYs, len(pts))
		for k, smp := range pts {
			util[k] = plotter.XY{X: smp.T * scale, Y: 100 * smp.Utilization}
			queue[k] = plotter.XY{X: smp.T * scale, Y: float64(smp.Queued)}
			maxQueued = max(maxQueued, smp.Queued)
		}
		mean := movingMean(s.Samples, window, maxPlotPoints)
		for k := range mean {
			mean[k].X *= scale
		}
		if len(p.Series) == 1 {
			raw := lineStyle(rawColor, 0.75)
			avg := lineStyle(meanColor, 2)
			qs := lineStyle(queueColor, 1)
			if len(pts) > 1 {
				addLine(top, util, raw, true)
				addLine(top, mean, avg, false)
				addLine(bottom, queue, qs, true)
			}
			legend = append(legend, legendEntry{"utilization", raw}, legendEntry{meanLabel, avg}, legendEntry{"queued jobs", qs})
			continue
		}
		// Several: each its colour, its mean alone above (overlaid raw
		// lines would hide one another), its queue below. Policies often
		// agree for a while, so each line is drawn narrower than the one
		// before: where they coincide, every colour still shows.
		st := lineStyle(palette[i%len(palette)], 1.25+0.75*float64(len(p.Series)-1-i))
		if i >= len(palette) {
			st.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		if len(pts) > 1 {
			addLine(top, mean, st, false)
			addLine(bottom, queue, st, true)
		}
		legend = append(legend, legendEntry{cleanTitle(s.Label), st})
	}
	bottom.Y.Min, bottom.Y.Max = 0, float64(max(1, maxQueued))

	var c vg.CanvasWriterTo
	switch p.Format {
	case PNG:
		c = vgimg.PngCanvas{Canvas: vgimg.New(plotWidth, plotHeight)}
	default:
		c = vgsvg.New(plotWidth, plotHeight)
	}
	dc := draw.New(c)
	// The legend goes in a strip below the panels, where no line runs.
	sty := top.Legend.TextStyle
	rows := layoutLegend(legend, sty, dc.Max.X-dc.Min.X-4*vg.Millimeter)
	strip := vg.Length(len(rows))*sty.Height("M")*1.4 + 2*vg.Millimeter
	drawLegend(draw.Crop(dc, 0, 0, 0, strip-(dc.Max.Y-dc.Min.Y)), rows, sty)
	tiles := draw.Tiles{
		Rows: 2, Cols: 1,
		PadX: vg.Millimeter, PadY: 2 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: vg.Millimeter,
		PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter,
	}
	panels := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, draw.Crop(dc, 0, 0, strip, 0))
	top.Draw(panels[0][0])
	bottom.Draw(panels[1][0])
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("plot: write %s: %w", p.Format, err)
	}
	return nil
}

// span is the time the plot covers: from time zero (or the first sample,
// if earlier) to the last sample of any series; 0..1 with no sample.
func (p Plot) span() (from, to float64) {
	from, to, empty := 0.0, 1.0, true
	for _, s := range p.Series {
		if n := len(s.Samples); n > 0 {
			if empty {
				from, to, empty = min(0, s.Samples[0].T), s.Samples[n-1].T, false
			}
			from, to = min(from, s.Samples[0].T), max(to, s.Samples[n-1].T)
		}
	}
	return from, to
}

// MeanWindow is the moving mean's width in seconds: Window, or if that is
// 0, AutoWindow of the plot's span (the same for every series, so their
// means compare).
func (p Plot) MeanWindow() float64 {
	if p.Window > 0 {
		return p.Window
	}
	from, to := p.span()
	return AutoWindow(to - from)
}

// String names the format as its file extension does.
func (f Format) String() string {
	if f == PNG {
		return "png"
	}
	return "svg"
}

// Colours: Tableau's, which matplotlib made familiar, and readable by most
// colour-blind viewers in their first few.
var (
	palette = []color.Color{
		color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
		color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
		color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
		color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
		color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, // purple
		color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, // brown
	}
	rawColor   = color.RGBA{R: 0x9e, G: 0xc5, B: 0xe3, A: 0xff} // the blue, pale: the mean is read over it
	meanColor  = color.RGBA{R: 0x0b, G: 0x3d, B: 0x66, A: 0xff} // the blue, dark
	queueColor = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
)

func lineStyle(c color.Color, width float64) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(width)}
}

// windowFraction: the automatic moving mean spans this part of the plot,
// wide enough to smooth the spikes of single jobs starting and ending,
// narrow enough to keep the shape of a day or a burst.
const windowFraction = 50

// niceWindows are the widths AutoWindow picks from, in seconds; past the
// last, whole weeks.
var niceWindows = []float64{
	1, 2, 5, 10, 15, 30,
	60, 2 * 60, 5 * 60, 10 * 60, 15 * 60, 30 * 60,
	3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600,
	86400, 2 * 86400, 7 * 86400,
}

// AutoWindow is the moving mean's width for a plot spanning span seconds:
// span/50 rounded down to a round duration (1, 2, 5, 10, 15 or 30 s or
// min; 1, 2, 3, 6 or 12 h; 1 or 2 d; whole weeks), at least 1 s.
func AutoWindow(span float64) float64 {
	target := span / windowFraction
	week := niceWindows[len(niceWindows)-1]
	if target >= week {
		return math.Floor(target/week) * week
	}
	w := niceWindows[0]
	for _, n := range niceWindows {
		if n <= target {
			w = n
		}
	}
	return w
}

// FormatWindow writes a window's width in the largest unit it reaches,
// as a Flux duration: 1s, 2m, 1.5h, 7d.
func FormatWindow(sec float64) string {
	unit, size := "s", 1.0
	switch {
	case sec >= 86400:
		unit, size = "d", 86400
	case sec >= 3600:
		unit, size = "h", 3600
	case sec >= 60:
		unit, size = "m", 60
	}
	return strconv.FormatFloat(sec/size, 'g', 4, 64) + unit
}

// movingMean is the time-weighted mean utilization of samples (a step
// function, each value held until the next sample) over a window of width
// w centred on each of n points spread evenly from the first sample to
// the last; at the ends the window is cut to the data. Fewer than two
// samples, or no time between first and last, give no line.
func movingMean(samples []Sample, w float64, n int) plotter.XYs {
	if len(samples) < 2 || n < 2 {
		return nil
	}
	t0, t1 := samples[0].T, samples[len(samples)-1].T
	if !(t1 > t0) {
		return nil
	}
	// area[i] is the integral of utilization from t0 to samples[i].T.
	area := make([]float64, len(samples))
	for i := 1; i < len(samples); i++ {
		area[i] = area[i-1] + samples[i-1].Utilization*(samples[i].T-samples[i-1].T)
	}
	integral := func(t float64) float64 {
		// The last sample at or before t holds at t.
		i := sort.Search(len(samples), func(k int) bool { return samples[k].T > t }) - 1
		i = max(i, 0)
		return area[i] + samples[i].Utilization*(t-samples[i].T)
	}
	out := make(plotter.XYs, n)
	for k := range n {
		t := t0 + (t1-t0)*float64(k)/float64(n-1)
		if k == n-1 {
			t = t1
		}
		a, b := max(t0, t-w/2), min(t1, t+w/2)
		u := samples[0].Utilization
		if b > a {
			u = (integral(b) - integral(a)) / (b - a)
		}
		out[k] = plotter.XY{X: t, Y: 100 * min(1, max(0, u))}
	}
	return out
}

// legendEntry is a line's name and how it is drawn.
type legendEntry struct {
	label string
	style draw.LineStyle
}

// legendThumb is the length of the stroke beside a legend label.
const legendThumb = 8 * vg.Millimeter

// entryWidth is an entry's width: stroke, gap, label, gap to the next.
func entryWidth(e legendEntry, sty text.Style) vg.Length {
	return legendThumb + vg.Millimeter + sty.Width(e.label) + 5*vg.Millimeter
}

// layoutLegend splits entries into rows no wider than width (an entry
// wider than that gets a row of its own).
func layoutLegend(entries []legendEntry, sty text.Style, width vg.Length) [][]legendEntry {
	var rows [][]legendEntry
	var used vg.Length
	for _, e := range entries {
		w := entryWidth(e, sty)
		if len(rows) == 0 || used+w > width {
			rows = append(rows, nil)
			used = 0
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], e)
		used += w
	}
	return rows
}

// drawLegend draws rows of entries across c, each row centred.
func drawLegend(c draw.Canvas, rows [][]legendEntry, sty text.Style) {
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	lineHeight := sty.Height("M") * 1.4
	y := c.Max.Y - vg.Millimeter - lineHeight/2
	for _, row := range rows {
		var w vg.Length
		for _, e := range row {
			w += entryWidth(e, sty)
		}
		x := c.Center().X - (w-5*vg.Millimeter)/2
		for _, e := range row {
			c.StrokeLine2(e.style, x, y, x+legendThumb, y)
			c.FillText(sty, vg.Point{X: x + legendThumb + vg.Millimeter, Y: y}, e.label)
			x += entryWidth(e, sty)
		}
		y -= lineHeight
	}
}

// addLine adds xys to p drawn in st; a step line holds each value until
// the next point, which is what a Sample means.
func addLine(p *plot.Plot, xys plotter.XYs, st draw.LineStyle, step bool) {
	l := &plotter.Line{XYs: xys, LineStyle: st}
	if step {
		l.StepStyle = plotter.PostStep
	}
	p.Add(l)
}

// checkSamples rejects what cannot be drawn faithfully, naming the sample.
func checkSamples(samples []Sample) error {
	for i, s := range samples {
		switch {
		case math.IsNaN(s.T) || math.Abs(s.T) > maxPlotTime:
			return fmt.Errorf("plot: sample %d: time %v is not a number within ±%g s", i, s.T, float64(maxPlotTime))
		case i > 0 && s.T < samples[i-1].T:
			return fmt.Errorf("plot: sample %d: time %v is before the previous sample's %v", i, s.T, samples[i-1].T)
		case !(s.Utilization >= 0 && s.Utilization <= 1):
			return fmt.Errorf("plot: sample %d: utilization %v is not within 0..1", i, s.Utilization)
		case s.Queued < 0:
			return fmt.Errorf("plot: sample %d: negative queue length %d", i, s.Queued)
		}
	}
	return nil
}

// thin reduces time-ordered samples to at most n+1 points: one per bucket
// of n equal time buckets, holding the highest utilization and the longest
// queue in force at any time in that bucket (the state carried in from the
// previous bucket included), plus the last sample so the line ends where
// the data does. Peaks thus survive at pixel resolution; dips may not,
// which suits a plot read for how busy and how backed up the machine got.
func thin(samples []Sample, n int) []Sample {
	if len(samples) <= n || n < 1 {
		return samples
	}
	t0, t1 := samples[0].T, samples[len(samples)-1].T
	width := (t1 - t0) / float64(n)
	out := make([]Sample, 0, n+1)
	cur := samples[0] // the state in force at the current bucket's start
	i := 0
	for k := range n {
		start := t0 + float64(k)*width
		end := t0 + float64(k+1)*width
		b := Sample{T: start, Utilization: cur.Utilization, Queued: cur.Queued}
		// The last bucket takes everything left, whatever the rounding of end.
		for i < len(samples) && (samples[i].T < end || k == n-1) {
			cur = samples[i]
			b.Utilization = max(b.Utilization, cur.Utilization)
			b.Queued = max(b.Queued, cur.Queued)
			i++
		}
		out = append(out, b)
	}
	last := samples[len(samples)-1]
	if last.T > out[len(out)-1].T {
		out = append(out, last)
	}
	return out
}

// cleanTitle makes title one line of text that XML can carry: gonum escapes
// markup characters but passes control characters and invalid UTF-8, which
// would make the SVG unreadable.
func cleanTitle(title string) string {
	title = strings.ToValidUTF8(title, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\uFFFE' || r == '\uFFFF' {
			return ' '
		}
		return r
	}, title)
}

// blankLabels keeps another ticker's tick marks but drops their labels.
type blankLabels struct{ plot.Ticker }

// Ticks implements plot.Ticker.
func (b blankLabels) Ticks(min, max float64) []plot.Tick {
	ticks := b.Ticker.Ticks(min, max)
	for i := range ticks {
		ticks[i].Label = ""
	}
	return ticks
}

// integerTicks labels only whole numbers, since a queue holds whole jobs.
type integerTicks struct{}

// Ticks implements plot.Ticker.
func (integerTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i, t := range ticks {
		switch {
		case t.Label == "":
		case t.Value != math.Trunc(t.Value):
			ticks[i].Label = ""
		default:
			ticks[i].Label = strconv.FormatFloat(t.Value, 'f', -1, 64)
		}
	}
	return ticks
}
