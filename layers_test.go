package fluxq_test

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/fluxq/fluxq"

// layerTable reads the layer table of docs/architecture.md: each package
// it names, and its layer. A bare name in a row is in the folder of the
// path named before it in that row (`internal/jobspec`, `rset`), a path
// that does not start with internal/ or cmd/ is under internal/, and what
// an arrow points at, "(→ `jobmgr`)", is named for the import, not
// placed. It also returns the packages of layers 9 and 10 that the rules
// let import os and net.
func layerTable(t *testing.T) (layers map[string]int, osAllowed map[string]bool) {
	b, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	tick := regexp.MustCompile("`([a-z0-9/]+)`")
	_, rule, ok := strings.Cut(string(b), "(layers 9 and 10, except ")
	rule, _, _ = strings.Cut(rule, ")")
	if !ok {
		t.Fatal("docs/architecture.md has no rule on layers 9 and 10")
	}
	osAllowed = map[string]bool{}
	for _, m := range tick.FindAllStringSubmatch(rule, -1) {
		osAllowed["internal/"+m[1]] = true
	}
	_, rest, ok := strings.Cut(string(b), "| # | layer | packages |")
	if !ok {
		t.Fatal("docs/architecture.md has no layer table")
	}
	arrow := regexp.MustCompile(`\(→[^)]*\)`)
	layers = map[string]int{}
	for _, line := range strings.Split(rest, "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			t.Fatalf("layer table row %q", line)
		}
		n, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if err != nil {
			t.Fatalf("layer table row %q: %v", line, err)
		}
		dir := "internal"
		for _, m := range tick.FindAllStringSubmatch(arrow.ReplaceAllString(cells[3], ""), -1) {
			p := m[1]
			switch {
			case strings.HasPrefix(p, "internal/") || strings.HasPrefix(p, "cmd/"):
				dir = filepath.Dir(p)
			case strings.Contains(p, "/"):
				p = "internal/" + p
			default:
				p = dir + "/" + p
			}
			if old, ok := layers[p]; ok && old != n {
				t.Errorf("%s is in layers %d and %d", p, old, n)
			}
			layers[p] = n
		}
	}
	return layers, osAllowed
}

// The layer table of docs/architecture.md is the code's: every package
// is in it, imports point down it (a package imports its own layer's or a
// lower one's, whose number is higher), and the rule and format packages
// import neither os nor net but where the page says they may.
func TestLayersDrawn(t *testing.T) {
	layers, osAllowed := layerTable(t)
	seen := map[string]bool{}
	for _, root := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			pkg, err := build.ImportDir(path, 0)
			if err != nil {
				return nil // no Go package here (a folder of folders)
			}
			seen[path] = true
			n, ok := layers[path]
			if !ok {
				t.Errorf("package %s is in no layer of docs/architecture.md's table", path)
				return nil
			}
			for _, imp := range pkg.Imports {
				if (imp == "os" || imp == "net") && n >= 9 && !osAllowed[path] {
					t.Errorf("%s (layer %d) imports %s, which the rules of its layer forbid", path, n, imp)
				}
				dep, ok := strings.CutPrefix(imp, modulePath+"/")
				if !ok {
					continue
				}
				if m, ok := layers[dep]; ok && m < n {
					t.Errorf("%s (layer %d) imports %s (layer %d): imports point down the table", path, n, dep, m)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for p := range layers {
		if !seen[p] {
			t.Errorf("docs/architecture.md's layer table names %s, which is no package", p)
		}
	}
}
