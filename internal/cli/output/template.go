package output

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/printable"
	"github.com/fluxq/fluxq/internal/fsd"
)

// isTemplate tells a template from a preset name: a template has an action.
func isTemplate(s string) bool { return strings.Contains(s, "{{") }

// funcs are the helpers a -o template may call besides text/template's.
var funcs = template.FuncMap{
	// json writes a value as compact JSON.
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	// fsd writes seconds as a human duration, as flux jobs' "!F".
	"fsd": func(v any) (string, error) {
		f, err := toFloat(v)
		if err != nil {
			return "", err
		}
		return fsd.Format(f), nil
	},
	// time writes seconds since the epoch in local time, RFC 3339 or the
	// given Go layout; 0 (never) is "".
	"time": func(v any, layout ...string) (string, error) {
		f, err := toFloat(v)
		if err != nil || f == 0 {
			return "", err
		}
		l := time.RFC3339
		if len(layout) > 0 {
			l = layout[0]
		}
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)).Format(l), nil
	},
	"upper": strings.ToUpper,
	"lower": strings.ToLower,
	"join": func(sep string, v any) string {
		list, _ := v.([]any)
		s := make([]string, len(list))
		for i, x := range list {
			s[i] = fmt.Sprint(x)
		}
		return strings.Join(s, sep)
	},
}

func parseTemplate(s string) (*template.Template, error) {
	t, err := template.New("format").Funcs(funcs).Parse(s)
	if err != nil {
		return nil, exitcode.UsageErrorf("--format: %v", strings.TrimPrefix(err.Error(), "template: "))
	}
	return t, nil
}

// execTemplate runs t over v's --json fields (so a template names them as
// --json does: {{.id_f58}}), ending the output with a newline.
func execTemplate(w *bufio.Writer, t *template.Template, deep map[string]bool, v any) error {
	fields, err := Fields(v)
	if err != nil {
		return err
	}
	fields = schemaOf(reflect.TypeOf(v)).fill(fields, deep, "")
	// The fields are users' text, printed among the template's own: no
	// escape sequence of theirs reaches the terminal (--json keeps them).
	fields = printable.Tree(fields)
	var buf bytes.Buffer
	if err := t.Execute(&buf, fields); err != nil {
		return fmt.Errorf("--format: %v", strings.TrimPrefix(err.Error(), "template: "))
	}
	w.Write(buf.Bytes())
	if buf.Len() == 0 || buf.Bytes()[buf.Len()-1] != '\n' {
		w.WriteByte('\n')
	}
	return nil
}

// Fields returns v as its JSON encoding decodes: maps, slices, strings,
// bools, and numbers as int64 when integral (so {{printf "%d" .id}} works)
// or json.Number otherwise (so a time prints as written, not as 1.7e+09).
func Fields(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return numbers(out), nil
}

func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return u
		}
	}
	return v
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case nil, *noValue:
		return 0, nil
	case int64:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case float64:
		return x, nil
	case int:
		return float64(x), nil
	case json.Number:
		return x.Float64()
	case string:
		return strconv.ParseFloat(x, 64)
	}
	return 0, fmt.Errorf("not a number: %v", v)
}
