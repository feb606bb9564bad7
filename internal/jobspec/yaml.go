package jobspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// yamlWalker turns a yaml.Node tree into the free-form value tree. It
// expands aliases itself, against a budget of nodes proportional to the
// input, so a "billion laughs" document fails fast instead of growing.
type yamlWalker struct {
	nodes, budget int
}

// parseYAML reads exactly one YAML document.
func parseYAML(data []byte) (tree any, err error) {
	if len(data) > MaxYAMLSize {
		return nil, errorf("", "yaml jobspec is too large: %d bytes, the limit is %d (JSON may be up to %d)", len(data), MaxYAMLSize, MaxSize)
	}
	defer func() {
		// The YAML library is large and not ours; no input may panic.
		if r := recover(); r != nil {
			tree, err = nil, errorf("", "yaml: cannot parse document: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errorf("", "jobspec is empty")
		}
		return nil, errorf("", "%v", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errorf("", "jobspec must be a single YAML document")
	}
	w := yamlWalker{budget: min(len(data)+1024, MaxNodes)}
	return w.value(&doc, 0)
}

func (w *yamlWalker) value(n *yaml.Node, depth int) (any, error) {
	w.nodes++
	if w.nodes > w.budget {
		return nil, errorf("", "yaml: document expands to more than %d values (alias bomb?)", w.budget)
	}
	if (n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode) && depth >= MaxDepth {
		return nil, errorf("", "yaml: line %d: nesting is deeper than %d levels", n.Line, MaxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return w.value(n.Content[0], depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, errorf("", "yaml: line %d: unknown alias", n.Line)
		}
		// Every alias cycle passes through a container, whose depth
		// check ends it.
		return w.value(n.Alias, depth)
	case yaml.ScalarNode:
		return scalar(n)
	case yaml.SequenceNode:
		a := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := w.value(c, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			for k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				if k.ShortTag() == "!!merge" {
					return nil, errorf("", "yaml: line %d: merge keys (<<) are not supported", k.Line)
				}
				return nil, errorf("", "yaml: line %d: mapping keys must be strings", k.Line)
			}
			if !utf8.ValidString(k.Value) {
				return nil, errorf("", "yaml: line %d: invalid UTF-8 in key", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, errorf("", "yaml: line %d: duplicate key %q", k.Line, k.Value)
			}
			v, err := w.value(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	}
	return nil, errorf("", "yaml: line %d: unexpected node", n.Line)
}

// scalar resolves a YAML scalar to the JSON data model. Tags JSON has no
// type for (timestamps, binary, custom) are kept as their text.
func scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, errorf("", "yaml: line %d: invalid boolean %q", n.Line, n.Value)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return nil, errorf("", "yaml: line %d: integer %s is out of range", n.Line, n.Value)
		}
		return json.Number(strconv.FormatInt(i, 10)), nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, errorf("", "yaml: line %d: invalid number %q", n.Line, n.Value)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, errorf("", "yaml: line %d: number %s is not finite, JSON cannot hold it", n.Line, n.Value)
		}
		return json.Number(formatFloat(f)), nil
	}
	if !utf8.ValidString(n.Value) {
		return nil, errorf("", "yaml: line %d: invalid UTF-8 in string", n.Line)
	}
	return n.Value, nil
}
