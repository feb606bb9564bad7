package wire

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sameAsDecoder fails t if parseSent takes line and reads it otherwise
// than the decoder does.
func sameAsDecoder(t *testing.T, line []byte) bool {
	t.Helper()
	m, ok := parseSent(line)
	if !ok {
		return false
	}
	want, err := decodeFull(line)
	if err != nil {
		if m.Validate() == nil {
			t.Fatalf("parseSent(%q) = %+v; the decoder refuses it: %v", line, m, err)
		}
		return true
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Fatalf("parseSent(%q) (-decoder +parseSent):\n%s", line, diff)
	}
	return true
}

// What parseSent takes it reads as the decoder does; what it declines
// (other key orders, spaces, escapes, unknown keys, bad JSON) the decoder
// reads.
func TestParseSentAsDecoder(t *testing.T) {
	for _, tc := range []struct {
		line string
		fast bool
	}{
		{`{"topic":"agent.start","type":"response","payload":{"id":1,"type":"finish","data":{"status":0}}}`, true},
		{`{"topic":"agent.start","type":"request","payload":{"id":1,"jobspec":{"a":"x y"},"R":null}}`, true},
		{`{"topic":"agent.start","type":"response","errnum":71,"errstr":"bad start"}`, true},
		{`{"topic":"agent.start","type":"response","errnum":-5}`, true},
		{`{"topic":"sched.free","type":"response"}`, true},
		{`{"topic":"sched.free","type":"response","payload":{"id":1},"matchtag":3,"flags":64}`, true},
		{`{"topic":"sched.free","type":"response","matchtag":3}`, true},
		{`{"topic":"sched.free","type":"response","flags":64}`, true},
		{`{"topic":"sched.free","type":"response","matchtag":0}`, false},            // Send leaves a zero out
		{`{"topic":"sched.free","type":"response","flags":64,"matchtag":3}`, false}, // another order
		{`{"topic":"sched.free","type":"response","matchtag":-3}`, false},           // both refuse
		{`{"topic":"sched.free","type":"response","matchtag":4294967296}`, false},   // both refuse
		{`{"topic":"a","type":"response","payload":1}`, true},
		{`{"topic":"a","type":"response","payload":"x"}`, true},
		{`{"topic":"","type":"response"}`, true},                      // both refuse: no topic
		{`{"topic":"a","type":"neither"}`, true},                      // both refuse: the type
		{`{"topic":"a","type":"request","errnum":3}`, true},           // both refuse: a request with an error
		{`{"topic":"a","type":"response","payload":null}`, false},     // Send leaves null out
		{`{"topic":"a","type":"response","errnum":0}`, false},         // and a zero errnum
		{`{"topic":"a","type":"response","errstr":""}`, false},        // and an empty errstr
		{`{"type":"response","topic":"a"}`, false},                    // another order
		{`{"topic": "a","type":"response"}`, false},                   // a space
		{`{"topic":"a","type":"response","payload":{"a": 1}}`, false}, // not compact
		{`{"topic":"a\u0041","type":"response"}`, false},              // an escape
		{`{"topic":"é","type":"response"}`, false},                    // not ASCII
		{`{"topic":"a","type":"response","extra":1}`, false},          // unknown key
		{`{"topic":"a","type":"response","payload":{"a":1}`, false},   // cut short
		{`{"topic":"a","type":"response","payload":{"a":}}`, false},   // bad JSON
		{`{"topic":"a","type":"response","errnum":071}`, false},       // bad number
		{`{"topic":"a","type":"response","errnum":1.5}`, false},
		{`{"topic":"a","type":"response","errnum":12345678901}`, false},
		{`{"topic":"a","type":"response"} `, false},
	} {
		if got := sameAsDecoder(t, []byte(tc.line)); got != tc.fast {
			t.Errorf("parseSent(%q) took it: %v, want %v", tc.line, got, tc.fast)
		}
	}
}

func FuzzParseSent(f *testing.F) {
	f.Add([]byte(`{"topic":"agent.start","type":"response","payload":{"id":1,"type":"finish","data":{"status":0}}}`))
	f.Add([]byte(`{"topic":"agent.start","type":"response","errnum":71,"errstr":"bad start"}`))
	f.Add([]byte(`{"topic":"a","type":"response","payload":[1,"x",{"b":null}]}`))
	f.Add([]byte(`{"topic":"a","type":"request","payload":{},"matchtag":12,"flags":64}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		sameAsDecoder(t, line)
	})
}

// BenchmarkDecodeLine reads an exec agent's responses to one job's start
// (start, finish, release) as Recv does, and as the decoder alone did.
func BenchmarkDecodeLine(b *testing.B) {
	lines := [][]byte{
		[]byte(`{"topic":"agent.start","type":"response","payload":{"id":1234567890123,"type":"start","data":{}}}`),
		[]byte(`{"topic":"agent.start","type":"response","payload":{"id":1234567890123,"type":"finish","data":{"status":0,"usage":{"user_cpu":0.000512,"sys_cpu":0.000731,"max_rss":1843200}}}}`),
		[]byte(`{"topic":"agent.start","type":"response","payload":{"id":1234567890123,"type":"release","data":{"ranks":"all","final":true}}}`),
	}
	for _, bc := range []struct {
		name   string
		decode func([]byte) (Message, error)
	}{{"decodeLine", decodeLine}, {"decoder", decodeFull}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, l := range lines {
					if _, err := bc.decode(l); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
