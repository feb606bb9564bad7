package state

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/store"
)

// The hand-written encoder writes what json.Marshal writes, byte for byte,
// so every reader of a stored summary (fluxq jobs, info, wait, a restart's
// Load) decodes the same JobSummary as before.
func TestAppendSummaryIsMarshal(t *testing.T) {
	rc, ws, parent := -9, 9, fluid.ID(77)
	zero := 0
	cases := []Summary{
		{},
		{ID: 1 << 60, UserID: math.MaxUint32, Queue: "batch", Name: "true", State: job.Sched, Urgency: 16,
			Priority: math.MaxInt64, NTasks: 1, NCores: 1, TSubmit: 1764196464.123456, Command: []string{"true"}, Cwd: "/root"},
		{ID: 5, State: job.Run, Priority: -3, NNodes: 2, NCores: 8, NGPUs: 1, Duration: 60.5, TSubmit: 1.5, TDepend: 1.6,
			TRun: 2, Nodelist: "node[0-1]", Annotations: map[string]any{"sched": map[string]any{"resource_summary": "rank0/core0", "b": 1.5}, "user": "x"},
			Dependencies: []string{"afterok:ƒ2P4d5"}, Targets: []string{"a", "b"}, Parent: &parent},
		{ID: 6, State: job.Inactive, Result: job.Failed, TSubmit: 3, TRun: 4, TCleanup: 5, TInactive: 6,
			Exception:  &Exception{Occurred: true, Type: "cancel", Severity: 0, Note: `a "quoted" <note> & \ more`, Time: 5.25},
			ReturnCode: &rc, WaitStatus: &ws, Usage: &execproto.Usage{UserCPU: 0.001, SysCPU: 1e-7, MaxRSS: 1 << 40}},
		{ID: 7, State: job.Inactive, Result: job.Completed, ReturnCode: &zero, WaitStatus: &zero,
			Name: "tab\there", Queue: "ünïcode", Cwd: "/a b/\u2028/\x7f", Command: []string{"sh", "-c", "echo '<&>'\n", ""},
			Waits: "queue stopped", Nodelist: "n<1>"},
		{ID: 8, State: job.State(0x7fff), Result: job.Result(99), Duration: 1e21, TSubmit: 1e-7, TDepend: -2.5e-9, TRun: math.Copysign(0, -1),
			TCleanup: 123456789012345678, TInactive: 0.000001},
	}
	for i, s := range cases {
		same(t, i, &s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	str := func() string {
		const cs = "abc <>&\"\\\n\x01é\u2028/_-0"
		n := r.IntN(6)
		rs := []rune(cs)
		out := make([]rune, n)
		for k := range out {
			out[k] = rs[r.IntN(len(rs))]
		}
		return string(out)
	}
	flt := func() float64 {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return r.Float64() * 2e9
		case 2:
			return math.Ldexp(r.Float64()-0.5, r.IntN(160)-80)
		}
		return float64(r.IntN(100))
	}
	strs := func() []string {
		if r.IntN(3) == 0 {
			return nil
		}
		out := make([]string, r.IntN(3))
		for k := range out {
			out[k] = str()
		}
		return out
	}
	for i := range 2000 {
		s := Summary{ID: fluid.ID(r.Uint64()), UserID: r.Uint32(), Queue: str(), Name: str(), State: job.State(r.IntN(1 << 8)),
			Result: job.Result(r.IntN(6)), Urgency: r.IntN(32) - 1, Priority: r.Int64() - r.Int64(), NTasks: r.IntN(9),
			NNodes: r.IntN(3), NCores: r.IntN(9), NGPUs: r.IntN(2), Duration: flt(), TSubmit: flt(), TDepend: flt(),
			TRun: flt(), TCleanup: flt(), TInactive: flt(), Nodelist: str(), Dependencies: strs(), Targets: strs(),
			Command: strs(), Cwd: str(), Waits: str()}
		if r.IntN(2) == 0 {
			s.Annotations = map[string]any{str(): str(), "n": flt()}
		}
		if r.IntN(2) == 0 {
			s.Exception = &Exception{Occurred: true, Type: str(), Severity: r.IntN(8), Note: str(), Time: flt()}
		}
		if r.IntN(2) == 0 {
			v, w := r.IntN(512)-256, r.IntN(1<<16)
			s.ReturnCode, s.WaitStatus = &v, &w
		}
		if r.IntN(2) == 0 {
			p := fluid.ID(r.Uint64())
			s.Parent = &p
		}
		if r.IntN(2) == 0 {
			s.Usage = &execproto.Usage{UserCPU: flt(), SysCPU: flt(), MaxRSS: r.Int64()}
		}
		same(t, 1000+i, &s)
	}
	for i := range 1000 {
		u := execproto.Usage{UserCPU: flt(), SysCPU: flt(), MaxRSS: r.Int64() - r.Int64()}
		want, _ := json.Marshal(u)
		if got, _ := appendUsage(nil, &u); !bytes.Equal(got, want) {
			t.Fatalf("usage %d: got %s, want %s", i, got, want)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := appendUsage(nil, &execproto.Usage{SysCPU: bad}); err == nil {
			t.Errorf("sys_cpu %v: no error, want json.Marshal's", bad)
		}
		if _, err := appendSummary(nil, &Summary{TRun: bad}); err == nil {
			t.Errorf("t_run %v: no error, want json.Marshal's", bad)
		}
	}
}

func same(t *testing.T, i int, s *Summary) {
	t.Helper()
	want, werr := json.Marshal(s)
	got, gerr := appendSummary(nil, s)
	if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
		t.Fatalf("case %d:\n got %s (%v)\nwant %s (%v)", i, got, gerr, want, werr)
	}
	if werr != nil {
		return
	}
	// States no job is in (State(0)) do not decode, from either.
	var a, b Summary
	aerr, berr := json.Unmarshal(got, &a), json.Unmarshal(want, &b)
	if (aerr != nil) != (berr != nil) || !reflect.DeepEqual(a, b) {
		t.Fatalf("case %d: decodes to %+v (%v), want %+v (%v)", i, a, aerr, b, berr)
	}
}

// benchRecord is a `true` job as it runs: jobspec, R, an annotation.
func benchRecord(b *testing.B) *Record {
	b.Helper()
	raw, err := (func() ([]byte, error) {
		js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/root"})
		if err != nil {
			return nil, err
		}
		return js.MarshalJSON()
	})()
	if err != nil {
		b.Fatal(err)
	}
	js, err := jobspec.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	r, err := rset.Parse([]byte(`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"3"}}],"nodelist":["node0"],"starttime":0,"expiration":0}}`))
	if err != nil {
		b.Fatal(err)
	}
	j := &job.Job{ID: 123456789, UserID: 0, State: job.Run, Urgency: 16, Priority: 16, TSubmit: 1764196464.123456, TRun: 1764196464.223456,
		Annotations: map[string]any{"sched": map[string]any{"resource_summary": "rank0/core3"}}}
	return &Record{Job: j, Jobspec: js, Raw: raw, R: r}
}

func BenchmarkSummary(b *testing.B) {
	rec := benchRecord(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := summary(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSummaryEncode compares the reflective encoder with
// appendSummary on a running `true` job's summary.
func BenchmarkSummaryEncode(b *testing.B) {
	s := Summarize(benchRecord(b))
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appendSummary", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := appendSummary(make([]byte, 0, 384), s); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkUsageEncode compares the two encoders on what SetUsage stores.
func BenchmarkUsageEncode(b *testing.B) {
	u := execproto.Usage{UserCPU: 0.000512, SysCPU: 0.001024, MaxRSS: 1536000}
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(u); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appendUsage", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := appendUsage(make([]byte, 0, 64), &u); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A summary stored at each step of a job's life reads back, as a restart's
// Load reads it, as the summary it was made from.
func TestStoredSummaryLoads(t *testing.T) {
	st := openStore(t)
	raw := spec(t, jobspec.Options{Command: []string{"sh", "-c", "echo <&>"}, Cwd: "/tmp/a b", Name: "naïve"})
	err := st.Update(func(tx *store.Tx) error {
		ids, recs, err := Submit(tx, time.Now(), []SubmitRequest{{Jobspec: raw, UserID: 5, Urgency: 16}}, nil)
		if err != nil {
			return err
		}
		rec := recs[0]
		check := func(step string) {
			t.Helper()
			if err := SaveSummary(tx, rec); err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			back, err := Load(tx, ids[0])
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			if diff := cmp.Diff(Summarize(rec), back.Summary); diff != "" {
				t.Errorf("%s: loaded summary (-made +loaded):\n%s", step, diff)
			}
		}
		check("submitted")
		ev := func(name string, ctx map[string]any) {
			t.Helper()
			if err := Append(tx, rec, eventlog.Event{Timestamp: 1764196464.25, Name: name, Context: ctx}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		ev(job.EventDepend, nil)
		ev(job.EventPriority, map[string]any{"priority": 16})
		check("pending")
		if err := SetR(tx, rec, json.RawMessage(`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"3"}}],"nodelist":["node0"],"starttime":0,"expiration":0}}`)); err != nil {
			return err
		}
		ev(job.EventAlloc, map[string]any{"annotations": map[string]any{"sched": map[string]any{"resource_summary": "rank0/core3"}}})
		ev(job.EventStart, nil)
		check("running")
		if err := SetUsage(tx, rec, execproto.Usage{UserCPU: 0.0005, SysCPU: 0.25, MaxRSS: 1 << 20}); err != nil {
			return err
		}
		ev(job.EventFinish, map[string]any{"status": 256})
		ev(job.EventRelease, map[string]any{"ranks": "all", "final": true})
		ev(job.EventFree, nil)
		ev(job.EventClean, nil)
		check("inactive")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Every field of a summary, and of its usage, is one appendSummary writes:
// with each field set, the two encodings still agree, so a field added to
// api.JobSummary or execproto.Usage fails here until the encoder has it.
func TestAppendSummaryHasEveryField(t *testing.T) {
	var s Summary
	fill(reflect.ValueOf(&s).Elem())
	same(t, 0, &s)
	b, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	if n := reflect.TypeOf(s).NumField(); len(keys) != n {
		t.Errorf("the filled summary encodes %d keys, want all %d fields: %s", len(keys), n, b)
	}
}

// fill sets every field of v to a value that is not its zero value.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(reflect.ValueOf("k"), reflect.ValueOf("v"))
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Bool:
		v.SetBool(true)
	}
}
