package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// A struct field may name its kind for messages with a `kind` tag, where
// its Go type says too little: `kind:"a duration string"` on a string
// holding an FSD.
const kindTag = "kind"

// typeError walks a parsed TOML document against the shape of Config,
// following the toml tags, and returns the first value of the wrong type,
// in key order, in the config's words: `[queues.batch.policy.access]:
// allow-user must be an array of strings`. Keys that Config lacks are left
// to the strict decoder, whose unknown-key messages are already Flux's.
// Nil means every known key has a value of its kind.
func typeError(doc map[string]any) error {
	return checkTable(doc, reflect.TypeFor[Config](), nil)
}

// checkTable checks the keys of the table at path against struct type t.
func checkTable(doc map[string]any, t reflect.Type, path []string) error {
	for _, key := range sortedKeys(doc) {
		f, ok := field(t, key)
		if !ok {
			continue
		}
		if err := checkValue(doc[key], f.Type, f.Tag.Get(kindTag), path, key); err != nil {
			return err
		}
	}
	return nil
}

// checkValue checks the value of key, in the table at path, against type t.
func checkValue(v any, t reflect.Type, words string, path []string, key string) error {
	t = deref(t)
	// Made only when needed: a large config has millions of values.
	wrong := func() error {
		if words == "" {
			words = kindWords(t)
		}
		return fmt.Errorf("%s: %s must be %s", table(path), key, words)
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return wrong()
		}
		return checkTable(m, t, append(slices.Clip(path), key))
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return wrong()
		}
		if t.Elem().Kind() == reflect.Interface {
			return nil // an opaque table, such as policy.scheduler
		}
		for _, k := range sortedKeys(m) {
			if err := checkValue(m[k], t.Elem(), "", append(slices.Clip(path), key), k); err != nil {
				return err
			}
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return wrong()
		}
		elem := deref(t.Elem())
		for i, e := range arr {
			if elem.Kind() == reflect.Struct {
				m, ok := e.(map[string]any)
				if !ok {
					return wrong()
				}
				if err := checkTable(m, elem, append(slices.Clip(path), fmt.Sprintf("%s[%d]", key, i))); err != nil {
					return err
				}
				continue
			}
			// An element of the wrong kind makes the whole array wrong:
			// "must be an array of strings" says what to write.
			if !scalarFits(e, elem) {
				return wrong()
			}
		}
	default:
		if !scalarFits(v, t) {
			return wrong()
		}
	}
	return nil
}

// scalarFits reports whether a TOML value fits t, a string, boolean or
// integer type.
func scalarFits(v any, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String:
		_, ok := v.(string)
		return ok
	case reflect.Bool:
		_, ok := v.(bool)
		return ok
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, ok := v.(int64)
		return ok
	}
	return true // no such key in Config; the decoder has the last word
}

// kindWords names a Go type as TOML does.
func kindWords(t reflect.Type) string {
	t = deref(t)
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean (true or false)"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Struct, reflect.Map:
		return "a table"
	case reflect.Slice:
		return "an array of " + plural(kindWords(t.Elem()))
	}
	return "a " + t.Kind().String()
}

// plural turns "a string" into "strings" for "an array of strings".
func plural(words string) string {
	w := strings.TrimPrefix(strings.TrimPrefix(words, "a "), "an ")
	if i := strings.IndexByte(w, ' '); i >= 0 {
		return w[:i] + "s" + w[i:]
	}
	return w + "s"
}

// field finds the struct field a key decodes into, as the decoder does:
// by toml tag, else by name, exactly first, then ignoring case.
func field(t reflect.Type, key string) (reflect.StructField, bool) {
	var fold reflect.StructField
	found := false
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := tomlName(f)
		if name == "-" {
			continue
		}
		if name == key {
			return f, true
		}
		if !found && strings.EqualFold(name, key) {
			fold, found = f, true
		}
	}
	return fold, found
}

// tomlName is the key a field is written as.
func tomlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
