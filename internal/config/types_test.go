package config

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// typeCase is one key of the config set to a value of the wrong type.
type typeCase struct {
	doc  map[string]any // the whole document
	want string         // the message after "FILE: "
}

// step is one level of the document on the way to a key: a table key,
// a map's sample key, or an array of tables' first entry.
type step struct {
	key   string
	array bool
}

// wrongTypeCases walks Config as a user would write it, so a key added
// to any table is covered without touching this test: for every key it
// makes a document with that key, and only it, of the wrong type.
func wrongTypeCases(t *testing.T) []typeCase {
	t.Helper()
	var cases []typeCase
	var walk func(typ reflect.Type, at []step)
	walk = func(typ reflect.Type, at []step) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				t.Fatalf("%s.%s has no toml tag", typ, f.Name)
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			value, words := wrongValue(t, ft, f.Tag.Get("kind"))
			cases = append(cases, typeCase{doc: build(at, name, value), want: fmt.Sprintf("%s: %s must be %s", tableOf(at), name, words)})
			switch {
			case ft.Kind() == reflect.Struct:
				walk(ft, append(append([]step{}, at...), step{key: name}))
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), append(append([]step{}, at...), step{key: name, array: true}))
			case ft.Kind() == reflect.Slice:
				// An element of the wrong kind: the array is wrong.
				cases = append(cases, typeCase{doc: build(at, name, []any{true}), want: fmt.Sprintf("%s: %s must be %s", tableOf(at), name, words)})
			case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
				in := append(append([]step{}, at...), step{key: name})
				cases = append(cases, typeCase{doc: build(in, "batch", int64(1)), want: fmt.Sprintf("%s: batch must be a table", tableOf(in))})
				walk(ft.Elem(), append(in, step{key: "batch"}))
			}
		}
	}
	walk(reflect.TypeFor[Config](), nil)
	return cases
}

// wrongValue is a value of another type than typ, and how the message
// names typ. The words are spelled out here, not taken from the code.
func wrongValue(t *testing.T, typ reflect.Type, kind string) (any, string) {
	t.Helper()
	var v any
	var words string
	switch typ.Kind() {
	case reflect.String:
		v, words = int64(1), "a string"
	case reflect.Bool:
		v, words = "yes", "a boolean (true or false)"
	case reflect.Int, reflect.Int64:
		v, words = "1", "an integer"
	case reflect.Struct, reflect.Map:
		v, words = int64(1), "a table"
	case reflect.Slice:
		switch typ.Elem().Kind() {
		case reflect.String:
			v, words = "x", "an array of strings"
		case reflect.Struct:
			v, words = "x", "an array of tables"
		}
	}
	if words == "" {
		t.Fatalf("no wrong value for %s: add its kind to this test", typ)
	}
	if kind != "" {
		words = kind
	}
	return v, words
}

// build is the document with value at key, below the steps.
func build(at []step, key string, value any) map[string]any {
	leaf := map[string]any{key: value}
	doc := leaf
	for i := len(at) - 1; i >= 0; i-- {
		var v any = doc
		if at[i].array {
			v = []any{doc}
		}
		doc = map[string]any{at[i].key: v}
	}
	return doc
}

func tableOf(at []step) string {
	if len(at) == 0 {
		return "top level"
	}
	var parts []string
	for _, s := range at {
		if s.array {
			parts = append(parts, s.key+"[0]")
		} else {
			parts = append(parts, s.key)
		}
	}
	return "[" + strings.Join(parts, ".") + "]"
}

// TestWrongTypes: every key of every table, set to a value of the wrong
// type, is refused in the config's words (issue 13), not Go's.
func TestWrongTypes(t *testing.T) {
	cases := wrongTypeCases(t)
	// The walk reaches the nested tables, not only the top.
	for _, want := range []string{
		"[queues.batch.policy.access]: allow-user must be an array of strings",
		"[queues.batch.policy.limits.job-size.max]: ncores must be an integer",
		"[resource.config[0]]: properties must be an array of strings",
		"[access]: allow-guest-user must be a boolean (true or false)",
		"[exec]: kill-timeout must be a duration string",
		"[policy.jobspec.defaults.system]: duration must be a duration string",
		"[policy.jobspec.defaults.system]: memory must be a size string",
		"[queues.batch.policy.limits.job-size.max]: memory must be a size string",
		"[reservation]: unsupported must be an array of strings",
		"[sched]: queue-depth must be an integer",
		"[queues.batch.policy]: scheduler must be a table",
		"[resource]: config must be an array of tables",
		"[queues]: batch must be a table",
	} {
		if !slices.ContainsFunc(cases, func(c typeCase) bool { return c.want == want }) {
			t.Errorf("no case %q", want)
		}
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			b, err := toml.Marshal(tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			p := write(t, dir, "c.toml", string(b))
			_, err = Load(p)
			if want := p + ": " + tc.want; err == nil || err.Error() != want {
				t.Errorf("Load of\n%s\nerr = %v\nwant  %s", b, err, want)
			}
		})
	}
}

// The example, and arrays whose elements are of the wrong kind.
func TestWrongTypeMessages(t *testing.T) {
	tests := []struct{ content, want string }{
		{"[queues.batch.policy.access]\nallow-user = \"alice\"\n", "[queues.batch.policy.access]: allow-user must be an array of strings"},
		{"[queues.batch]\nrequires = [\"a\", 2]\n", "[queues.batch]: requires must be an array of strings"},
		{"[[resource.config]]\nhosts = \"a\"\ncores = \"0\"\n[[resource.config]]\nhosts = \"b\"\ncores = 0\n", "[resource.config[1]]: cores must be a string"},
		{"resource = [1]\n", "top level: resource must be a table"},
		{"[resource]\nconfig = [1]\n", "[resource]: config must be an array of tables"},
		// The decoder alone would take one table for an array of one.
		{"[resource.config]\nhosts = \"n0\"\ncores = \"0\"\n", "[resource]: config must be an array of tables"},
		// Keys are matched as the decoder matches them, case aside.
		{"[SCHED]\nQueue-Depth = \"1\"\n", "[SCHED]: Queue-Depth must be an integer"},
		{"[policy.limits]\njob-size.max.nnodes = 1.5\n", "[policy.limits.job-size.max]: nnodes must be an integer"},
		{"[sched]\nmode = 8\n", "[sched]: mode must be a string"},
		{"[exec]\nkill-timeout = 5\n", "[exec]: kill-timeout must be a duration string"},
		{"[exec]\nagent-idle-timeout = 5\n", "[exec]: agent-idle-timeout must be a duration string"},
		{"[policy.limits]\nduration = 1979-05-27\n", "[policy.limits]: duration must be a duration string"},
		{"[queues]\nbatch = \"x\"\n", "[queues]: batch must be a table"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			p := write(t, dir, "c.toml", tc.content)
			_, err := Load(p)
			if want := p + ": " + tc.want; err == nil || err.Error() != want {
				t.Errorf("Load err = %v, want %s", err, want)
			}
		})
	}
}

// In a directory the message names the directory, as other errors do.
func TestWrongTypeInDirectory(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "1.toml", "[sched]\npolicy = \"easy\"\n")
	write(t, dir, "2.toml", "[access]\nallow-guest-user = \"yes\"\n")
	_, err := Load(dir)
	if want := filepath.Clean(dir) + ": [access]: allow-guest-user must be a boolean (true or false)"; err == nil || err.Error() != want {
		t.Errorf("Load err = %v, want %s", err, want)
	}
}
