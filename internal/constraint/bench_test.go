package constraint

import (
	"fmt"
	"testing"
)

func BenchmarkParseQuery(b *testing.B) {
	q := "(gpu|bigmem) ^slow host:node[0-1023] -rank:17,99 not (a,b|c)"
	for b.Loop() {
		if _, err := ParseQuery(q); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseJSON(b *testing.B) {
	data := []byte(`{"and":[{"or":[{"properties":["gpu"]},{"properties":["bigmem"]}]},` +
		`{"properties":["^slow"]},{"hostlist":["node[0-1023]"]},{"not":[{"ranks":["17,99"]}]}]}`)
	for b.Loop() {
		if _, err := ParseJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatch is the scheduler's filter: one constraint over 1024 nodes.
func BenchmarkMatch(b *testing.B) {
	c, err := ParseQuery("(gpu|bigmem) ^slow host:node[0-1023] -rank:17,99")
	if err != nil {
		b.Fatal(err)
	}
	nodes := make([]Node, 1024)
	for i := range nodes {
		nodes[i] = Node{Rank: uint(i), Hostname: fmt.Sprintf("node%d", i), Properties: []string{"gpu", "ssd"}}
	}
	b.ResetTimer()
	for b.Loop() {
		n := 0
		for i := range nodes {
			if c.Match(nodes[i]) {
				n++
			}
		}
		if n != 1022 {
			b.Fatalf("matched %d nodes, want 1022", n)
		}
	}
}
