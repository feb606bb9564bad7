// Package top is the screen of `fluxq top`: a snapshot of the instance
// (resources in use, job counts, queues, running and pending jobs), laid
// out for a terminal of a given size and drawn on a tcell screen, and the
// loop that refreshes it. It knows nothing of the instance: the command
// reads the instance and hands over a Snapshot with every cell already
// formatted, so the words of `fluxq jobs` (INFO, TIME, job IDs) come from
// one place.
package top

import (
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"

	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/fsd"
)

// Snapshot is what one refresh read from the instance.
type Snapshot struct {
	// Gauges are the resources in use: nodes, cores, and GPUs and memory
	// when the instance has any.
	Gauges []Gauge
	// Pending, Running and Inactive count jobs by state; Inactive only
	// those that ended within InactiveWindow (e.g. "1h"), and
	// InactiveMore says the count stopped at a cap.
	Pending, Running, Inactive int
	InactiveMore               bool
	InactiveWindow             string
	// Policy is the scheduler's queue policy when the instance says so.
	Policy string
	// Queues are the named queues (none: the anonymous queue only).
	Queues []Queue
	// RunningJobs are in start order, newest first; PendingJobs in the
	// order they will be considered. They may stop short of Running and
	// Pending: the rest show as "+N more".
	RunningJobs, PendingJobs []Job
	// WithQueue adds a QUEUE column to the job tables.
	WithQueue bool
}

// Gauge is one resource: how much of it jobs hold.
type Gauge struct {
	Name        string // "nodes", "cores", "gpus", "memory"
	Used, Total int
	// UsedText and TotalText print Used and Total when a count is not
	// the number ("3G" of memory, not 3221225472); "" prints the number.
	UsedText, TotalText string
	Note                string // e.g. "1 drained"
}

// texts are the used and total counts as the gauge prints them.
func (g Gauge) texts() (used, total string) {
	used, total = g.UsedText, g.TotalText
	if used == "" {
		used = strconv.Itoa(g.Used)
	}
	if total == "" {
		total = strconv.Itoa(g.Total)
	}
	return used, total
}

// Queue is one named queue.
type Queue struct {
	Name             string
	Default          bool
	Enabled, Started bool
	Policy           string
	Running, Pending int
}

// Job is one row of a job table, every cell formatted: ID, Queue, User,
// Name, NTasks and Info in both tables; NNodes and Time (how long it has
// run) for running jobs, Priority for pending ones. Info is the nodelist
// of a running job and the eta, hold or reason of a pending one.
type Job struct {
	ID, Queue, User, Name string
	NTasks, NNodes, Time  string
	Priority              string
	Info                  string
}

// Status is what the title line says besides the snapshot.
type Status struct {
	// Title names the instance (e.g. its state directory).
	Title string
	// Updated is when the snapshot shown was read (zero: not yet).
	Updated time.Time
	// Delay is the refresh interval (0: a single snapshot, no keys).
	Delay time.Duration
	// Err is why the last refresh failed; the screen keeps the last
	// snapshot and says it is retrying.
	Err string
}

// Styles colour the screen; Plain is monochrome (--color never, NO_COLOR),
// which keeps only reverse video for headings.
type Styles struct {
	Title, Header, Bar, Label, Error, Dim, Normal tcell.Style
}

// Plain is the monochrome style set.
var Plain = Styles{
	Title:  tcell.StyleDefault.Reverse(true),
	Header: tcell.StyleDefault.Reverse(true),
	Bar:    tcell.StyleDefault.Bold(true),
	Label:  tcell.StyleDefault.Bold(true),
	Error:  tcell.StyleDefault.Bold(true),
	Dim:    tcell.StyleDefault,
	Normal: tcell.StyleDefault,
}

// Colored is the colour style set, after htop: green bars, a cyan title.
var Colored = Styles{
	Title:  tcell.StyleDefault.Background(tcell.ColorTeal).Foreground(tcell.ColorBlack),
	Header: tcell.StyleDefault.Background(tcell.ColorGreen).Foreground(tcell.ColorBlack),
	Bar:    tcell.StyleDefault.Foreground(tcell.ColorGreen).Bold(true),
	Label:  tcell.StyleDefault.Foreground(tcell.ColorTeal).Bold(true),
	Error:  tcell.StyleDefault.Foreground(tcell.ColorRed).Bold(true),
	Dim:    tcell.StyleDefault.Foreground(tcell.ColorGray),
	Normal: tcell.StyleDefault,
}

// Span is text in one style.
type Span struct {
	Text  string
	Style tcell.Style
}

// Line is one screen row.
type Line []Span

// String is the line's text.
func (l Line) String() string {
	var b strings.Builder
	for _, s := range l {
		b.WriteString(s.Text)
	}
	return b.String()
}

// Keys is the hint on the title line.
const Keys = "q quit  r refresh"

// Layout lays the screen out for a terminal width x height; a width or
// height <= 0 is unlimited (--once prints every row). Rows of a table that
// do not fit are cut, the last visible one saying how many are hidden
// ("+N more"); the header lines always come first.
func Layout(snap *Snapshot, st Status, sty Styles, width, height int) []Line {
	head := []Line{titleLine(st, sty, width)}
	if snap != nil {
		head = append(head, summaryLines(snap, sty, width)...)
	}
	if st.Err != "" {
		head = append(head, Line{{Text: "instance: " + output.Cell(st.Err, 0) + " (retrying every " + delayText(st.Delay) + ")", Style: sty.Error}})
	}
	if snap == nil {
		// Nothing read yet: no counts or tables that would claim "none".
		return clipLines(head, height)
	}

	tables := []table{}
	if len(snap.Queues) > 0 {
		tables = append(tables, queueTable(snap.Queues))
	}
	tables = append(tables, runningTable(snap), pendingTable(snap))

	lines := head
	// One blank line before each table.
	avail := -1
	if height > 0 {
		avail = max(0, height-len(head)-len(tables))
	}
	caps := allocate(tables, avail)
	for i, t := range tables {
		if caps[i] == 0 {
			continue
		}
		lines = append(lines, Line{})
		lines = append(lines, t.render(caps[i], width, sty)...)
	}
	return clipLines(lines, height)
}

// clipLines keeps the first height lines (height <= 0: all).
func clipLines(lines []Line, height int) []Line {
	if height > 0 && len(lines) > height {
		return lines[:height]
	}
	return lines
}

// delayText is the refresh interval as an FSD ("2s", "500ms").
func delayText(d time.Duration) string { return fsd.FormatExact(d.Seconds()) }

// titleLine is "fluxq top  TITLE ... HH:MM:SS every 2s  q quit  r refresh".
func titleLine(st Status, sty Styles, width int) Line {
	left := "fluxq top"
	if st.Title != "" {
		left += "  " + output.Cell(st.Title, 0)
	}
	when := "reading the instance..."
	if !st.Updated.IsZero() {
		when = st.Updated.Format("15:04:05")
	}
	right := when
	if st.Delay > 0 {
		right += "  every " + delayText(st.Delay) + "  " + Keys
	}
	text := left + "  " + right
	if n := utf8.RuneCountInString(text); width > 0 && n < width {
		text = left + strings.Repeat(" ", width-n+2) + right
	}
	return Line{{Text: text, Style: sty.Title}}
}

// summaryLines are the gauges, each with a job count beside it, as flux
// top shows them, then the policy.
func summaryLines(snap *Snapshot, sty Styles, width int) []Line {
	counts := []string{
		strconv.Itoa(snap.Pending) + " pending",
		strconv.Itoa(snap.Running) + " running",
		inactiveText(snap),
	}
	barWidth := 30
	if width > 0 {
		barWidth = min(50, max(10, width/2-20))
	}
	labelWidth := 0
	for _, g := range snap.Gauges {
		labelWidth = max(labelWidth, utf8.RuneCountInString(g.Name))
	}
	tw := totalWidth(snap.Gauges)
	lines := make([]Line, max(len(snap.Gauges), len(counts)))
	gaugeWidth := 0
	for i, g := range snap.Gauges {
		lines[i] = gaugeSpans(g, labelWidth, barWidth, tw, sty)
		gaugeWidth = max(gaugeWidth, utf8.RuneCountInString(lines[i].String()))
	}
	for i, c := range counts {
		// The counts line up in a column right of the gauges.
		pad := gaugeWidth - utf8.RuneCountInString(lines[i].String())
		lines[i] = append(lines[i], Span{Text: strings.Repeat(" ", pad) + "   "}, Span{Text: c, Style: sty.Normal})
	}
	if snap.Policy != "" {
		lines = append(lines, Line{{Text: "policy ", Style: sty.Label}, {Text: output.Cell(snap.Policy, 0), Style: sty.Normal}})
	}
	return lines
}

func inactiveText(snap *Snapshot) string {
	n := strconv.Itoa(snap.Inactive)
	if snap.InactiveMore {
		n += "+"
	}
	s := n + " inactive"
	if snap.InactiveWindow != "" {
		s += " (last " + snap.InactiveWindow + ")"
	}
	return s
}

// totalWidth is the digits of the largest total, so that the counts of
// every gauge line up.
func totalWidth(gs []Gauge) int {
	w := 1
	for _, g := range gs {
		used, total := g.texts()
		w = max(w, len(total), len(used))
	}
	return w
}

// gaugeSpans is "cores [||||||      ] 12/16".
func gaugeSpans(g Gauge, labelWidth, barWidth, tw int, sty Styles) Line {
	filled := 0
	if g.Total > 0 {
		// In 128 bits: a gauge of memory counts bytes, whose product with
		// the width may not fit in an int.
		used := uint64(min(g.Total, max(0, g.Used)))
		hi, lo := bits.Mul64(used, uint64(barWidth))
		lo, carry := bits.Add64(lo, uint64(g.Total-1), 0) // a used part never shows empty
		q, _ := bits.Div64(hi+carry, lo, uint64(g.Total))
		filled = min(barWidth, int(q))
	}
	pad := strings.Repeat(" ", labelWidth-utf8.RuneCountInString(g.Name))
	return Line{
		{Text: pad + g.Name + " ", Style: sty.Label},
		{Text: "["},
		{Text: strings.Repeat("|", filled), Style: sty.Bar},
		{Text: strings.Repeat(" ", barWidth-filled) + "] "},
		{Text: countPair(g, tw), Style: sty.Normal},
		{Text: noteText(g.Note), Style: sty.Dim},
	}
}

func countPair(g Gauge, w int) string {
	used, total := g.texts()
	return strings.Repeat(" ", max(0, w-len(used))) + used + "/" + total + strings.Repeat(" ", max(0, w-len(total)))
}

func noteText(n string) string {
	if n == "" {
		return ""
	}
	return " (" + n + ")"
}

// column is one column of a table.
type column struct {
	header string
	right  bool
	max    int // widest a value prints; 0: no limit
	last   bool
}

// table is a heading and rows of cells.
type table struct {
	cols []column
	rows [][]string
	// total is how many rows there are, of which rows are the first
	// (a snapshot keeps no more rows than a screen can show).
	total int
	// empty is the row shown when there are none.
	empty string
}

// need is the lines the table wants: its header and every row (or the
// empty note).
func (t table) need() int {
	return 1 + max(1, len(t.rows)+t.more())
}

// more is 1 when rows were left out of the snapshot: a line says so.
func (t table) more() int {
	if t.total > len(t.rows) {
		return 1
	}
	return 0
}

// render lays the table out in at most limit lines (limit < 0: all).
func (t table) render(limit, width int, sty Styles) []Line {
	rows := t.rows
	hidden := max(0, t.total-len(rows))
	if limit >= 0 && 1+len(rows)+t.more() > limit {
		// The last line that fits says how many rows it stands for.
		shown := max(0, limit-2)
		hidden = max(len(rows), t.total) - shown
		rows = rows[:shown]
	}
	widths := make([]int, len(t.cols))
	cells := make([][]string, len(rows))
	for i, c := range t.cols {
		widths[i] = utf8.RuneCountInString(c.header)
	}
	for r, row := range rows {
		cells[r] = make([]string, len(t.cols))
		for i, c := range t.cols {
			v := output.Cell(row[i], c.max)
			cells[r][i] = v
			if !c.last {
				widths[i] = max(widths[i], utf8.RuneCountInString(v))
			}
		}
	}
	format := func(vals []string) string {
		var b strings.Builder
		for i, c := range t.cols {
			if i > 0 {
				b.WriteByte(' ')
			}
			v := vals[i]
			padding := strings.Repeat(" ", max(0, widths[i]-utf8.RuneCountInString(v)))
			switch {
			case c.last:
				b.WriteString(v)
			case c.right:
				b.WriteString(padding + v)
			default:
				b.WriteString(v + padding)
			}
		}
		return strings.TrimRight(b.String(), " ")
	}
	headers := make([]string, len(t.cols))
	for i, c := range t.cols {
		headers[i] = c.header
	}
	var out []Line
	if limit == 1 && hidden > 0 {
		// No room for a row: the one line says what is hidden.
		return []Line{{{Text: "+" + strconv.Itoa(hidden) + " more", Style: sty.Dim}}}
	}
	h := format(headers)
	if n := utf8.RuneCountInString(h); width > n {
		h += strings.Repeat(" ", width-n)
	}
	out = append(out, Line{{Text: h, Style: sty.Header}})
	for _, r := range cells {
		out = append(out, Line{{Text: clip(format(r), width), Style: sty.Normal}})
	}
	switch {
	case hidden > 0:
		out = append(out, Line{{Text: "+" + strconv.Itoa(hidden) + " more", Style: sty.Dim}})
	case len(t.rows) == 0 && t.empty != "" && (limit < 0 || limit > 1):
		out = append(out, Line{{Text: t.empty, Style: sty.Dim}})
	}
	return out
}

// clip cuts a line to width runes (width <= 0: no limit).
func clip(s string, width int) string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	return string([]rune(s)[:width])
}

// allocate shares avail lines between tables (avail < 0: unlimited), each
// getting what it needs when all fit; else an equal share, with what a
// smaller table leaves over going to the others.
func allocate(ts []table, avail int) []int {
	caps := make([]int, len(ts))
	if avail < 0 {
		for i := range caps {
			caps[i] = -1
		}
		return caps
	}
	open := make([]bool, len(ts))
	nopen := len(ts)
	for i := range open {
		open[i] = true
	}
	for nopen > 0 && avail > 0 {
		share := max(1, avail/nopen)
		progress := false
		for i, t := range ts {
			if !open[i] || avail == 0 {
				continue
			}
			give := min(share, t.need()-caps[i], avail)
			caps[i] += give
			avail -= give
			if give > 0 {
				progress = true
			}
			if caps[i] == t.need() {
				open[i] = false
				nopen--
			}
		}
		if !progress {
			break
		}
	}
	return caps
}

func check(b bool) string {
	if b {
		return "✔"
	}
	return "✗"
}

func queueTable(qs []Queue) table {
	withPolicy := false
	for _, q := range qs {
		withPolicy = withPolicy || q.Policy != ""
	}
	t := table{cols: []column{{header: "QUEUE", max: 16}, {header: "EN"}, {header: "ST"}, {header: "RUNNING", right: true}, {header: "PENDING", right: true}}}
	if withPolicy {
		t.cols = append(t.cols, column{header: "POLICY", last: true})
	}
	for _, q := range qs {
		name := q.Name
		if q.Default {
			name += "*"
		}
		row := []string{name, check(q.Enabled), check(q.Started), strconv.Itoa(q.Running), strconv.Itoa(q.Pending)}
		if withPolicy {
			row = append(row, q.Policy)
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// withQueue inserts the QUEUE column after JOBID when the snapshot asks.
func withQueue(snap *Snapshot, cols []column, rows [][]string, queues []string) ([]column, [][]string) {
	if !snap.WithQueue {
		return cols, rows
	}
	cols = append([]column{cols[0], {header: "QUEUE", max: 8}}, cols[1:]...)
	for i := range rows {
		rows[i] = append([]string{rows[i][0], queues[i]}, rows[i][1:]...)
	}
	return cols, rows
}

func runningTable(snap *Snapshot) table {
	cols := []column{
		{header: "JOBID", right: true}, {header: "USER", max: 8}, {header: "NAME", max: 10},
		{header: "NTASKS", right: true}, {header: "NNODES", right: true}, {header: "TIME", right: true},
		{header: "NODELIST", last: true},
	}
	var rows [][]string
	var queues []string
	for _, j := range snap.RunningJobs {
		rows = append(rows, []string{j.ID, j.User, j.Name, j.NTasks, j.NNodes, j.Time, j.Info})
		queues = append(queues, j.Queue)
	}
	cols, rows = withQueue(snap, cols, rows, queues)
	return table{cols: cols, rows: rows, total: snap.Running, empty: "no running jobs"}
}

func pendingTable(snap *Snapshot) table {
	cols := []column{
		{header: "JOBID", right: true}, {header: "USER", max: 8}, {header: "NAME", max: 10},
		{header: "NTASKS", right: true}, {header: "PRIORITY", right: true}, {header: "INFO", last: true},
	}
	var rows [][]string
	var queues []string
	for _, j := range snap.PendingJobs {
		rows = append(rows, []string{j.ID, j.User, j.Name, j.NTasks, j.Priority, j.Info})
		queues = append(queues, j.Queue)
	}
	cols, rows = withQueue(snap, cols, rows, queues)
	return table{cols: cols, rows: rows, total: snap.Pending, empty: "no pending jobs"}
}

// Draw shows the snapshot on s, sized to it.
func Draw(s tcell.Screen, snap *Snapshot, st Status, sty Styles) {
	w, h := s.Size()
	s.Clear()
	for y, l := range Layout(snap, st, sty, w, h) {
		x := 0
		for _, sp := range l {
			str := sp.Text
			for str != "" && x < w {
				var n int
				str, n = s.Put(x, y, str, sp.Style)
				if n <= 0 {
					break
				}
				x += n
			}
		}
	}
	s.Show()
}

// Text is the screen as plain lines without trailing blanks, for --once.
func Text(lines []Line) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}
