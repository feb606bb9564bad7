package wire

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// BenchmarkLineConnSend measures one start-request-sized message (~2 KB of
// compact JSON payload, like a jobspec with the submitter's environment and
// R) going out on a line connection: the per-hop cost of the exec router.
func BenchmarkLineConnSend(b *testing.B) {
	env := map[string]string{}
	for i := 0; i < 40; i++ {
		env["VAR_"+strings.Repeat("x", i%7)+string(rune('A'+i%26))] = strings.Repeat("v", 30)
	}
	p, err := json.Marshal(map[string]any{"id": 12345, "jobspec": map[string]any{"environment": env}, "R": map[string]any{"version": 1}})
	if err != nil {
		b.Fatal(err)
	}
	m := Message{Topic: "exec.start", Type: Request, Payload: p}
	c := NewLineConn(strings.NewReader(""), io.Discard, nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		if err := c.Send(m); err != nil {
			b.Fatal(err)
		}
	}
}
