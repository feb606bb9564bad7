package sched

import "math"

// A queue holds one queue's pending jobs in scheduling order (compare), as
// a treap threaded through the jobs themselves (pending.node), each
// subtree knowing how many jobs it has and which of them a pass could not
// pass over in silence. That is what lets a pass cost what it must, not
// what the queue is long: behind an fcfs head that does not fit, or,
// once easy's head has its planned start, among the jobs asking for more
// cores than are free, a waiting job already annotated with its reason
// and with no estimate to withdraw would be looked at only to be left as
// it is, and a pass goes straight to the next job it could change (see
// Scheduler.next). Counting the jobs passed over keeps queue-depth and
// the settle rule exactly as if each had been looked at.
type queue struct {
	root *pending
}

// node is a job's place in its queue's treap, and what its subtree
// holds. It is kept small, since a million jobs may wait: the treap's
// heap key is a hash of the job's id (prio), and the job's own class is
// pending.loud and pending.try.
type node struct {
	left, right *pending
	// size counts the subtree's jobs, loud those a pass cannot pass over
	// (see Scheduler.classify); minCores and minGPUs are the least any of
	// its jobs that their targets can hold (pending.try) asks for, noTry
	// without one.
	size, loud        int32
	minCores, minGPUs int32
}

// noTry is node.minCores and minGPUs of a subtree without a job its
// targets can hold; a job's own counts are clamped below it.
const noTry = math.MaxInt32

func clamp32(n int64) int32 { return int32(min(n, noTry-1)) }

// prio is a job's treap priority: a fixed hash of its id, so that the
// shape, and with it the cost, is the same in every run.
func prio(p *pending) uint64 {
	x := uint64(p.id) + 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// pull recomputes t's subtree summary from its own and its children's.
func pull(t *pending) {
	n := &t.node
	n.size, n.loud = 1, 0
	n.minCores, n.minGPUs = noTry, noTry
	if t.loud {
		n.loud = 1
	}
	if t.try {
		n.minCores, n.minGPUs = clamp32(t.amount[0]), clamp32(t.amount[1])
	}
	if c := n.left; c != nil {
		n.size += c.node.size
		n.loud += c.node.loud
		n.minCores, n.minGPUs = min(n.minCores, c.node.minCores), min(n.minGPUs, c.node.minGPUs)
	}
	if c := n.right; c != nil {
		n.size += c.node.size
		n.loud += c.node.loud
		n.minCores, n.minGPUs = min(n.minCores, c.node.minCores), min(n.minGPUs, c.node.minGPUs)
	}
}

// Len returns the number of jobs queued.
func (q *queue) Len() int {
	if q.root == nil {
		return 0
	}
	return int(q.root.node.size)
}

// insert adds p, whose loud and try are set.
func (q *queue) insert(p *pending) {
	p.node.left, p.node.right = nil, nil
	pull(p)
	q.root = insertAt(q.root, p)
}

func insertAt(t, p *pending) *pending {
	if t == nil {
		return p
	}
	if prio(p) > prio(t) {
		p.node.left, p.node.right = split(t, p)
		pull(p)
		return p
	}
	if compare(p, t) < 0 {
		t.node.left = insertAt(t.node.left, p)
	} else {
		t.node.right = insertAt(t.node.right, p)
	}
	pull(t)
	return t
}

// split parts t into the jobs before key and those after it (key is not
// in t).
func split(t, key *pending) (*pending, *pending) {
	if t == nil {
		return nil, nil
	}
	if compare(t, key) < 0 {
		l, r := split(t.node.right, key)
		t.node.right = l
		pull(t)
		return t, r
	}
	l, r := split(t.node.left, key)
	t.node.left = r
	pull(t)
	return l, t
}

// remove takes p, which is queued, out.
func (q *queue) remove(p *pending) {
	q.root = removeAt(q.root, p)
	p.node.left, p.node.right = nil, nil
}

func removeAt(t, p *pending) *pending {
	if t == p {
		return merge(t.node.left, t.node.right)
	}
	if compare(p, t) < 0 {
		t.node.left = removeAt(t.node.left, p)
	} else {
		t.node.right = removeAt(t.node.right, p)
	}
	pull(t)
	return t
}

// merge joins two treaps, every job of a before every job of b.
func merge(a, b *pending) *pending {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case prio(a) > prio(b):
		a.node.right = merge(a.node.right, b)
		pull(a)
		return a
	default:
		b.node.left = merge(a, b.node.left)
		pull(b)
		return b
	}
}

// refresh recomputes the summaries above p, which is queued, after its
// loud or try changed.
func (q *queue) refresh(p *pending) { refreshAt(q.root, p) }

func refreshAt(t, p *pending) {
	if t != p {
		if compare(p, t) < 0 {
			refreshAt(t.node.left, p)
		} else {
			refreshAt(t.node.right, p)
		}
	}
	pull(t)
}

// after returns the first job after key (the first of all for nil); key
// need not be queued.
func (q *queue) after(key *pending) *pending {
	var best *pending
	for t := q.root; t != nil; {
		if key == nil || compare(t, key) > 0 {
			best, t = t, t.node.left
		} else {
			t = t.node.right
		}
	}
	return best
}

// find returns the first job after key (nil: from the first) that is loud,
// or eligible and asking for at most cores cores and gpus GPUs.
func (q *queue) find(key *pending, cores, gpus int64) *pending {
	return findAt(q.root, key, cores, gpus)
}

func findAt(t, key *pending, cores, gpus int64) *pending {
	for t != nil {
		n := &t.node
		if n.loud == 0 && (n.minCores == noTry || int64(n.minCores) > cores || int64(n.minGPUs) > gpus) {
			return nil // nothing in the subtree
		}
		if key != nil && compare(t, key) <= 0 {
			t = n.right
			continue
		}
		// t is after key: the answer is in its left subtree, t, or its
		// right subtree, whose jobs are all after key.
		if x := findAt(n.left, key, cores, gpus); x != nil {
			return x
		}
		if t.loud || (t.try && t.amount[0] <= cores && t.amount[1] <= gpus) {
			return t
		}
		t, key = n.right, nil
	}
	return nil
}

// count counts the jobs before key, and key too when inclusive and
// queued; nil counts none.
func (q *queue) count(key *pending, inclusive bool) int {
	if key == nil {
		return 0
	}
	n := 0
	for t := q.root; t != nil; {
		if c := compare(t, key); c < 0 || (inclusive && c == 0) {
			n++
			if t.node.left != nil {
				n += int(t.node.left.node.size)
			}
			t = t.node.right
		} else {
			t = t.node.left
		}
	}
	return n
}

// between counts the jobs after a and before b (nil a: from the first;
// nil b: to the end). Neither need be queued.
func (q *queue) between(a, b *pending) int {
	end := q.Len()
	if b != nil {
		end = q.count(b, false)
	}
	return end - q.count(a, true)
}
