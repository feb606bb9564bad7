package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/fluid"
)

// This file reads a bbolt file with plain reads (pread), never through a
// memory map, to decide whether bbolt may be given it. bbolt trusts its
// file: it maps it and follows every page number it finds, so a file
// shorter than its meta says makes it touch memory past the end of the
// file (SIGBUS, which Go cannot recover from by default), and a damaged
// page makes it panic ("assertion failed: Page expected to be…", "page N
// already freed"). Read here, the same damage is an error naming what is
// wrong.
//
// The layout read is bbolt's on-disk format (version 2), in the machine's
// byte order as bbolt writes it:
//
//	page header   id u64, flags u16, count u16, overflow u32   (16 bytes)
//	meta          magic u32, version u32, pageSize u32, flags u32,
//	              root {pgid u64, sequence u64}, freelist u64, pgid u64,
//	              txid u64, checksum u64 (FNV-1a 64 of the 56 bytes before it)
//	branch elem   pos u32, ksize u32, pgid u64                 (16 bytes)
//	leaf elem     flags u32, pos u32, ksize u32, vsize u32     (16 bytes)
//	bucket value  root pgid u64, sequence u64, then an inline leaf page
//	              when root is 0
//	freelist      count page ids u64 (count 0xFFFF: the first u64 is the count)

const (
	pageHeaderSize = 16
	elemSize       = 16
	metaSize       = 64
	flagBranch     = 0x01
	flagLeaf       = 0x02
	flagMeta       = 0x04
	flagFreelist   = 0x10
	leafBucket     = 0x01
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	noFreelist     = ^uint64(0)
	// maxProblems bounds a report: a badly damaged file has a problem on
	// every page, and the first few say what to do.
	maxProblems = 100
)

var ne = binary.NativeEndian

// DamagedError is a store file that must not be given to bbolt: empty,
// shorter than its meta says, or with a page that does not read as a
// page of the tree. Its message is one line, naming the file and what to
// do. errors.Is(err, ErrCorrupt) holds.
type DamagedError struct {
	Path    string
	Problem string // the first thing found wrong, in a few words
	More    int    // how many more problems were found
}

func (e *DamagedError) Error() string {
	more := ""
	if e.More > 0 {
		more = fmt.Sprintf(", and %d more problem%s", e.More, plural(e.More))
	}
	// "store is corrupt" is ErrCorrupt's text, which scripts know.
	return fmt.Sprintf("%s: %v (%s%s): fluxsched will not use it; run 'fluxsched store check' to see the damage and 'fluxsched store recover' to restore the jobs that can be read", e.Path, ErrCorrupt, e.Problem, more)
}

// Is makes a damaged store an ErrCorrupt.
func (e *DamagedError) Is(target error) bool { return target == ErrCorrupt }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Report is what a check of a store file found.
type Report struct {
	Size     int64  // the file's size in bytes
	PageSize int    // bbolt's page size, from the meta
	Pages    uint64 // the high water mark: pages in use or free
	Txid     uint64 // the transaction the meta in use ends
	Jobs     int    // job records found (full check only)
	// Problems are what is wrong, one line each, at most maxProblems
	// (Dropped counts the rest). None: the file is sound.
	Problems []string
	Dropped  int
	// Notes are things that are not damage bbolt cannot cope with, but
	// that an admin should hear of (a meta page that does not validate,
	// where bbolt falls back on the other and so on the previous commit).
	Notes []string
}

// OK reports whether the check found no problem.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Err is the report as an error for a store at path: nil when sound.
func (r *Report) Err(path string) error {
	if r.OK() {
		return nil
	}
	return &DamagedError{Path: path, Problem: r.Problems[0], More: len(r.Problems) - 1 + r.Dropped}
}

func (r *Report) problem(format string, a ...any) {
	if len(r.Problems) >= maxProblems {
		r.Dropped++
		return
	}
	r.Problems = append(r.Problems, fmt.Sprintf(format, a...))
}

// meta is a decoded meta page.
type meta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64
	txid     uint64
}

// parseMeta decodes and validates the meta in a page's bytes (from its
// header on); the error says, in a few words, why it is not a meta.
func parseMeta(b []byte) (meta, error) {
	if len(b) < pageHeaderSize+metaSize {
		return meta{}, errors.New("too short for a meta page")
	}
	if flags := ne.Uint16(b[8:]); flags&flagMeta == 0 {
		return meta{}, fmt.Errorf("page type %#x, not a meta page", flags)
	}
	m := b[pageHeaderSize:]
	if ne.Uint32(m[0:]) != boltMagic {
		return meta{}, errors.New("not a bbolt file (bad magic)")
	}
	if v := ne.Uint32(m[4:]); v != boltVersion {
		return meta{}, fmt.Errorf("bbolt format version %d, not %d", v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:56])
	if h.Sum64() != ne.Uint64(m[56:]) {
		return meta{}, errors.New("checksum mismatch")
	}
	out := meta{pageSize: ne.Uint32(m[8:]), root: ne.Uint64(m[16:]), freelist: ne.Uint64(m[32:]), pgid: ne.Uint64(m[40:]), txid: ne.Uint64(m[48:])}
	if out.pageSize < 1024 || out.pageSize > 1<<16 || out.pageSize&(out.pageSize-1) != 0 {
		return meta{}, fmt.Errorf("page size %d", out.pageSize)
	}
	return out, nil
}

// CheckMeta checks what bbolt relies on before it maps a file: a valid
// meta page, a file at least as long as the pages the meta counts, a root
// and a freelist inside them. It reads a few pages only, so every open
// can afford it.
func CheckMeta(r io.ReaderAt, size int64) (*Report, meta) {
	rep := &Report{Size: size}
	if size == 0 {
		rep.problem("the file is empty")
		return rep, meta{}
	}
	m, ok := pickMeta(r, size, rep)
	if !ok {
		return rep, m
	}
	rep.PageSize, rep.Pages, rep.Txid = int(m.pageSize), m.pgid, m.txid
	need := int64(m.pgid) * int64(m.pageSize)
	switch {
	case m.pgid < 3 || m.pgid > uint64(1)<<48/uint64(m.pageSize):
		rep.problem("its meta counts %d pages", m.pgid)
	case need > size:
		rep.problem("the file is %d bytes, its meta says %d", size, need)
	case m.root < 2 || m.root >= m.pgid:
		rep.problem("its root page %d is outside its %d pages", m.root, m.pgid)
	case m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.pgid):
		rep.problem("its freelist page %d is outside its %d pages", m.freelist, m.pgid)
	}
	return rep, m
}

// pickMeta chooses the meta bbolt would: of the two meta pages, the
// valid one with the higher transaction id.
func pickMeta(r io.ReaderAt, size int64, rep *Report) (meta, bool) {
	first := make([]byte, pageHeaderSize+metaSize)
	if _, err := r.ReadAt(first, 0); err != nil {
		rep.problem("the file is %d bytes, too short for a store", size)
		return meta{}, false
	}
	m0, err0 := parseMeta(first)
	psz := int64(os.Getpagesize())
	if err0 == nil {
		psz = int64(m0.pageSize)
	}
	second := make([]byte, pageHeaderSize+metaSize)
	var m1 meta
	var err1 error
	if _, err := r.ReadAt(second, psz); err != nil {
		err1 = errors.New("past the end of the file")
	} else if m1, err1 = parseMeta(second); err1 == nil && err0 == nil && m1.pageSize != m0.pageSize {
		err1 = fmt.Errorf("page size %d, the other meta's is %d", m1.pageSize, m0.pageSize)
	}
	switch {
	case err0 != nil && err1 != nil:
		if err0.Error() == err1.Error() {
			rep.problem("neither meta page is valid: %v", err0)
		} else {
			rep.problem("neither meta page is valid: page 0: %v; page 1: %v", err0, err1)
		}
		return meta{}, false
	case err0 != nil:
		rep.Notes = append(rep.Notes, fmt.Sprintf("meta page 0 is not valid (%v): bbolt uses meta page 1, transaction %d", err0, m1.txid))
		return m1, true
	case err1 != nil:
		rep.Notes = append(rep.Notes, fmt.Sprintf("meta page 1 is not valid (%v): bbolt uses meta page 0, transaction %d", err1, m0.txid))
		return m0, true
	case m1.txid > m0.txid:
		return m1, true
	}
	return m0, true
}

// openMeta opens the store file at path for reading, unmapped, and checks
// its metas (CheckMeta): the first step of every reader of a file that may
// be damaged. The caller closes the file.
func openMeta(path string) (*os.File, *Report, meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, meta{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, meta{}, err
	}
	rep, m := CheckMeta(f, fi.Size())
	return f, rep, m, nil
}

// CheckFile checks the store file at path without mapping it: the meta
// (CheckMeta) and, with full, every page of the tree (Walk's checks)
// and the freelist. A missing file is an error (os.ErrNotExist); damage
// is in the report.
func CheckFile(path string, full bool) (*Report, error) {
	f, rep, m, err := openMeta(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !rep.OK() || !full {
		return rep, nil
	}
	return rep, walkFile(f, m, rep, nil)
}

// walker reads the tree page by page, checking each as bbolt's Tx.Check
// would, but by reading, so a bad page number is a problem, not a fault.
type walker struct {
	r     io.ReaderAt
	m     meta
	rep   *Report
	seen  []uint64 // one bit per page: reached from the root or the freelist
	freed []uint64 // one bit per page: in the freelist
	// data is the file's bytes: mapped (mapFile), so that reading a
	// page costs what bbolt's reads cost, or the bytes themselves (the
	// fuzz target). Every page number is checked against the meta's
	// count, which CheckMeta checked against the file's size, before a
	// page is read, so no read goes past the end of the file.
	data []byte
	// mapped: data is walkFile's mapping, whose pages the walk lets go
	// of as it goes (read); touched counts the bytes read since it last
	// did.
	mapped  bool
	touched uint64
	// visit, when set, is given every key and value the walk reads,
	// with the path of buckets it is in (Salvage).
	visit func(path [][]byte, k, v []byte, bucket bool)
	// lost, when set, is told of each subtree that could not be read,
	// with the bucket path it belongs to and the keys it could hold,
	// from lo up to hi (nil: unbounded) (Salvage).
	lost func(path [][]byte, lo, hi []byte, what string)
	// onPage, when set, is told of each page of the tree read (Pages).
	onPage func(id uint64, leaf bool, path [][]byte)
}

func newWalker(data []byte, m meta, rep *Report) *walker {
	words := (m.pgid + 63) / 64
	return &walker{data: data, m: m, rep: rep, seen: make([]uint64, words), freed: make([]uint64, words)}
}

// mapFile maps the first n bytes of f to read, and returns the mapping
// and how to unmap it.
func mapFile(f *os.File, n int64) ([]byte, func(), error) {
	if n == 0 {
		return nil, func() {}, nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(n), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { unix.Munmap(b) }, nil
}

// walkFile runs the full walk over f, mapped (not populated ahead: a
// walk of a warm 4 GB file took a third longer with MAP_POPULATE), with a fault while reading
// it (an I/O error of the disk under the mapping) made a problem of the
// report rather than a crash.
func walkFile(f *os.File, m meta, rep *Report, setup func(*walker)) (err error) {
	data, unmap, err := mapFile(f, int64(m.pgid)*int64(m.pageSize))
	if err != nil {
		return err
	}
	defer unmap()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); !ok {
				panic(r)
			}
			rep.problem("the file cannot be read: %v", r)
		}
	}()
	w := newWalker(data, m, rep)
	w.mapped = true
	if setup != nil {
		setup(w)
	}
	w.freelist()
	w.walk(nil)
	w.unreached()
	return nil
}

func bit(set []uint64, id uint64) bool { return set[id/64]&(1<<(id%64)) != 0 }
func setBit(set []uint64, id uint64)   { set[id/64] |= 1 << (id % 64) }

// page reads page id with its overflow pages. The error says what is
// wrong with it; the page is then not marked reached. The bytes are
// valid until the next call (they may be the read window's): a caller
// that reads more pages while it still needs them clones them.
func (w *walker) page(id uint64, want uint16) ([]byte, error) {
	if id < 2 || id >= w.m.pgid {
		return nil, fmt.Errorf("page %d is outside the file's %d pages", id, w.m.pgid)
	}
	psz := uint64(w.m.pageSize)
	head, err := w.read(id, 1)
	if err != nil {
		return nil, fmt.Errorf("page %d cannot be read: %v", id, err)
	}
	if got := ne.Uint64(head); got != id {
		return nil, fmt.Errorf("page %d calls itself page %d", id, got)
	}
	flags := ne.Uint16(head[8:])
	if flags&want == 0 || flags&(flags-1) != 0 {
		return nil, fmt.Errorf("page %d has type %#x, not %s", id, flags, pageKind(want))
	}
	overflow := uint64(ne.Uint32(head[12:]))
	if id+overflow >= w.m.pgid {
		return nil, fmt.Errorf("page %d runs %d pages past the file's %d", id, overflow, w.m.pgid)
	}
	for i := id; i <= id+overflow; i++ {
		if bit(w.seen, i) {
			return nil, fmt.Errorf("page %d is reached twice", i)
		}
		if bit(w.freed, i) {
			return nil, fmt.Errorf("page %d is in use and in the freelist", i)
		}
	}
	for i := id; i <= id+overflow; i++ {
		setBit(w.seen, i)
	}
	if overflow == 0 {
		return head[:psz], nil
	}
	p, err := w.read(id, overflow+1)
	if err != nil {
		return nil, fmt.Errorf("page %d cannot be read: %v", id, err)
	}
	return p, nil
}

// releaseEvery is how many bytes of the mapping the walk reads between
// two releases of its pages (read).
const releaseEvery = 64 << 20

// read returns n pages from id on: a slice of the file's bytes.
//
// Every page read through the mapping stays in the process's resident
// memory until it is unmapped, so the check at fluxsched's start made the
// whole file resident for a moment: 100,000 jobs (430 MB) took a restart's
// peak from 250 MB to 560 MB (bench/rss_pending.sh). Every releaseEvery
// bytes the walk lets go of them (MADV_DONTNEED): a shared mapping of a
// file reads the same bytes again at the next touch, from the page cache,
// so slices already handed out stay valid.
func (w *walker) read(id, n uint64) ([]byte, error) {
	psz := uint64(w.m.pageSize)
	if (id+n)*psz > uint64(len(w.data)) {
		return nil, io.ErrUnexpectedEOF
	}
	if w.mapped {
		if w.touched += n * psz; w.touched >= releaseEvery {
			unix.Madvise(w.data, unix.MADV_DONTNEED)
			w.touched = 0
		}
	}
	return w.data[id*psz : (id+n)*psz], nil
}

func pageKind(flags uint16) string {
	switch flags {
	case flagBranch | flagLeaf:
		return "a branch or leaf page"
	case flagFreelist:
		return "the freelist"
	}
	return fmt.Sprintf("type %#x", flags)
}

// freelist reads the free page ids.
func (w *walker) freelist() {
	w.seen[0] |= 3 // the meta pages
	if w.m.freelist == noFreelist {
		return
	}
	p, err := w.page(w.m.freelist, flagFreelist)
	if err != nil {
		w.rep.problem("the freelist: %v", err)
		return
	}
	n, at := uint64(ne.Uint16(p[10:])), pageHeaderSize
	if n == 0xFFFF {
		n, at = ne.Uint64(p[pageHeaderSize:]), pageHeaderSize+8
	}
	if n > uint64(len(p)-at)/8 {
		w.rep.problem("the freelist (page %d) counts %d pages, more than it holds", w.m.freelist, n)
		return
	}
	for i := uint64(0); i < n; i++ {
		id := ne.Uint64(p[at+int(i)*8:])
		switch {
		case id < 2 || id >= w.m.pgid:
			w.rep.problem("the freelist names page %d, outside the file's %d pages", id, w.m.pgid)
		case bit(w.freed, id):
			w.rep.problem("the freelist names page %d twice", id)
		case bit(w.seen, id):
			w.rep.problem("the freelist names page %d, which it is stored in", id)
		default:
			setBit(w.freed, id)
		}
	}
}

// unreached reports the pages neither in the tree nor free: space bbolt
// has lost track of, which a sound file never has.
func (w *walker) unreached() {
	first, n := uint64(0), 0
	for id := uint64(2); id < w.m.pgid; id++ {
		if !bit(w.seen, id) && !bit(w.freed, id) {
			if n == 0 {
				first = id
			}
			n++
		}
	}
	if n > 0 {
		w.rep.problem("%d page%s (the first %d) neither in use nor free", n, plural(n), first)
	}
}

// walk reads the root bucket and every bucket below it.
func (w *walker) walk(path [][]byte) {
	w.tree(w.m.root, nil, nil, path)
}

// where names a bucket path for a message: "the root bucket", "bucket
// jobs/ƒ2ZsKyP4", with job ids as fluxq prints them.
func where(path [][]byte) string {
	if len(path) == 0 {
		return "the root bucket"
	}
	var b bytes.Buffer
	b.WriteString("bucket ")
	for i, p := range path {
		if i > 0 {
			b.WriteByte('/')
		}
		if i == 1 && bytes.Equal(path[0], bucketJobs) && len(p) == 8 {
			b.WriteString(fluid.ID(binary.BigEndian.Uint64(p)).String())
			continue
		}
		q := strconv.Quote(string(p))
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// tree walks the subtree at page id, whose keys must lie in [lo, hi)
// (nil: unbounded), and returns its last key.
func (w *walker) tree(id uint64, lo, hi []byte, path [][]byte) []byte {
	p, err := w.page(id, flagBranch|flagLeaf)
	if err != nil {
		w.rep.problem("%s: %v", where(path), err)
		if w.lost != nil {
			w.lost(path, lo, hi, err.Error())
		}
		return nil
	}
	if w.onPage != nil {
		w.onPage(id, ne.Uint16(p[8:])&flagLeaf != 0, path)
	}
	if ne.Uint16(p[8:])&flagLeaf != 0 {
		return w.leaf(p, id, lo, hi, path)
	}
	n := int(ne.Uint16(p[10:]))
	if n == 0 || pageHeaderSize+n*elemSize > len(p) {
		w.rep.problem("%s: branch page %d counts %d elements", where(path), id, n)
		if w.lost != nil {
			w.lost(path, lo, hi, fmt.Sprintf("branch page %d is damaged", id))
		}
		return nil
	}
	type child struct {
		key []byte
		id  uint64
	}
	kids := make([]child, 0, n)
	for i := 0; i < n; i++ {
		e := pageHeaderSize + i*elemSize
		pos, ksize := int(ne.Uint32(p[e:])), int(ne.Uint32(p[e+4:]))
		if pos < 0 || ksize <= 0 || e+pos+ksize > len(p) || e+pos+ksize < e {
			w.rep.problem("%s: branch page %d: element %d points outside the page", where(path), id, i)
			if w.lost != nil {
				w.lost(path, lo, hi, fmt.Sprintf("branch page %d is damaged", id))
			}
			return nil
		}
		k := bytes.Clone(p[e+pos : e+pos+ksize])
		if (len(kids) > 0 && bytes.Compare(kids[len(kids)-1].key, k) >= 0) || (i == 0 && lo != nil && bytes.Compare(k, lo) < 0) || (hi != nil && bytes.Compare(k, hi) >= 0) {
			w.rep.problem("%s: branch page %d: key %d is out of order", where(path), id, i)
			if w.lost != nil {
				w.lost(path, lo, hi, fmt.Sprintf("branch page %d is damaged", id))
			}
			return nil
		}
		kids = append(kids, child{k, ne.Uint64(p[e+8:])})
	}
	var last []byte
	for i, c := range kids {
		next := hi
		if i+1 < len(kids) {
			next = kids[i+1].key
		}
		if l := w.tree(c.id, c.key, next, path); l != nil {
			last = l
		}
	}
	return last
}

// leaf checks a leaf page's elements (p from its header on; id 0 for an
// inline bucket's page) and walks the buckets it holds.
func (w *walker) leaf(p []byte, id uint64, lo, hi []byte, path [][]byte) []byte {
	name := fmt.Sprintf("leaf page %d", id)
	if id == 0 {
		name = "its inline page"
	}
	if len(p) < pageHeaderSize {
		w.rep.problem("%s: %s is too short", where(path), name)
		if w.lost != nil {
			w.lost(path, lo, hi, name+" is damaged")
		}
		return nil
	}
	if flags := ne.Uint16(p[8:]); id == 0 && flags != flagLeaf {
		w.rep.problem("%s: %s has type %#x, not a leaf page", where(path), name, flags)
		if w.lost != nil {
			w.lost(path, lo, hi, name+" is damaged")
		}
		return nil
	}
	n := int(ne.Uint16(p[10:]))
	if pageHeaderSize+n*elemSize > len(p) {
		w.rep.problem("%s: %s counts %d elements, more than it holds", where(path), name, n)
		if w.lost != nil {
			w.lost(path, lo, hi, name+" is damaged")
		}
		return nil
	}
	var last []byte
	for i := 0; i < n; i++ {
		e := pageHeaderSize + i*elemSize
		flags, pos := ne.Uint32(p[e:]), int(ne.Uint32(p[e+4:]))
		ksize, vsize := int(ne.Uint32(p[e+8:])), int(ne.Uint32(p[e+12:]))
		end := e + pos + ksize + vsize
		if pos < 0 || ksize <= 0 || vsize < 0 || end > len(p) || end < e || flags&^leafBucket != 0 {
			w.rep.problem("%s: %s: element %d points outside the page", where(path), name, i)
			if w.lost != nil {
				w.lost(path, lo, hi, name+" is damaged")
			}
			return last
		}
		k := p[e+pos : e+pos+ksize]
		v := p[e+pos+ksize : end]
		if (last != nil && bytes.Compare(last, k) >= 0) || (lo != nil && bytes.Compare(k, lo) < 0) || (hi != nil && bytes.Compare(k, hi) >= 0) {
			w.rep.problem("%s: %s: key %d is out of order", where(path), name, i)
			if w.lost != nil {
				w.lost(path, lo, hi, name+" is damaged")
			}
			return last
		}
		last = bytes.Clone(k)
		if flags&leafBucket == 0 {
			if w.visit != nil {
				w.visit(path, k, v, false)
			}
			w.rep.countID(path)
			continue
		}
		sub := append(append(make([][]byte, 0, len(path)+1), path...), last)
		if vsize < 16 {
			w.rep.problem("%s: its bucket header is %d bytes", where(sub), vsize)
			if w.lost != nil {
				w.lost(sub, nil, nil, "its bucket header is damaged")
			}
			continue
		}
		if w.visit != nil {
			w.visit(path, k, nil, true)
		}
		w.rep.countJob(path)
		if root := ne.Uint64(v); root != 0 {
			w.tree(root, nil, nil, sub)
		} else {
			w.leaf(v[16:], 0, nil, nil, sub)
		}
	}
	return last
}

// countJob counts a bucket found in jobs/: one job of schema 2 (or of
// one whose move to schema 3 stopped half way).
func (r *Report) countJob(path [][]byte) {
	if len(path) == 1 && bytes.Equal(path[0], bucketJobs) {
		r.Jobs++
	}
}

// countID counts a key of job/ids: one job of schema 3.
func (r *Report) countID(path [][]byte) {
	if len(path) == 2 && bytes.Equal(path[0], bucketJob) && string(path[1]) == kindIDsName {
		r.Jobs++
	}
}

// PageInfo is one page of the tree in use, as Pages lists them.
type PageInfo struct {
	ID     uint64
	Leaf   bool   // a leaf page, else a branch page
	Bucket string // where the page belongs, as a report names it
}

// Pages lists the branch and leaf pages of a sound store file's tree, in
// the order the walk reaches them: for tests that damage chosen pages,
// and for an admin's curiosity. A damaged file is an error.
func Pages(path string) ([]PageInfo, error) {
	f, rep, m, err := openMeta(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !rep.OK() {
		return nil, rep.Err(path)
	}
	var out []PageInfo
	err = walkFile(f, m, rep, func(w *walker) {
		w.onPage = func(id uint64, leaf bool, path [][]byte) {
			out = append(out, PageInfo{ID: id, Leaf: leaf, Bucket: where(path)})
		}
	})
	if err != nil {
		return nil, err
	}
	if !rep.OK() {
		return nil, rep.Err(path)
	}
	return out, nil
}
