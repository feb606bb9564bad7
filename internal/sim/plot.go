package sim

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
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

// hoursAbove is the span past which the time axis is in hours.
const hoursAbove = 2 * 3600

// Plot size: wide, since time is the long dimension.
const (
	plotWidth  = 9 * vg.Inch
	plotHeight = 6 * vg.Inch
)

// WritePlot draws samples as an SVG: utilization (percent) above queue
// length, both as step lines over one time axis, with title on top. Samples
// must be in time order; an empty slice draws empty axes.
func WritePlot(w io.Writer, samples []Sample, title string) (err error) {
	if err := checkSamples(samples); err != nil {
		return err
	}
	// Inputs are checked above; this only turns a gonum bug on some
	// unforeseen value into an error instead of a crash of the simulator.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot: drawing failed: %v", r)
		}
	}()

	pts := thin(samples, maxPlotPoints)
	xmin, xmax := 0.0, 1.0
	if len(pts) > 0 {
		xmin, xmax = min(0, pts[0].T), pts[len(pts)-1].T
	}
	scale, unit := 1.0, "s"
	if xmax-xmin > hoursAbove {
		scale, unit = 1.0/3600, "h"
	}
	xmin, xmax = xmin*scale, xmax*scale
	if xmax <= xmin {
		xmax = xmin + max(1, math.Abs(xmin)*1e-6)
	}

	util := make(plotter.XYs, len(pts))
	queue := make(plotter.XYs, len(pts))
	maxQueued := 0
	for i, s := range pts {
		util[i] = plotter.XY{X: s.T * scale, Y: 100 * s.Utilization}
		queue[i] = plotter.XY{X: s.T * scale, Y: float64(s.Queued)}
		maxQueued = max(maxQueued, s.Queued)
	}

	top := plot.New()
	top.Title.Text = cleanTitle(title)
	top.Y.Label.Text = "utilization (%)"
	top.Y.Min, top.Y.Max = 0, 100
	// The panels share the time axis: its labels are drawn once, below.
	top.X.Tick.Marker = blankLabels{plot.DefaultTicks{}}

	bottom := plot.New()
	bottom.X.Label.Text = "time (" + unit + ")"
	bottom.Y.Label.Text = "queued jobs"
	bottom.Y.Min, bottom.Y.Max = 0, float64(max(1, maxQueued))
	bottom.Y.Tick.Marker = integerTicks{}

	for _, p := range []*plot.Plot{top, bottom} {
		p.X.Min, p.X.Max = xmin, xmax
		p.Add(plotter.NewGrid())
	}
	if len(pts) > 1 {
		if err := addStepLine(top, util, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}); err != nil {
			return err
		}
		if err := addStepLine(bottom, queue, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}); err != nil {
			return err
		}
	}

	c := vgsvg.New(plotWidth, plotHeight)
	tiles := draw.Tiles{
		Rows: 2, Cols: 1,
		PadX: vg.Millimeter, PadY: 2 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter,
		PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter,
	}
	panels := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, draw.New(c))
	top.Draw(panels[0][0])
	bottom.Draw(panels[1][0])
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("plot: write svg: %w", err)
	}
	return nil
}

// addStepLine adds xys to p as a line that holds each value until the next
// point, which is what a Sample means.
func addStepLine(p *plot.Plot, xys plotter.XYs, c color.Color) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	l.StepStyle = plotter.PostStep
	l.Color = c
	l.Width = vg.Points(1)
	p.Add(l)
	return nil
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
