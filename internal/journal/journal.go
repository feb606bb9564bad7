// Package journal is the exec agent's record of the jobs it holds: an
// append-only file of JSON lines, one entry each, that a later agent replays
// to find the jobs' processes and the ends it has not yet reported.
//
// Three operations: launch (a job's record, written before its tasks are
// forked, and again when it changes), end (its exit status and what goes
// with it) and ack (fluxsched committed the end: the job is forgotten). A
// job's live entries are its last launch and its last end, until an ack.
//
// Appends are group committed: a committer goroutine writes everything
// appended since its last write with one write and one fdatasync, so a
// burst of launches or ends costs one sync. A write that fails (a full
// disk) is retried, with back-off, until it succeeds: an agent never drops
// a record, and nothing waiting on one is told anything meanwhile; the
// journal's owner hears once that it cannot write, and once that it can
// again (OnWriteError). Since
// each retry writes the same bytes at the same offset, a short write leaves
// no garbage behind.
//
// Each line ends with a checksum of the rest (CRC-32C, in a last "crc"
// key), so that a damaged entry reads as damaged and is skipped, never
// taken for another job's or another cgroup's: what a skipped launch
// leaves unsaid, the agent learns from the job's cgroup. A line without
// one, written before checksums were, is read as it is.
//
// The file is locked (flock) by its agent for the agent's whole life, so a
// journal whose lock is free belongs to a dead agent, and any other agent
// may merge it into its own (Adopt). When dead entries dominate, the live
// ones are rewritten to a new file that replaces the old (compaction).
package journal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/fluid"
)

// Operations of an entry.
const (
	OpLaunch = "launch"
	OpEnd    = "end"
	OpAck    = "ack"
)

// ErrLocked is returned when a journal's lock is held by another process:
// its agent lives.
var ErrLocked = errors.New("journal is locked by a live agent")

// ErrClosed is returned by appends to a closed journal.
var ErrClosed = errors.New("journal is closed")

// Entry is one record.
type Entry struct {
	Op   string          `json:"op"`
	ID   fluid.ID        `json:"id"`
	Data json.RawMessage `json:"data,omitempty"`
}

// Job is a job's live entries' data: its last launch and its last end,
// either possibly nil.
type Job struct {
	ID     fluid.ID
	Launch json.RawMessage
	End    json.RawMessage
}

// Compaction thresholds: the file is rewritten once it is larger than
// compactMin and more than half of it is dead.
var compactMin int64 = 1 << 20

// reserveSize is the room kept allocated past the journal's entries (see
// reserve): a full disk does not hold up the next hundred or so launches
// and ends, only those after. It is renewed when half is used.
var reserveSize int64 = 64 << 10

// Back-off between retries of a failed write or sync.
var (
	retryMin = 10 * time.Millisecond
	retryMax = time.Second
)

// live is a job's live lines, kept encoded for compaction.
type live struct {
	launch, end []byte // whole lines, newline included
}

func (l *live) size() int64 { return int64(len(l.launch) + len(l.end)) }

// Journal is an open, locked journal file.
type Journal struct {
	path string

	mu      sync.Mutex
	cond    *sync.Cond
	f       *os.File
	pending []byte         // lines appended, not yet written
	entries []pendingEntry // their entries, applied to jobs once written
	sync    bool           // some pending entry needs a sync
	done    []func(error)  // called once the pending lines are durable
	closed  bool
	exited  chan struct{} // closed when the committer returns

	// Owned by the committer, read under mu.
	jobs      map[fluid.ID]*live
	liveBytes int64
	size      int64 // bytes of the file that hold whole entries
	reserved  int64 // end of the room allocated for entries

	// report hears of a write that failed, once, and of the first that
	// succeeds after (nil): see OnWriteError. stuck is the committer's:
	// the last write failed.
	report func(err error)
	stuck  bool

	// For tests: called before each write; syncs counts the syncs done.
	hookWrite func()
	syncs     int
}

type pendingEntry struct {
	op         string
	id         fluid.ID
	start, end int // the line in pending
}

// Open opens (creating it if needed) and locks the journal at path and
// replays it. It returns ErrLocked if another process holds it.
func Open(path string) (*Journal, error) {
	f, err := lockFile(path, true)
	if err != nil {
		return nil, err
	}
	// A compaction that died halfway left its new file, never renamed:
	// the old one is whole.
	os.Remove(path + ".tmp")
	jobs, good, err := replay(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	// A torn last entry (the agent died inside a write) is dropped, so
	// that the next entry starts on a line of its own, and so is the room
	// the last reserve left (zeros): reserve makes it anew.
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	j := &Journal{path: path, f: f, jobs: jobs, size: good, exited: make(chan struct{})}
	for _, l := range jobs {
		j.liveBytes += l.size()
	}
	j.reserve()
	j.cond = sync.NewCond(&j.mu)
	go j.commit()
	return j, nil
}

// lockFile opens path and takes its exclusive lock without waiting. The
// lock must be on the file the path names once it is held: a compaction or
// an adopting agent may have replaced or removed it meanwhile.
func lockFile(path string, create bool) (*os.File, error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	for range 100 {
		f, err := os.OpenFile(path, flags, 0o600)
		if err != nil {
			return nil, fmt.Errorf("journal: %w", err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, ErrLocked
			}
			return nil, fmt.Errorf("journal %s: lock: %w", path, err)
		}
		if same(f, path) {
			return f, nil
		}
		f.Close()
		if !create {
			return nil, ErrLocked // replaced or gone: not a dead agent's
		}
	}
	return nil, fmt.Errorf("journal %s: replaced as fast as it is opened", path)
}

// same reports whether f is the file path names now.
func same(f *os.File, path string) bool {
	var a, b unix.Stat_t
	if unix.Fstat(int(f.Fd()), &a) != nil || unix.Stat(path, &b) != nil {
		return false
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

// replay reads every whole entry of f and returns the live ones and the
// length of the part holding whole entries. A line that is not an entry is
// skipped; only a torn one at the end is cut off.
func replay(f *os.File) (map[fluid.ID]*live, int64, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, 0, err
	}
	jobs := map[fluid.ID]*live{}
	r := bufio.NewReaderSize(f, 64<<10)
	var good int64
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return jobs, good, nil // a line without its newline is torn
		}
		if err != nil {
			return nil, 0, err
		}
		good += int64(len(line))
		// An entry never holds a zero byte (JSON escapes it): zeros are
		// room reserve made that a crash of the machine left unwritten,
		// with whatever part of an entry reached the disk before them,
		// while a later page did reach it. The entry after them is whole.
		if z := bytes.LastIndexByte(line, 0); z >= 0 {
			line = line[z+1:]
		}
		var e Entry
		if !intact(line) || json.Unmarshal(line, &e) != nil {
			continue
		}
		apply(jobs, e.Op, e.ID, line)
	}
}

// apply updates jobs with one entry, whose line is kept (not copied).
func apply(jobs map[fluid.ID]*live, op string, id fluid.ID, line []byte) (delta int64) {
	l := jobs[id]
	switch op {
	case OpLaunch, OpEnd:
		if l == nil {
			l = &live{}
			jobs[id] = l
		}
		before := l.size()
		if op == OpLaunch {
			l.launch = line
		} else {
			l.end = line
		}
		return l.size() - before
	case OpAck:
		if l != nil {
			delete(jobs, id)
			return -l.size()
		}
	}
	return 0
}

// Jobs returns the live jobs.
func (j *Journal) Jobs() []Job {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]Job, 0, len(j.jobs))
	for id, l := range j.jobs {
		out = append(out, Job{ID: id, Launch: data(l.launch), End: data(l.end)})
	}
	return out
}

// Len returns the number of live jobs.
func (j *Journal) Len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.jobs)
}

// Syncs returns how many syncs the journal has done: with group commit,
// far fewer than the entries that asked for one.
func (j *Journal) Syncs() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.syncs
}

// data is the data of an entry's line.
func data(line []byte) json.RawMessage {
	if line == nil {
		return nil
	}
	var e Entry
	if json.Unmarshal(line, &e) != nil {
		return nil
	}
	return e.Data
}

// Encode returns an entry's line. The agent encodes each entry once.
func Encode(e Entry) ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("journal entry %s %d: %w", e.Op, e.ID, err)
	}
	return seal(b), nil
}

// The checksum closes each line: `,"crc":"<8 hex digits>"}`, of the
// bytes before it.
const crcKey = `,"crc":"`

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// crcTail is the length of a line's checksum, closing brace included.
const crcTail = len(crcKey) + 8 + len(`"}`)

// seal turns an encoded entry, a JSON object, into its line: the object
// with its checksum as last key, and a newline.
func seal(obj []byte) []byte {
	body := obj[:len(obj)-1] // without its closing brace
	sum := crc32.Checksum(body, crcTable)
	out := append(body, crcKey...)
	for shift := 28; shift >= 0; shift -= 4 {
		out = append(out, "0123456789abcdef"[sum>>shift&15])
	}
	return append(out, '"', '}', '\n')
}

// intact reports whether a line's checksum, if it has one, matches.
func intact(line []byte) bool {
	l := bytes.TrimSuffix(line, []byte{'\n'})
	if len(l) < crcTail+1 || !bytes.HasSuffix(l, []byte(`"}`)) ||
		string(l[len(l)-crcTail:len(l)-crcTail+len(crcKey)]) != crcKey {
		return true // written before checksums: read as it is
	}
	body := l[:len(l)-crcTail]
	want, err := strconv.ParseUint(string(l[len(l)-crcTail+len(crcKey):len(l)-2]), 16, 32)
	return err == nil && uint32(want) == crc32.Checksum(body, crcTable)
}

// Append adds entries; done, if not nil, is called on the committer's
// goroutine once they are durable (sync true) or written (sync false), or
// with ErrClosed if the journal was closed before they were written. done
// must not block. Entries without sync are written with the next batch:
// they cost no sync of their own.
func (j *Journal) Append(entries []Entry, sync bool, done func(error)) {
	var buf []byte
	var pe []pendingEntry
	for _, e := range entries {
		line, err := Encode(e)
		if err != nil {
			// Our own entries always encode; a data that does not is a
			// bug, and is not worth losing the rest for.
			continue
		}
		pe = append(pe, pendingEntry{op: e.Op, id: e.ID, start: len(buf), end: len(buf) + len(line)})
		buf = append(buf, line...)
	}
	j.appendLines(buf, pe, sync, done)
}

func (j *Journal) appendLines(buf []byte, pe []pendingEntry, sync bool, done func(error)) {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		if done != nil {
			done(ErrClosed)
		}
		return
	}
	base := len(j.pending)
	for _, p := range pe {
		p.start += base
		p.end += base
		j.entries = append(j.entries, p)
	}
	j.pending = append(j.pending, buf...)
	j.sync = j.sync || sync
	if done != nil {
		j.done = append(j.done, done)
	}
	j.cond.Signal()
	j.mu.Unlock()
}

// Commit appends entries and returns once they are durable.
func (j *Journal) Commit(entries ...Entry) error {
	ch := make(chan error, 1)
	j.Append(entries, true, func(err error) { ch <- err })
	return <-ch
}

// Close writes what is pending, stops the committer and releases the
// lock. With remove true and no live job left, the file is removed first,
// under the lock, so that no agent ever adopts it.
func (j *Journal) Close(remove bool) error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		<-j.exited
		return nil
	}
	j.closed = true
	j.cond.Signal()
	j.mu.Unlock()
	<-j.exited
	if remove && len(j.jobs) == 0 {
		os.Remove(j.path)
	}
	return j.f.Close()
}

// commit is the committer: one write and at most one sync per batch.
func (j *Journal) commit() {
	defer close(j.exited)
	for {
		j.mu.Lock()
		for len(j.pending) == 0 && len(j.done) == 0 && !j.closed {
			j.cond.Wait()
		}
		if len(j.pending) == 0 && len(j.done) == 0 && j.closed {
			j.mu.Unlock()
			return
		}
		buf, entries, sync, done, hook := j.pending, j.entries, j.sync, j.done, j.hookWrite
		j.pending, j.entries, j.sync, j.done = nil, nil, false, nil
		j.mu.Unlock()

		if hook != nil {
			hook()
		}
		j.write(buf, sync)

		j.mu.Lock()
		for _, p := range entries {
			j.liveBytes += apply(j.jobs, p.op, p.id, buf[p.start:p.end:p.end])
		}
		j.size += int64(len(buf))
		if sync {
			j.syncs++
		}
		j.mu.Unlock()
		for _, d := range done {
			d(nil)
		}
		j.maybeCompact()
		j.reserve()
	}
}

// OnWriteError sets fn to hear that the journal cannot be written: once
// with the error when a write or sync first fails, and once with nil when
// one succeeds again. Meanwhile every entry waits, and so does whoever
// waits on one (an end is not reported until it is durable), so whoever
// runs the journal can say, once, why. fn runs on the committer and must
// not block. Set before the first Append.
func (j *Journal) OnWriteError(fn func(err error)) {
	j.mu.Lock()
	j.report = fn
	j.mu.Unlock()
}

// write writes buf at the end of the file and syncs it if asked, retrying
// until both succeed.
func (j *Journal) write(buf []byte, sync bool) {
	wait := retryMin
	for {
		err := j.writeOnce(buf, sync)
		if err == nil {
			if j.stuck {
				j.stuck = false
				j.told(nil)
			}
			return
		}
		if !j.stuck {
			j.stuck = true
			j.told(err)
		}
		// The entries wait, as does everyone waiting on them, until the
		// disk takes them.
		time.Sleep(wait)
		wait = min(2*wait, retryMax)
	}
}

func (j *Journal) told(err error) {
	j.mu.Lock()
	fn := j.report
	j.mu.Unlock()
	if fn != nil {
		fn(err)
	}
}

func (j *Journal) writeOnce(buf []byte, sync bool) error {
	if len(buf) > 0 {
		if _, err := j.f.WriteAt(buf, j.size); err != nil {
			return err
		}
	}
	if sync {
		return unix.Fdatasync(int(j.f.Fd()))
	}
	return nil
}

// reserve keeps room allocated past the entries, so that entries are
// written into space the file already has: on a full disk the agent keeps
// launching and ending jobs for a while, as fluxsched keeps them running.
//
// The room is inside the file's size (it reads as zeros, which replay
// takes for the torn end of the last entry), not past it: an entry
// written there leaves the file's size as it was, so the fdatasync that
// makes an end durable writes the entry's data alone, without the inode.
// That is about a third less time on every end's way to fluxsched on these
// disks (BenchmarkCommit: in place against appended). Where the
// filesystem cannot allocate that way, the room is kept past the file's
// size, and entries append. A reserve that cannot be made is tried again
// after the next write. Called by the committer (or before it starts).
func (j *Journal) reserve() {
	if j.reserved-j.size >= reserveSize/2 {
		return
	}
	fd := int(j.f.Fd())
	if inPlace && unix.Fallocate(fd, 0, j.size, reserveSize) == nil ||
		unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, j.size, reserveSize) == nil {
		j.reserved = j.size + reserveSize
	}
}

// inPlace says that reserve puts the room inside the file's size;
// BenchmarkCommit turns it off to measure the other way.
var inPlace = true

// maybeCompact rewrites the journal with its live entries alone once dead
// ones dominate. It runs on the committer, between batches, so the file
// and jobs agree. A compaction that fails leaves the old file as it was.
func (j *Journal) maybeCompact() {
	j.mu.Lock()
	size, liveBytes := j.size, j.liveBytes
	j.mu.Unlock()
	if size < compactMin || size-liveBytes < liveBytes {
		return
	}
	if err := j.compact(); err != nil {
		os.Remove(j.path + ".tmp")
	}
}

func (j *Journal) compact() error {
	tmp := j.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	// Locked before it is renamed, so that the path is never free.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return err
	}
	// The live lines are copied into one buffer that the new jobs point
	// into, so that no batch written before stays in memory for one line.
	j.mu.Lock()
	var n int
	for _, l := range j.jobs {
		n += int(l.size())
	}
	buf := make([]byte, 0, n)
	jobs := make(map[fluid.ID]*live, len(j.jobs))
	keep := func(line []byte) []byte {
		if line == nil {
			return nil
		}
		start := len(buf)
		buf = append(buf, line...)
		return buf[start:len(buf):len(buf)]
	}
	for id, l := range j.jobs {
		jobs[id] = &live{launch: keep(l.launch), end: keep(l.end)}
	}
	j.mu.Unlock()
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := os.Rename(tmp, j.path); err != nil {
		f.Close()
		return err
	}
	syncDir(j.path)
	j.mu.Lock()
	old := j.f
	j.f = f
	j.size = int64(len(buf))
	j.reserved = 0 // the new file has none yet: made after this batch
	j.jobs = jobs
	j.mu.Unlock()
	old.Close()
	return nil
}

// syncDir makes a rename or removal in path's directory durable.
func syncDir(path string) {
	if d, err := os.Open(dirOf(path)); err == nil {
		d.Sync()
		d.Close()
	}
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			if i == 0 {
				return "/"
			}
			return path[:i]
		}
	}
	return "."
}

// Adopt merges the journal at path, if its lock is free (its agent is
// dead), into this one: its live entries are committed here, then the
// files in alsoRemove (the dead agent's socket and pid file) and the
// journal itself are removed, all under its lock, so that an agent of its
// build starting meanwhile creates a new one. It returns the jobs merged,
// or ErrLocked if the journal's agent lives.
func (j *Journal) Adopt(path string, alsoRemove ...string) ([]Job, error) {
	if path == j.path {
		return nil, fmt.Errorf("journal %s: cannot adopt itself", path)
	}
	f, err := lockFile(path, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	jobs, _, err := replay(f)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	var buf []byte
	var pe []pendingEntry
	var out []Job
	add := func(op string, id fluid.ID, line []byte) {
		pe = append(pe, pendingEntry{op: op, id: id, start: len(buf), end: len(buf) + len(line)})
		buf = append(buf, line...)
	}
	for id, l := range jobs {
		if l.launch != nil {
			add(OpLaunch, id, l.launch)
		}
		if l.end != nil {
			add(OpEnd, id, l.end)
		}
		out = append(out, Job{ID: id, Launch: data(l.launch), End: data(l.end)})
	}
	if len(buf) > 0 {
		ch := make(chan error, 1)
		j.appendLines(buf, pe, true, func(err error) { ch <- err })
		if err := <-ch; err != nil {
			return nil, err
		}
	}
	for _, p := range alsoRemove {
		os.Remove(p)
	}
	os.Remove(path + ".tmp")
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return out, fmt.Errorf("journal %s: %w", path, err)
	}
	syncDir(path)
	return out, nil
}
