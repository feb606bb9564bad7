package state

import (
	"strings"
	"testing"
	"unsafe"
)

// A short shape is kept once and handed back; a long one (a guest's
// constraints) is never kept, so the table cannot be filled with them.
func TestShapeTableKeepsOnlyShortShapes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape string
		kept  bool
	}{
		{"one core", "1 1 1 0 0 false 0 test-short", true},
		{"at the bound", strings.Repeat("a", maxShapeLen), true},
		{"past the bound", strings.Repeat("b", maxShapeLen+1), false},
		{"long constraints", "1 1 1 0 0 false 0 c=" + strings.Repeat(`{"properties":["x"]}`, 100), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := shapeTable{m: map[string]string{}}
			a := tab.of([]byte(tc.shape))
			b := tab.of([]byte(tc.shape))
			if a != tc.shape || b != tc.shape {
				t.Fatalf("of changed the shape: %q, %q", a, b)
			}
			same := unsafe.StringData(a) == unsafe.StringData(b)
			if same != tc.kept || (len(tab.m) == 1) != tc.kept {
				t.Errorf("kept: one copy %v, table %d entries; want kept %v", same, len(tab.m), tc.kept)
			}
		})
	}
}
