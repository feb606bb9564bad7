package store

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// commentTree is the bucket tree drawn in this package's comment
// (store.go): the lines between its introduction and the paragraph after.
func commentTree(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("store.go")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		if l == "package store" {
			break
		}
		if strings.HasPrefix(l, "//\tmeta/") {
			in = true
		}
		if !in {
			continue
		}
		if !strings.HasPrefix(l, "//\t") {
			break
		}
		lines = append(lines, strings.TrimPrefix(l, "//\t"))
	}
	if len(lines) == 0 {
		t.Fatal("store.go's comment draws no bucket tree")
	}
	return lines
}

// docTree is the copy of it in docs/architecture.md, "The bucket tree".
func docTree(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## The bucket tree\n")
	_, block, ok2 := strings.Cut(sec, "\n```\n")
	block, _, ok3 := strings.Cut(block, "\n```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal(`docs/architecture.md has no bucket tree ("## The bucket tree", then a block)`)
	}
	return strings.Split(block, "\n")
}

// treeNode is a bucket or key as the tree draws it: its path, each
// <placeholder> written <>, and a bucket's ending in "/".
var (
	nameCol     = regexp.MustCompile(`^( *)(\S(?:\S| \S)*)`)
	placeholder = regexp.MustCompile(`<[^>]*>`)
)

// treePaths reads a drawn tree as the paths it names. A line's name is
// its first column (up to two spaces); its indent, four spaces a level,
// places it under the bucket above it; a line indented past every name
// goes on describing the one before it.
func treePaths(t *testing.T, lines []string) []string {
	t.Helper()
	var stack []string // the buckets open at each depth
	var out []string
	for _, l := range lines {
		m := nameCol.FindStringSubmatch(l)
		if m == nil || len(m[1]) > 8 {
			continue // blank, or a description's next line
		}
		if len(m[1])%4 != 0 {
			t.Errorf("tree line %q: indent of %d spaces", l, len(m[1]))
			continue
		}
		depth := len(m[1]) / 4
		if depth > len(stack) {
			t.Errorf("tree line %q: under no bucket", l)
			continue
		}
		stack = stack[:depth]
		name := placeholder.ReplaceAllString(m[2], "<>")
		parent := strings.Join(stack, "")
		// "drain/<rank>": a bucket and its keys, drawn on one line.
		for {
			head, rest, ok := strings.Cut(name, "/")
			if !ok || rest == "" {
				break
			}
			out = append(out, parent+head+"/")
			parent += head + "/"
			name = rest
		}
		out = append(out, parent+name)
		if strings.HasSuffix(name, "/") {
			stack = append(stack, strings.TrimPrefix(parent+name, strings.Join(stack, "")))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// walk names every bucket and key of a store file as the tree draws
// them: a name the tree draws as a placeholder under its bucket (a job's
// id, a queue's name) as <>.
func walk(t *testing.T, db *bolt.DB, drawn []string) []string {
	t.Helper()
	has := map[string]bool{}
	for _, p := range drawn {
		has[p] = true
	}
	var out []string
	var visit func(prefix string, b *bolt.Bucket) error
	named := func(prefix string, k []byte, bucket bool) string {
		end := ""
		if bucket {
			end = "/"
		}
		if p := prefix + string(k) + end; has[p] {
			return p
		}
		return prefix + "<>" + end
	}
	visit = func(prefix string, b *bolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			if v != nil {
				out = append(out, named(prefix, k, false))
				return nil
			}
			p := named(prefix, k, true)
			out = append(out, p)
			return visit(p, b.Bucket(k))
		})
	}
	err := db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			p := string(name) + "/"
			out = append(out, p)
			return visit(p, b)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// writeEveryRecord writes every record the code writes, through Tx, once each.
func writeEveryRecord(t *testing.T, s *Store) {
	t.Helper()
	err := s.Update(func(tx *Tx) error {
		for _, err := range []error{
			tx.SetLastJobID(1 << 24),
			tx.PutQueueConfig([]byte(`{}`)),
			tx.PutReservationConfig([]byte(`{}`)),
			tx.PutBootID("boot"),
			tx.PutReservation(1, []byte(`{"id":"r1"}`)),
			tx.CreateJob(1<<24, map[string][]byte{JobJobspec: []byte(`{}`), JobEventlog: []byte("{}\n"), JobR: []byte(`{}`), JobSummary: []byte(`{}`), JobUsage: []byte(`{}`), JobWaitable: []byte{1}, JobResubmitted: []byte(`[]`)}),
			tx.PutQueue("", []byte(`{}`)),
			tx.PutQueue("batch", []byte(`{}`)),
			tx.PutInventory([]byte(`{}`)),
			tx.PutDrain(0, []byte(`{}`)),
			tx.PutSpare("spare1", []byte(`{}`)),
		} {
			if err != nil {
				return err
			}
		}
		if _, err := tx.AppendToolEvent("alice", []byte(`{}`)); err != nil {
			return err
		}
		// As a move to schema 3 under way has it (migrate).
		return tx.tx.Bucket(bucketMeta).Put(keyMigrating, []byte{1})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The bucket tree is drawn once, in three places that must agree:
// docs/architecture.md's copy is store.go's comment, line for line, and
// the comment names every bucket and key the code writes, and no other.
func TestBucketTreeDrawn(t *testing.T) {
	doc, comment := docTree(t), commentTree(t)
	if !slices.Equal(doc, comment) {
		for i := 0; i < max(len(doc), len(comment)); i++ {
			var d, c string
			if i < len(doc) {
				d = doc[i]
			}
			if i < len(comment) {
				c = comment[i]
			}
			if d != c {
				t.Errorf("docs/architecture.md's bucket tree differs from store.go's comment at line %d:\n doc:     %q\n comment: %q", i+1, d, c)
				break
			}
		}
	}
	drawn := treePaths(t, comment)
	s, _ := open(t)
	writeEveryRecord(t, s)
	got := walk(t, s.db, drawn)
	for _, p := range got {
		if !slices.Contains(drawn, p) {
			t.Errorf("the store has %s, which the tree does not draw", p)
		}
	}
	for _, p := range drawn {
		if !slices.Contains(got, p) {
			t.Errorf("the tree draws %s, which the store does not have", p)
		}
	}
	if t.Failed() {
		t.Logf("drawn: %s", strings.Join(drawn, " "))
		t.Logf("store: %s", strings.Join(got, " "))
	}
	var schema []byte
	s.db.View(func(tx *bolt.Tx) error {
		schema = bytes.Clone(tx.Bucket(bucketMeta).Get(keySchema))
		return nil
	})
	if want := u64(SchemaVersion); !bytes.Equal(schema, want) {
		t.Errorf("schema = %x, want %x", schema, want)
	}
	if !strings.Contains(fmt.Sprint(doc), "(schema 3)") || SchemaVersion != 3 {
		t.Errorf("the tree is drawn for schema 3; the code is at %d", SchemaVersion)
	}
}
