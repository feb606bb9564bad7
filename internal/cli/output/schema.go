package output

import (
	"encoding"
	"reflect"
	"slices"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
)

// schema is the set of fields a value's JSON encoding can have, so that a
// -o template naming a field that does not exist is an error that lists
// those that do (not "<no value>" on every line), and a field that exists
// but has no value yet (omitted from the JSON: a pending job's t_run)
// prints empty.
type schema struct {
	fields map[string]*schema // nil: a leaf, or an object whose keys vary
	elem   *schema            // of a list
	open   bool               // a map or its own encoding: any keys below
}

var schemas sync.Map // reflect.Type -> *schema

// schemaOf returns the schema of values of t's type, built from the
// struct fields' json tags.
func schemaOf(t reflect.Type) *schema {
	if s, ok := schemas.Load(t); ok {
		return s.(*schema)
	}
	s := buildSchema(t, map[reflect.Type]*schema{})
	schemas.Store(t, s)
	return s
}

func buildSchema(t reflect.Type, seen map[reflect.Type]*schema) *schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := seen[t]; ok {
		return s
	}
	s := &schema{}
	seen[t] = s
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if implementsMarshaler(t) {
			s.open = true // raw JSON: any shape
			return s
		}
		if t.Elem().Kind() != reflect.Uint8 { // []byte is a string in JSON
			s.elem = buildSchema(t.Elem(), seen)
		}
	case reflect.Map, reflect.Interface:
		s.open = true // any keys: what is there is known only from a value
	case reflect.Struct:
		if implementsMarshaler(t) {
			s.open = true
			return s // its own encoding: a leaf to us
		}
		if implementsTextMarshaler(t) {
			// JSON writes it as a string (a reservation's owner,
			// "tool:root"): a leaf with no fields, not the Go struct's,
			// which no item's JSON has and which would print nothing.
			return s
		}
		s.fields = map[string]*schema{}
		addFields(s.fields, t, seen)
	}
	return s
}

func addFields(into map[string]*schema, t reflect.Type, seen map[reflect.Type]*schema) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			addFields(into, ft, seen) // embedded: its fields are ours
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		into[name] = buildSchema(f.Type, seen)
	}
}

func implementsMarshaler(t reflect.Type) bool {
	m := reflect.TypeFor[interface{ MarshalJSON() ([]byte, error) }]()
	return t.Implements(m) || reflect.PointerTo(t).Implements(m)
}

func implementsTextMarshaler(t reflect.Type) bool {
	m := reflect.TypeFor[encoding.TextMarshaler]()
	return t.Implements(m) || reflect.PointerTo(t).Implements(m)
}

// names lists the fields of an object schema, sorted.
func (s *schema) names() []string {
	names := make([]string, 0, len(s.fields))
	for n := range s.fields {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// fill adds each field of s missing from v (JSON decoded: maps, lists)
// as empty: no value for a leaf, [] for a list. An object that is missing (a
// job with no exception) stays missing, so that {{with .exception}} and
// {{if .exception}} still tell; it is added, its fields empty, only where
// the template reads a field of it from the top (deep holds those paths,
// as check found them), so that {{.exception.note}} prints empty.
func (s *schema) fill(v any, deep map[string]bool, path string) any {
	if s == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		if s.fields == nil {
			return x
		}
		for name, sub := range s.fields {
			p := name
			if path != "" {
				p = path + "." + name
			}
			switch e, ok := x[name]; {
			case ok:
				x[name] = sub.fill(e, deep, p)
			case sub != nil && sub.fields != nil:
				if deep[p] {
					x[name] = sub.fill(map[string]any{}, deep, p)
				}
			case sub != nil && sub.elem != nil:
				x[name] = []any{}
			default:
				x[name] = (*noValue)(nil)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = s.elem.fill(e, nil, "")
		}
	}
	return v
}

// noValue is a field that has none yet (its JSON omits it): it prints
// empty, is false in if and with, is null to the json helper and 0 to
// fsd and time. Only its nil pointer is used.
type noValue struct{}

func (*noValue) String() string { return "" }

// check walks a parsed template and returns a usage error for the first
// field it names that s does not have, and the paths of the objects whose
// fields it reads from the top (for fill). The dot is followed into with
// and range over a field; elsewhere (a variable, a function's result)
// what the dot holds is not known, and nothing under it is checked.
func (s *schema) check(t *template.Template) (deep map[string]bool, err error) {
	deep = map[string]bool{}
	if t.Tree == nil || t.Tree.Root == nil {
		return deep, nil
	}
	c := checker{root: s, deep: deep}
	return deep, c.list(t.Tree.Root, s)
}

type checker struct {
	root *schema
	deep map[string]bool
}

func (c checker) list(l *parse.ListNode, dot *schema) error {
	if l == nil {
		return nil
	}
	for _, n := range l.Nodes {
		if err := c.node(n, dot); err != nil {
			return err
		}
	}
	return nil
}

func (c checker) node(n parse.Node, dot *schema) error {
	switch x := n.(type) {
	case *parse.ActionNode:
		return c.pipe(x.Pipe, dot)
	case *parse.IfNode:
		return c.branch(&x.BranchNode, dot, dot)
	case *parse.WithNode:
		return c.branch(&x.BranchNode, pipeSchema(x.Pipe, dot, false), dot)
	case *parse.RangeNode:
		return c.branch(&x.BranchNode, pipeSchema(x.Pipe, dot, true), dot)
	case *parse.ListNode:
		return c.list(x, dot)
	}
	return nil
}

func (c checker) branch(b *parse.BranchNode, inner, dot *schema) error {
	if err := c.pipe(b.Pipe, dot); err != nil {
		return err
	}
	if err := c.list(b.List, inner); err != nil {
		return err
	}
	return c.list(b.ElseList, dot)
}

func (c checker) pipe(p *parse.PipeNode, dot *schema) error {
	if p == nil {
		return nil
	}
	for _, cmd := range p.Cmds {
		for _, a := range cmd.Args {
			if err := c.arg(a, dot); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c checker) arg(a parse.Node, dot *schema) error {
	switch x := a.(type) {
	case *parse.FieldNode:
		if dot == c.root {
			c.markDeep(x.Ident)
		}
		_, err := lookup(dot, x.Ident)
		return err
	case *parse.VariableNode:
		if len(x.Ident) > 1 && x.Ident[0] == "$" {
			c.markDeep(x.Ident[1:])
			_, err := lookup(c.root, x.Ident[1:])
			return err
		}
	case *parse.PipeNode:
		return c.pipe(x, dot)
	case *parse.ChainNode:
		if p, ok := x.Node.(*parse.PipeNode); ok {
			return c.pipe(p, dot)
		}
	}
	return nil
}

// markDeep records the objects on a path read from the top.
func (c checker) markDeep(path []string) {
	for i := 1; i < len(path); i++ {
		c.deep[strings.Join(path[:i], ".")] = true
	}
}

// pipeSchema is what the dot holds inside a with (or range: elements) of
// pipe p: known when p is a lone field, else nil (not checked).
func pipeSchema(p *parse.PipeNode, dot *schema, elem bool) *schema {
	if p == nil || len(p.Decl) > 0 || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return nil
	}
	f, ok := p.Cmds[0].Args[0].(*parse.FieldNode)
	if !ok {
		return nil
	}
	s, err := lookup(dot, f.Ident)
	if err != nil || s == nil {
		return nil
	}
	if elem {
		return s.elem
	}
	return s
}

// lookup follows path from s; an unknown name is an error listing the
// names there are.
func lookup(s *schema, path []string) (*schema, error) {
	for i, name := range path {
		if s == nil || s.open {
			return nil, nil // not an object we know: not checked
		}
		if s.fields == nil {
			if i == 0 {
				return nil, nil // the dot of a with: left to run time
			}
			// A field of an object we know that is text, a number or a
			// list: a field of it would stop the template half-way in
			// Go's words ("can't evaluate field").
			return nil, exitcode.UsageErrorf("--format: no field .%s (.%s has no fields)",
				strings.Join(path[:i+1], "."), strings.Join(path[:i], "."))
		}
		sub, ok := s.fields[name]
		if !ok {
			where := "fields"
			if i > 0 {
				where = "fields of ." + strings.Join(path[:i], ".")
			}
			return nil, exitcode.UsageErrorf("--format: no field .%s (%s: %s)",
				strings.Join(path[:i+1], "."), where, strings.Join(s.names(), ", "))
		}
		s = sub
	}
	return s, nil
}
