package sim

import (
	"bytes"
	"image/png"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gonum.org/v1/plot/plotter"
)

// Issue 16: a moving mean over the utilization, the figures in the title,
// several policies on one plot, PNG as well as SVG.

func TestAutoWindow(t *testing.T) {
	const (
		minute = 60
		hour   = 3600
		day    = 86400
		week   = 7 * day
	)
	tests := []struct {
		span, want float64
	}{
		{0, 1},
		{37, 1},              // under a second: the smallest
		{50, 1},              // exactly 1 s
		{499, 5},             // 9.98 s rounds down
		{7200, 2 * minute},   // 144 s
		{50 * hour, hour},    // exactly an hour
		{61 * day, day},      // hpc2n-excerpt's 61 days: 1.22 d
		{200 * day, 2 * day}, // 4 d
		{350 * day, week},    // exactly a week
		{3 * 365 * day, 3 * week},
	}
	for _, tt := range tests {
		if got := AutoWindow(tt.span); got != tt.want {
			t.Errorf("AutoWindow(%v) = %v, want %v", tt.span, got, tt.want)
		}
	}
}

func TestFormatWindow(t *testing.T) {
	for sec, want := range map[float64]string{
		1: "1s", 30: "30s", 60: "1m", 90: "1.5m", 120: "2m", 3600: "1h", 5400: "1.5h",
		86400: "1d", 7 * 86400: "7d", 0.5: "0.5s",
	} {
		if got := FormatWindow(sec); got != want {
			t.Errorf("FormatWindow(%v) = %q, want %q", sec, got, want)
		}
	}
}

// movingMean is the time-weighted mean over a centred window, cut at the
// ends of the data; a sample holds until the next one.
func TestMovingMean(t *testing.T) {
	// 0 for 0..10, 100% for 10..20 (a zero-length step at 10 on the way),
	// then the last sample at 20.
	samples := []Sample{{T: 0}, {T: 10, Utilization: 0.5}, {T: 10, Utilization: 1}, {T: 20, Utilization: 0}}
	got := movingMean(samples, 10, 5) // at 0, 5, 10, 15, 20
	want := plotter.XYs{
		{X: 0, Y: 0},    // [0, 5]
		{X: 5, Y: 0},    // [0, 10]
		{X: 10, Y: 50},  // [5, 15]: half at 0, half at 100
		{X: 15, Y: 100}, // [10, 20]
		{X: 20, Y: 100}, // [15, 20]
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("moving mean (-want +got):\n%s", diff)
	}
	// A window wider than the data is the mean of all of it.
	if got := movingMean(samples, 1000, 3); math.Abs(got[1].Y-50) > 1e-9 {
		t.Errorf("mean over a window wider than the data = %v, want 50", got[1].Y)
	}
	for _, s := range [][]Sample{nil, {{T: 3, Utilization: 1}}, {{T: 3}, {T: 3, Utilization: 1}}} {
		if got := movingMean(s, 10, 5); got != nil {
			t.Errorf("movingMean(%v) = %v, want no line", s, got)
		}
	}
}

func TestFormatOf(t *testing.T) {
	tests := []struct {
		path string
		want Format
		err  bool
	}{
		{"util.svg", SVG, false},
		{"util.png", PNG, false},
		{"UTIL.PNG", PNG, false},
		{"util", SVG, false},
		{"dir.d/util.out", SVG, false},
		{"util.pdf", SVG, true},
		{"util.jpeg", SVG, true},
	}
	for _, tt := range tests {
		got, err := FormatOf(tt.path)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("FormatOf(%q) = %v, %v; want %v, error %v", tt.path, got, err, tt.want, tt.err)
		}
	}
}

// A PNG plot decodes to an image of the plot's size.
func TestPlotPNG(t *testing.T) {
	var buf bytes.Buffer
	p := Plot{Title: []string{"a", "b"}, Series: []Series{{Samples: steps(500, 100)}}, Format: PNG}
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 864 || b.Dy() != 576 {
		t.Errorf("image is %dx%d, want 864x576 (9x6 in at 96 dpi)", b.Dx(), b.Dy())
	}
}

// One series: raw line, its mean and the queue in the legend, each title
// line as text. Several: a legend entry per series, the window in none
// of them (the caller's title says it).
func TestPlotLegendAndTitle(t *testing.T) {
	tests := []struct {
		name    string
		plot    Plot
		want    []string
		notWant []string
	}{
		{
			name: "one series",
			plot: Plot{Title: []string{"t.swf: easy on 2 nodes, 4 cores", "4 jobs, makespan 37s"}, Series: []Series{{Label: "ignored", Samples: steps(100, 10)}}},
			want: []string{"t.swf: easy on 2 nodes, 4 cores", "4 jobs, makespan 37s", "utilization", "moving mean over 1s", "queued jobs"},
			// The one series' label is its title's business.
			notWant: []string{"ignored"},
		},
		{
			name: "a window given",
			plot: Plot{Series: []Series{{Samples: steps(100, 10)}}, Window: 90},
			want: []string{"moving mean over 1.5m"},
		},
		{
			name: "several series",
			plot: Plot{Title: []string{"compare"}, Series: []Series{
				{Label: "fcfs: makespan 55s", Samples: steps(100, 10)},
				{Label: "easy: makespan 37s", Samples: steps(50, 10)},
				{Label: "conservative", Samples: nil},
			}},
			want:    []string{"compare", "fcfs: makespan 55s", "easy: makespan 37s", "conservative"},
			notWant: []string{"moving mean over"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.plot.Write(&buf); err != nil {
				t.Fatal(err)
			}
			text := svgText(t, buf.Bytes())
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("SVG text lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(text, w) {
					t.Errorf("SVG text has %q:\n%s", w, text)
				}
			}
		})
	}
}

// Several series share the time axis: it runs to the longest one's end.
func TestPlotSharedAxis(t *testing.T) {
	short := []Sample{{T: 0, Utilization: 1}, {T: 100}}
	long := []Sample{{T: 0, Utilization: 0.5}, {T: 5000}}
	p := Plot{Series: []Series{{Label: "a", Samples: short}, {Label: "b", Samples: long}}}
	if from, to := p.span(); from != 0 || to != 5000 {
		t.Errorf("span = %v..%v, want 0..5000", from, to)
	}
	if got := p.MeanWindow(); got != 60 {
		t.Errorf("MeanWindow = %v, want 60 (5000/50 = 100 s, rounded down)", got)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if text := svgText(t, buf.Bytes()); !strings.Contains(text, "5000") {
		t.Errorf("the time axis does not reach the longer series' 5000 s:\n%s", text)
	}
}

func TestPlotErrors(t *testing.T) {
	bad := []Sample{{T: 1}, {T: 0}}
	tests := []struct {
		name string
		plot Plot
		want string
	}{
		{"a series out of order is named", Plot{Series: []Series{{Label: "easy", Samples: steps(3, 9)}, {Label: "fcfs", Samples: bad}}}, "fcfs: plot: sample 1"},
		{"one series needs no name", Plot{Series: []Series{{Label: "easy", Samples: bad}}}, "plot: sample 1"},
		{"negative window", Plot{Window: -1}, "plot: window -1"},
		{"NaN window", Plot{Window: math.NaN()}, "plot: window NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.plot.Write(&bytes.Buffer{})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Write = %v, want an error starting %q", err, tt.want)
			}
		})
	}
}
