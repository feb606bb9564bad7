package jobspec

// The exec agent and the scheduler parse every job's jobspec. The full
// path builds a free-form tree (a map per object, every scalar boxed in an
// interface) and then decodes the tree into a Jobspec. parseFast reads the
// JSON shape flux submit and MarshalJSON write straight into the Jobspec
// for the parts it knows (the top level, resources and tasks), with the
// same jsonParser, so strings, numbers and the size limits read exactly as
// on the full path; attributes, free-form by nature, go through the full
// path's own parser and decoder. It declines (nil) on anything else: an
// unknown, repeated or missing key, a value of another type, a JSON
// syntax error, a jobspec Validate refuses. Parse then runs the full path,
// so every error is the full path's; what parseFast accepts is what the
// full path returns (TestParseFastSameAsFull, FuzzParseFast).
func parseFast(data []byte) *Jobspec {
	p := jsonParser{data: data, src: string(data)}
	p.skipSpace()
	j := &Jobspec{}
	var seen uint
	ok := p.fastObject(func(k string) bool {
		switch k {
		case "version":
			seen |= p.once(seen, 1)
			j.Version = p.fastInt()
			return j.Version >= 1
		case "resources":
			seen |= p.once(seen, 2)
			j.Resources = p.fastResources()
			return j.Resources != nil
		case "tasks":
			seen |= p.once(seen, 4)
			j.Tasks = make([]Task, 0, 1)
			return p.fastArray(func() bool {
				t, ok := p.fastTask()
				j.Tasks = append(j.Tasks, t)
				return ok
			})
		case "attributes":
			seen |= p.once(seen, 8)
			tree, err := p.value()
			return err == nil && decodeAttributes(tree, &j.Attributes) == nil
		}
		return false
	})
	p.skipSpace()
	if !ok || seen != 15 || p.pos != len(p.data) {
		return nil
	}
	// Every string came through jsonParser.str, which refuses invalid
	// UTF-8, so Validate's UTF-8 walk is skipped.
	if j.validate(false) != nil {
		return nil
	}
	return j
}

// once returns bit, or an impossible mask (so the caller's check of seen
// fails) when seen holds bit already: a repeated key.
func (p *jsonParser) once(seen, bit uint) uint {
	if seen&bit != 0 {
		return 1 << 16
	}
	return bit
}

// count accounts for one value as value does.
func (p *jsonParser) count() bool {
	p.nodes++
	return p.nodes <= MaxNodes && p.pos < len(p.data)
}

// fastObject reads an object as object does, calling member for each key
// with the position at its value; member reads the value and returns false
// to decline.
func (p *jsonParser) fastObject(member func(k string) bool) bool {
	if !p.count() || p.data[p.pos] != '{' || p.enter() != nil {
		return false
	}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return true
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return false
		}
		k, err := p.str()
		if err != nil {
			return false
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return false
		}
		p.pos++
		p.skipSpace()
		if p.depth < len(p.keys) {
			p.keys[p.depth] = k
		}
		if !member(k) {
			return false
		}
		if end, ok := p.fastNext('}'); end || !ok {
			return ok
		}
	}
}

// fastNext reads what follows a member or an element: ',' (more follow,
// end false) or close (the object or array ends); ok is false on
// anything else.
func (p *jsonParser) fastNext(close byte) (end, ok bool) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return false, false
	}
	switch p.data[p.pos] {
	case ',':
		p.pos++
		return false, true
	case close:
		p.pos++
		p.depth--
		return true, true
	}
	return false, false
}

// fastArray reads an array as array does; elem reads each element.
func (p *jsonParser) fastArray(elem func() bool) bool {
	if !p.count() || p.data[p.pos] != '[' || p.enter() != nil {
		return false
	}
	if p.depth < len(p.keys) {
		p.keys[p.depth] = ""
	}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return true
	}
	for {
		p.skipSpace()
		if !elem() {
			return false
		}
		if end, ok := p.fastNext(']'); end || !ok {
			return ok
		}
	}
}

// fastString reads a string; ok is false for any other value.
func (p *jsonParser) fastString() (string, bool) {
	if !p.count() || p.data[p.pos] != '"' {
		return "", false
	}
	s, err := p.str()
	return s, err == nil
}

// fastInt reads an integer as intValue reads it, or returns -1: no count,
// version or task count may be negative.
func (p *jsonParser) fastInt() int {
	if !p.count() || p.data[p.pos] != '-' && (p.data[p.pos] < '0' || p.data[p.pos] > '9') {
		return -1
	}
	v, err := p.number()
	if err != nil {
		return -1
	}
	n, ok := intValue(v)
	if !ok || n < 0 {
		return -1
	}
	return n
}

// fastResources reads a resource list as decodeResources decodes it, nil
// to decline.
func (p *jsonParser) fastResources() []Resource {
	out := make([]Resource, 0, 1)
	ok := p.fastArray(func() bool {
		r, ok := p.fastResource()
		out = append(out, r)
		return ok
	})
	if !ok {
		return nil
	}
	return out
}

// fastResource reads a vertex as decodeResource decodes it.
func (p *jsonParser) fastResource() (Resource, bool) {
	var r Resource
	var seen uint
	ok := p.fastObject(func(k string) bool {
		var ok bool
		switch k {
		case "type":
			seen |= p.once(seen, 1)
			r.Type, ok = p.fastString()
		case "count":
			seen |= p.once(seen, 2)
			r.Count = p.fastInt()
			ok = r.Count >= 0
		case "label":
			seen |= p.once(seen, 4)
			r.Label, ok = p.fastString()
		case "unit":
			seen |= p.once(seen, 8)
			r.Unit, ok = p.fastString()
		case "exclusive":
			seen |= p.once(seen, 16)
			if !p.count() {
				return false
			}
			b := p.literal("true")
			ok = b || p.literal("false")
			r.Exclusive = &b
		case "with":
			seen |= p.once(seen, 32)
			r.With = p.fastResources()
			ok = r.With != nil
		}
		return ok // "id" and other keys decline
	})
	return r, ok && seen&3 == 3 && seen < 1<<16
}

// fastTask reads a task as decodeTask decodes it.
func (p *jsonParser) fastTask() (Task, bool) {
	var t Task
	var seen uint
	ok := p.fastObject(func(k string) bool {
		switch k {
		case "command":
			seen |= p.once(seen, 1)
			t.Command = make([]string, 0, 2)
			return p.fastArray(func() bool {
				a, ok := p.fastString()
				t.Command = append(t.Command, a)
				return ok
			})
		case "slot":
			seen |= p.once(seen, 2)
			var ok bool
			t.Slot, ok = p.fastString()
			return ok
		case "count":
			seen |= p.once(seen, 4)
			n := 0
			return p.fastObject(func(k string) bool {
				n++
				switch {
				case n > 1: // decodeTask wants exactly one key
					return false
				case k == "per_slot":
					t.Count.PerSlot = p.fastInt()
					return t.Count.PerSlot >= 1
				case k == "total":
					t.Count.Total = p.fastInt()
					return t.Count.Total >= 1
				}
				return false
			}) && n == 1
		}
		return false // "attributes", "distribution" and other keys decline
	})
	return t, ok && seen == 7
}
