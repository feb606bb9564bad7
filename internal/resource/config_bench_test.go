package resource

import (
	"fmt"
	"testing"
)

// BenchmarkFromConfigProperties builds the inventory of 1,000 hosts with
// 4,000 properties each, given as one entry per property (the shape a
// site writes when properties mark groups of hosts): issue 13's
// `config check` that took 24 s.
func BenchmarkFromConfigProperties(b *testing.B) {
	entries := []ConfigEntry{{Hosts: "n[0-999]", Cores: "0-3"}}
	for j := range 4000 {
		entries = append(entries, ConfigEntry{Hosts: "n[0-999]", Properties: []string{fmt.Sprintf("p%d", j)}})
	}
	for b.Loop() {
		if _, err := FromConfig(entries); err != nil {
			b.Fatal(err)
		}
	}
}
