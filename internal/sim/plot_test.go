package sim

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// svgText parses doc as XML to the end and returns its character data, so
// a test sees the labels as a viewer would, with entities decoded.
func svgText(t *testing.T, doc []byte) string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return text.String()
		}
		if err != nil {
			t.Fatalf("output is not XML: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			text.Write(cd)
			text.WriteByte('\n')
		}
	}
}

// steps builds n samples one second apart whose values cycle, with a single
// peak of utilization 1 and queue 500 at sample peak.
func steps(n, peak int) []Sample {
	s := make([]Sample, n)
	for i := range s {
		s[i] = Sample{T: float64(i), Utilization: float64(i%7) / 10, Queued: i % 13}
	}
	if peak < n {
		s[peak] = Sample{T: float64(peak), Utilization: 1, Queued: 500}
	}
	return s
}

func TestWritePlot(t *testing.T) {
	tests := []struct {
		name     string
		samples  []Sample
		title    string
		wantText []string // strings that must appear in the SVG's text
		maxBytes int      // upper bound on the SVG's size, 0 for none
	}{
		{
			name:     "empty samples draw empty axes",
			title:    "nothing ran",
			wantText: []string{"nothing ran", "time (s)", "utilization (%)", "queued jobs"},
		},
		{
			name:     "one sample",
			samples:  []Sample{{T: 0, Utilization: 0.5, Queued: 3}},
			title:    "one",
			wantText: []string{"one", "time (s)"},
		},
		{
			name: "short span is in seconds",
			samples: []Sample{
				{T: 0, Utilization: 0, Queued: 0}, {T: 10, Utilization: 0.25, Queued: 2},
				{T: 10, Utilization: 0.5, Queued: 1}, {T: 7200, Utilization: 0, Queued: 0},
			},
			title:    "fcfs on 4x8",
			wantText: []string{"fcfs on 4x8", "time (s)", "100"},
		},
		{
			name:     "span over two hours is in hours",
			samples:  []Sample{{T: 0, Utilization: 1, Queued: 4}, {T: 7201, Utilization: 0, Queued: 0}},
			title:    "easy",
			wantText: []string{"easy", "time (h)"},
		},
		{
			name:     "span of two days is in hours",
			samples:  []Sample{{T: 0, Utilization: 1, Queued: 4}, {T: 2 * 86400, Utilization: 0, Queued: 0}},
			title:    "two days",
			wantText: []string{"two days", "time (h)"},
		},
		{
			// A 144-day trace (issue 27: its axis counted 3,456 hours).
			name:     "span over two days is in days",
			samples:  []Sample{{T: 0, Utilization: 1, Queued: 4}, {T: 144 * 86400, Utilization: 0, Queued: 0}},
			title:    "144 days",
			wantText: []string{"144 days", "time (d)"},
		},
		{
			name:     "markup, control characters and bad UTF-8 in the title",
			samples:  []Sample{{T: 0}, {T: 1, Utilization: 1, Queued: 1}},
			title:    "a<b & \"c\"\x00\x1b\n\xff ünï",
			wantText: []string{"a<b & \"c\"   \uFFFD ünï\n"},
		},
		{
			name:     "100,000 samples are thinned",
			samples:  steps(100_000, 31_337),
			title:    "lublin",
			wantText: []string{"lublin", "time (h)"},
			maxBytes: 1 << 20,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WritePlot(&buf, tt.samples, tt.title); err != nil {
				t.Fatalf("WritePlot: %v", err)
			}
			doc := buf.Bytes()
			if !bytes.HasPrefix(doc, []byte("<?xml")) && !bytes.HasPrefix(doc, []byte("<svg")) {
				t.Errorf("output starts %q, want <?xml or <svg", doc[:min(20, len(doc))])
			}
			if !bytes.Contains(doc, []byte("<svg")) {
				t.Errorf("output has no <svg element")
			}
			text := svgText(t, doc)
			for _, want := range tt.wantText {
				if !strings.Contains(text, want) {
					t.Errorf("SVG text lacks %q; it has:\n%s", want, text)
				}
			}
			if tt.maxBytes > 0 && len(doc) > tt.maxBytes {
				t.Errorf("SVG is %d bytes, want at most %d", len(doc), tt.maxBytes)
			}
		})
	}
}

func TestWritePlotErrors(t *testing.T) {
	tests := []struct {
		name    string
		samples []Sample
		want    string
	}{
		{"NaN time", []Sample{{T: math.NaN()}}, "plot: sample 0: time NaN is not a number"},
		{"infinite time", []Sample{{T: 0}, {T: math.Inf(1)}}, "plot: sample 1: time +Inf is not a number"},
		{"time beyond range", []Sample{{T: -1e300}}, "plot: sample 0: time -1e+300"},
		{"time goes back", []Sample{{T: 5}, {T: 6}, {T: 4}}, "plot: sample 2: time 4 is before the previous sample's 6"},
		{"utilization above 1", []Sample{{T: 0, Utilization: 1.5}}, "plot: sample 0: utilization 1.5 is not within 0..1"},
		{"negative utilization", []Sample{{T: 0}, {T: 1, Utilization: -0.1}}, "plot: sample 1: utilization -0.1"},
		{"NaN utilization", []Sample{{T: 0, Utilization: math.NaN()}}, "plot: sample 0: utilization NaN"},
		{"negative queue", []Sample{{T: 0, Queued: -1}}, "plot: sample 0: negative queue length -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := WritePlot(&buf, tt.samples, "x")
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("WritePlot error = %v, want one starting %q", err, tt.want)
			}
			if buf.Len() != 0 {
				t.Errorf("WritePlot wrote %d bytes before failing", buf.Len())
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWritePlotWriteError(t *testing.T) {
	err := WritePlot(failWriter{}, []Sample{{T: 0}, {T: 1}}, "x")
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("WritePlot error = %v, want the writer's", err)
	}
}

// maxes returns the highest utilization and queue in samples.
func maxes(samples []Sample) (float64, int) {
	u, q := 0.0, 0
	for _, s := range samples {
		u, q = max(u, s.Utilization), max(q, s.Queued)
	}
	return u, q
}

func TestThin(t *testing.T) {
	tests := []struct {
		name    string
		samples []Sample
		n       int
		want    []Sample // nil: check only the invariants
	}{
		{
			name:    "few samples are kept as they are",
			samples: []Sample{{T: 0, Utilization: 0.5, Queued: 1}, {T: 3, Queued: 2}},
			n:       4,
			want:    []Sample{{T: 0, Utilization: 0.5, Queued: 1}, {T: 3, Queued: 2}},
		},
		{
			name: "buckets keep the carried state and the peaks",
			samples: []Sample{
				{T: 0, Utilization: 0.1, Queued: 0},
				{T: 1, Utilization: 0.9, Queued: 1}, // brief peak in bucket 0
				{T: 2, Utilization: 0.2, Queued: 5}, // still bucket 0
				{T: 10, Utilization: 0.3, Queued: 0},
				{T: 15, Utilization: 0.0, Queued: 2},
				{T: 20, Utilization: 0.4, Queued: 1},
			},
			n: 4, // buckets [0,5) [5,10) [10,15) [15,20]
			want: []Sample{
				{T: 0, Utilization: 0.9, Queued: 5},
				{T: 5, Utilization: 0.2, Queued: 5}, // no sample: the state carried in
				{T: 10, Utilization: 0.3, Queued: 5},
				{T: 15, Utilization: 0.4, Queued: 2},
				{T: 20, Utilization: 0.4, Queued: 1},
			},
		},
		{
			name:    "one long series",
			samples: steps(100_000, 77_777),
			n:       maxPlotPoints,
		},
		{
			name:    "peak on the last sample",
			samples: steps(10_001, 10_000),
			n:       100,
		},
		{
			name:    "peak on the first sample",
			samples: steps(10_001, 0),
			n:       100,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := thin(tt.samples, tt.n)
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("thin (-want +got):\n%s", diff)
				}
			}
			if len(got) > tt.n+1 {
				t.Errorf("thin kept %d points, want at most %d", len(got), tt.n+1)
			}
			wantU, wantQ := maxes(tt.samples)
			gotU, gotQ := maxes(got)
			if diff := cmp.Diff([2]float64{wantU, float64(wantQ)}, [2]float64{gotU, float64(gotQ)}); diff != "" {
				t.Errorf("series maxima [utilization queue] (-want +got):\n%s", diff)
			}
			first, last := tt.samples[0], tt.samples[len(tt.samples)-1]
			if diff := cmp.Diff([2]float64{first.T, last.T}, [2]float64{got[0].T, got[len(got)-1].T}); diff != "" {
				t.Errorf("time span [first last] (-want +got):\n%s", diff)
			}
			for i := 1; i < len(got); i++ {
				if got[i].T < got[i-1].T {
					t.Fatalf("point %d at %v precedes point %d at %v", i, got[i].T, i-1, got[i-1].T)
				}
			}
		})
	}
}

func BenchmarkWritePlot(b *testing.B) {
	samples := steps(100_000, 50_000)
	for b.Loop() {
		if err := WritePlot(io.Discard, samples, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
