package eventlog

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	gojson "github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"
)

func TestParseRFC18Example(t *testing.T) {
	// RFC 18 "Example": every line but the third is a valid event. The
	// third is printed in the RFC with an unquoted key (context:{...}),
	// which is not JSON, so a strict reader must reject it.
	good := []string{
		`{"timestamp":1552593348.073045,"name":"submit","context":{"urgency":16,"userid":5588,"flags":0}}`,
		`{"timestamp":1552593547.411336,"name":"urgency","context":{"urgency":0,"userid":5588}}`,
		`{"timestamp":1552593348.093541,"name":"free"}`,
		`{"timestamp":1552593348.089787,"name":"start"}`,
		`{"timestamp":1552593348.092830,"name":"release","context":{"ranks":"all","final":true}}`,
		`{"timestamp":1552593348.090927,"name":"finish","context":{"status":0}}`,
		`{"timestamp":1552593348.104432,"name":"clean"}`,
	}
	events, err := Parse([]byte(strings.Join(good, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{1552593348.073045, "submit", map[string]any{"urgency": json.Number("16"), "userid": json.Number("5588"), "flags": json.Number("0")}},
		{1552593547.411336, "urgency", map[string]any{"urgency": json.Number("0"), "userid": json.Number("5588")}},
		{1552593348.093541, "free", nil},
		{1552593348.089787, "start", nil},
		{1552593348.092830, "release", map[string]any{"ranks": "all", "final": true}},
		{1552593348.090927, "finish", map[string]any{"status": json.Number("0")}},
		{1552593348.104432, "clean", nil},
	}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	bad := `{"timestamp":1552593348.088391,"name":"alloc",context:{"note":"rank0/core[0-1]"}}` + "\n"
	if _, err := Parse([]byte(bad)); err == nil {
		t.Error("RFC 18 example line 3 (unquoted key) was accepted")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"no newline", `{"timestamp":1,"name":"a"}`, "eventlog line 1: not terminated by a newline"},
		{"partial second line", "{\"timestamp\":1,\"name\":\"a\"}\n{\"timest", "eventlog line 2: not terminated by a newline"},
		{"not json", "hello\n", "eventlog line 1: invalid event"},
		{"empty line", "\n", "eventlog line 1: invalid event"},
		{"no timestamp", `{"name":"a"}` + "\n", "eventlog line 1: event has no timestamp"},
		{"zero timestamp", `{"timestamp":0,"name":"a"}` + "\n", `eventlog line 1: event "a": timestamp must be greater than zero`},
		{"negative timestamp", `{"timestamp":-1,"name":"a"}` + "\n", "timestamp must be greater than zero"},
		{"string timestamp", `{"timestamp":"1","name":"a"}` + "\n", `eventlog line 1: event "a": timestamp "1" is not a number`},
		{"no name", `{"timestamp":1}` + "\n", "eventlog line 1: event has no name"},
		{"empty name", `{"timestamp":1,"name":""}` + "\n", "eventlog line 1: event has an empty name"},
		{"context array", `{"timestamp":1,"name":"a","context":[1]}` + "\n", `eventlog line 1: event "a": context must be an object`},
		{"context null", `{"timestamp":1,"name":"a","context":null}` + "\n", `context must be an object`},
		{"not an object", "[]\n", "eventlog line 1: invalid event"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%q) error = %v, want it to contain %q", tc.in, err, tc.want)
			}
			// The bad line is the last: LastName refuses it as Parse does.
			if _, lerr := LastName([]byte(tc.in)); lerr == nil || lerr.Error() != err.Error() {
				t.Errorf("LastName(%q) error = %v, want %v", tc.in, lerr, err)
			}
		})
	}
}

func TestAppend(t *testing.T) {
	tests := []struct {
		name  string
		event Event
		want  string
	}{
		// RFC 21 examples, in RFC 18 key order.
		{"submit", Event{1552593348.073045, "submit", map[string]any{"urgency": 16, "userid": 5588, "flags": 0, "version": 1}},
			`{"timestamp":1552593348.073045,"name":"submit","context":{"flags":0,"urgency":16,"userid":5588,"version":1}}`},
		{"no context", Event{1605115080.0358412, "validate", nil},
			`{"timestamp":1605115080.0358412,"name":"validate"}`},
		{"empty context kept", Event{1, "memo", map[string]any{}}, `{"timestamp":1,"name":"memo","context":{}}`},
		{"escaped name", Event{2, "a\nb", nil}, `{"timestamp":2,"name":"a\nb"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Append(nil, tc.event)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want+"\n", string(got)); diff != "" {
				t.Errorf("Append (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := Append(nil, Event{0, "x", nil}); err == nil {
		t.Error("Append accepted a zero timestamp")
	}
}

func FuzzParseEventlog(f *testing.F) {
	f.Add([]byte(`{"timestamp":1552593348.073045,"name":"submit","context":{"urgency":16,"userid":5588,"flags":0}}` + "\n"))
	f.Add([]byte(`{"timestamp":1,"name":"a"}` + "\n" + `{"timestamp":2.5,"name":"b","context":{"x":{"y":[1,2,null]}}}` + "\n"))
	f.Add([]byte("\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := Parse(data)
		if err != nil {
			return
		}
		out, err := Append(nil, events...)
		if err != nil {
			t.Fatalf("Append of parsed events: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Append(v)) = %v on %q", err, out)
		}
		if diff := cmp.Diff(events, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
		out2, _ := Append(nil, again...)
		if string(out) != string(out2) {
			t.Fatalf("not canonical: %q then %q", out, out2)
		}
	})
}

func TestLastName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{`{"timestamp":1,"name":"a"}` + "\n", "a"},
		{`{"timestamp":1,"name":"submit","context":{"userid":5}}` + "\n" + `{"timestamp":2,"name":"clean"}` + "\n", "clean"},
		{`{"timestamp":1,"name":"a"}` + "\n" + `{"timestamp":2, "name":"finish", "context": {"status":0}}` + "\n", "finish"},
	} {
		got, err := LastName([]byte(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("LastName(%q) = %q, %v, want %q", tc.in, got, err, tc.want)
		}
		if evs, _ := Parse([]byte(tc.in)); len(evs) > 0 && evs[len(evs)-1].Name != got {
			t.Errorf("LastName(%q) = %q, Parse's last event is %q", tc.in, got, evs[len(evs)-1].Name)
		}
	}
}

// marshalByPackage is an event as the JSON package writes it, the way
// MarshalJSON wrote every event before its plain path.
func marshalByPackage(t testing.TB, e Event) string {
	t.Helper()
	name, err := gojson.Marshal(e.Name)
	if err != nil {
		t.Fatal(err)
	}
	s := `{"timestamp":` + strconv.FormatFloat(e.Timestamp, 'f', -1, 64) + `,"name":` + string(name)
	if e.Context != nil {
		ctx, err := gojson.Marshal(e.Context)
		if err != nil {
			t.Fatal(err)
		}
		s += `,"context":` + string(ctx)
	}
	return s + "}"
}

// TestAppendAsMarshal: the plain path writes the bytes the JSON package
// writes, for every kind of value it takes and for those it leaves to
// the package.
func TestAppendAsMarshal(t *testing.T) {
	for _, e := range []Event{
		{1, "exception", map[string]any{"type": "cancel", "severity": 0, "note": "", "userid": uint32(1000)}},
		{1.5, "clean", nil},
		{2, "x", map[string]any{"a": int64(-7), "b": uint64(1 << 63), "c": true, "d": nil, "e": false}},
		{3, "esc", map[string]any{"note": `a "quoted" <b> & \ é` + "\n\x01\u2028", "k\t": "v"}},
		{4, "<name>", map[string]any{"f": 1.25, "n": gojson.Number("12"), "m": map[string]any{"z": 1, "a": []any{1, "x"}}}},
		{5, "bad utf8 \xff", map[string]any{"s": "\xfe"}},
		{6, "many", map[string]any{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9, "j": 10}},
		{7, "empty", map[string]any{}},
	} {
		got, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if want := marshalByPackage(t, e); string(got) != want {
			t.Errorf("event %q:\n got %s\nwant %s", e.Name, got, want)
		}
	}
}

func FuzzAppendAsMarshal(f *testing.F) {
	f.Add(1.5, "exception", "note", "a <b>", int64(-3), true)
	f.Add(1e9, "", "", "", int64(0), false)
	f.Fuzz(func(t *testing.T, ts float64, name, key, str string, n int64, b bool) {
		e := Event{ts, name, map[string]any{key: str, key + "n": n, key + "b": b, key + "u": uint32(n), key + "i": int(n)}}
		got, err := e.MarshalJSON()
		if err != nil {
			return // Validate refused it, as before
		}
		if want := marshalByPackage(t, e); string(got) != want {
			t.Fatalf("got %s\nwant %s", got, want)
		}
	})
}

// BenchmarkAppendException: the exception a cancel posts on each job.
func BenchmarkAppendException(b *testing.B) {
	e := Event{1764790000.123456, "exception", map[string]any{"type": "cancel", "severity": 0, "note": "", "userid": uint32(1000)}}
	var buf []byte
	for b.Loop() {
		var err error
		if buf, err = Append(buf[:0], e); err != nil {
			b.Fatal(err)
		}
	}
}

// pendingLog is a pending job's eventlog as a submission and a take-up
// write it: what fluxsched's start and a direct cancel decode for every
// job.
const pendingLog = `{"timestamp":1796529014.716882,"name":"submit","context":{"flags":0,"urgency":16,"userid":0,"version":1}}
{"timestamp":1796529014.716882,"name":"validate"}
{"timestamp":1796529024.610673,"name":"depend"}
{"timestamp":1796529024.6107092,"name":"priority","context":{"priority":16}}
`

func BenchmarkParse(b *testing.B) {
	data := []byte(pendingLog)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// packageEvent is an event as the JSON package decodes it, the way
// UnmarshalJSON decoded every event before its plain path.
func packageEvent(data []byte) (Event, error) {
	ev, rawCtx, err := head(data)
	if err != nil {
		return Event{}, err
	}
	if rawCtx != nil {
		dec := gojson.NewDecoder(strings.NewReader(string(rawCtx)))
		dec.UseNumber()
		var ctx map[string]any
		if err := dec.Decode(&ctx); err != nil || ctx == nil {
			return Event{}, errors.New("context must be an object")
		}
		ev.Context = ctx
	}
	return ev, nil
}

// TestPlainAsPackage: the plain path takes the lines Append writes for
// the common shapes, gives what the JSON package gives, and leaves
// every line off its form to the package.
func TestPlainAsPackage(t *testing.T) {
	for _, tc := range []struct {
		line  string
		plain bool
	}{
		{`{"timestamp":1796529014.716882,"name":"submit","context":{"flags":0,"urgency":16,"userid":0,"version":1}}`, true},
		{`{"timestamp":1,"name":"clean"}`, true},
		{`{"timestamp":2.5e3,"name":"x","context":{"a":-0.5,"b":"s p","c":true,"d":false,"e":null,"a":1E+2}}`, true},
		{`{"timestamp":1,"name":"x","context":{}}`, true},
		{`{"timestamp":1,"name":"x","context":{"note":"caf\u00e9"}}`, false},
		{`{"timestamp":1,"name":"x","context":{"note":"café"}}`, false},
		{`{"timestamp":1,"name":"x","context":{"m":{"a":1}}}`, false},
		{`{"timestamp":1,"name":"x","context":{"l":[1,2]}}`, false},
		{`{"timestamp":1, "name":"x"}`, false},
		{`{"name":"x","timestamp":1}`, false},
		{`{"timestamp":01,"name":"x"}`, false},
		{`{"timestamp":1.,"name":"x"}`, false},
		{`{"timestamp":"1","name":"x"}`, false},
		{`{"timestamp":1,"name":"x","context":null}`, false},
		{`{"timestamp":1,"name":"x","context":{"a":tru}}`, false},
		{`{"timestamp":1,"name":"x"}{}`, false},
		{`{"timestamp":1,"name":"x","context":{"a":1,}}`, false},
		{`{"timestamp":1,"name":"x","other":2}`, false},
	} {
		got, ok := parsePlain([]byte(tc.line))
		if ok != tc.plain {
			t.Errorf("%s: plain %v, want %v", tc.line, ok, tc.plain)
		}
		if !ok {
			continue
		}
		want, err := packageEvent([]byte(tc.line))
		if err != nil {
			t.Errorf("%s: the package refuses it (%v), the plain path takes it", tc.line, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-package +plain):\n%s", tc.line, diff)
		}
	}
}

func FuzzPlainAsPackage(f *testing.F) {
	f.Add([]byte(`{"timestamp":1796529014.716882,"name":"submit","context":{"flags":0,"urgency":16,"userid":0,"version":1}}`))
	f.Add([]byte(`{"timestamp":2.5e3,"name":"x","context":{"a":-0.5,"b":"s p","c":true,"d":false,"e":null}}`))
	f.Add([]byte(`{"timestamp":1,"name":"x","context":{"m":{"a":1}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := parsePlain(line)
		if !ok {
			return
		}
		want, err := packageEvent(line)
		if err != nil {
			t.Fatalf("%q: the package refuses it (%v), the plain path takes it", line, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%q (-package +plain):\n%s", line, diff)
		}
	})
}
