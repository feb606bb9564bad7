package hostlist

import (
	"cmp"
	"slices"
)

// pow10 returns 10^e for e <= 19.
func pow10(e int) uint64 {
	p := uint64(1)
	for ; e > 0; e-- {
		p *= 10
	}
	return p
}

// Uniq returns the hosts sorted and without duplicates, as flux-core's
// hostlist_uniq does: by prefix, names without a number first, then by
// suffix, then by number width and value ("[0-20],45,12,015" gives
// "[0-20,45,015]"). It works on runs, never on single hosts. A name is
// deduplicated against runs that spell it the same way (same prefix and
// suffix); as in flux-core, the same name spelled by differently split
// runs, such as f00[7-8] and f007, is not recognised as a duplicate.
func (h Hostlist) Uniq() Hostlist {
	type class struct {
		prefix, suffix string
		width          int
		numeric        bool
	}
	byClass := map[class][]run{}
	var order []class
	add := func(r run) {
		c := class{r.prefix, r.suffix, r.width, r.numeric}
		if _, ok := byClass[c]; !ok {
			order = append(order, c)
		}
		byClass[c] = append(byClass[c], r)
	}
	for _, r := range h.runs {
		// A padded run's names have exactly width digits only while its
		// numbers are shorter than width; the rest print unpadded, so
		// they belong with unpadded runs of the same prefix and suffix.
		if r.numeric && r.width > 0 && r.width <= 19 {
			if limit := pow10(r.width-1) - 1; r.hi > limit {
				if r.lo <= limit {
					head := r
					head.hi = limit
					add(head)
				}
				r.lo, r.width = max(r.lo, limit+1), 0
			}
		}
		add(r)
	}
	var pieces []run
	for _, c := range order {
		rs := byClass[c]
		if !c.numeric {
			pieces = append(pieces, rs[0])
			continue
		}
		slices.SortFunc(rs, func(a, b run) int { return cmp.Compare(a.lo, b.lo) })
		cur := rs[0]
		for _, r := range rs[1:] {
			if r.lo <= cur.hi || r.lo == cur.hi+1 {
				cur.hi = max(cur.hi, r.hi)
				continue
			}
			pieces = append(pieces, cur)
			cur = r
		}
		pieces = append(pieces, cur)
	}
	slices.SortFunc(pieces, func(a, b run) int {
		if c := cmp.Compare(a.prefix, b.prefix); c != 0 {
			return c
		}
		if a.numeric != b.numeric {
			if !a.numeric {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(a.suffix, b.suffix); c != 0 {
			return c
		}
		// flux-core orders by the printed width of the first number.
		if c := cmp.Compare(max(a.width, digits(a.lo)), max(b.width, digits(b.lo))); c != 0 {
			return c
		}
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		return cmp.Compare(a.width, b.width)
	})
	var out []run
	for _, r := range pieces {
		out = appendRun(out, r)
	}
	return build(out)
}
