package schedproto

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/wire"
)

// docPath is the contract a scheduler command is written from. Its tables
// marked "held to the code" are drawn here from the code, and must appear
// in it line for line (column widths aside), as TestTablesDrawn holds
// docs/architecture.md to the job manager's protocol tables: a user
// writes a scheduler from that page alone, so where it and the code
// disagree, the scheduler is wrong and cannot know why.
const docPath = "../../docs/scheduler-protocol.md"

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// squeeze makes each run of spaces one, so column widths do not matter.
func squeeze(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " \x00 ")), " ")
}

func row(cells ...string) string { return "| " + strings.Join(cells, " | ") + " |" }

func keyCell(ks []string) string {
	if len(ks) == 0 {
		return "–"
	}
	q := make([]string, len(ks))
	for i, k := range ks {
		q[i] = "`" + k + "`"
	}
	return strings.Join(q, ", ")
}

// jsonKeys lists the JSON keys of a struct type, in field order.
func jsonKeys(v any) []string {
	var out []string
	typ := reflect.TypeOf(v)
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

func docMsg(topic string, typ wire.Type, payload map[string]any) wire.Message {
	b, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	return wire.Message{Topic: topic, Type: typ, Payload: b}
}

// without returns a copy of m lacking key.
func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

var sampleR = map[string]any{"version": 1, "execution": map[string]any{
	"R_lite": []any{map[string]any{"rank": "0", "children": map[string]any{"core": "0-1"}}}, "starttime": 0, "expiration": 0}}

// payloadRows draws the payload table: for each message, the keys whose
// absence its decoder refuses (found by taking each out of a valid
// sample), and the other keys its type knows.
func payloadRows(t *testing.T) []string {
	type payload struct {
		name   string
		topic  string
		typ    wire.Type
		sample map[string]any
		goType any
		decode func(wire.Message) error
	}
	err := func(f func(wire.Message) error) func(wire.Message) error { return f }
	full := map[string]any{"resources": sampleR, "up": "0", "down": "", "sessions": map[string]any{}, "outside": ""}
	hello := map[string]any{"id": 1, "priority": 16, "userid": 0, "t_submit": 1.5, "R": sampleR}
	alloc := map[string]any{"id": 1, "priority": 16, "userid": 0, "t_submit": 1.5, "jobspec": map[string]any{}}
	payloads := []payload{
		{"first response", TopicAcquire, wire.Response, full, Acquire{},
			err(func(m wire.Message) error { _, e := DecodeAcquire(m, true); return e })},
		{"update", TopicAcquire, wire.Response, full, Acquire{},
			err(func(m wire.Message) error { _, e := DecodeAcquire(m, false); return e })},
		{"response", TopicHello, wire.Response, hello, HelloJob{},
			err(func(m wire.Message) error { _, e := DecodeHelloJob(m); return e })},
		{"request", TopicReady, wire.Request, map[string]any{"mode": "unlimited"}, Ready{},
			err(func(m wire.Message) error { _, e := DecodeReady(m); return e })},
		{"response", TopicReady, wire.Response, map[string]any{"count": 0}, ReadyResponse{},
			err(func(m wire.Message) error { _, e := DecodeReadyResponse(m); return e })},
		{"request", TopicAlloc, wire.Request, alloc, Alloc{},
			err(func(m wire.Message) error { _, e := DecodeAlloc(m); return e })},
		{"response", TopicAlloc, wire.Response, map[string]any{"id": 1, "type": 0, "R": sampleR, "annotations": map[string]any{}}, AllocResponse{},
			err(func(m wire.Message) error { _, e := DecodeAllocResponse(m); return e })},
		{"request", TopicCancel, wire.Request, map[string]any{"id": 1}, JobID{},
			err(func(m wire.Message) error { _, e := DecodeJobID(m); return e })},
		{"request", TopicPrioritize, wire.Request, map[string]any{"jobs": [][2]uint64{{1, 2}}}, Prioritize{},
			err(func(m wire.Message) error { _, e := DecodePrioritize(m); return e })},
		{"request", TopicFree, wire.Request, map[string]any{"id": 1}, JobID{},
			err(func(m wire.Message) error { _, e := DecodeJobID(m); return e })},
		{"response", TopicFree, wire.Response, map[string]any{"id": 1}, JobID{},
			err(func(m wire.Message) error { _, e := DecodeJobID(m); return e })},
	}
	var rows []string
	for _, p := range payloads {
		if e := p.decode(docMsg(p.topic, p.typ, p.sample)); e != nil {
			t.Fatalf("%s %s: the sample is refused: %v", p.topic, p.name, e)
		}
		var required, other []string
		for _, k := range jsonKeys(p.goType) {
			_, inSample := p.sample[k]
			if inSample && p.decode(docMsg(p.topic, p.typ, without(p.sample, k))) != nil {
				required = append(required, k)
			} else {
				other = append(other, k)
			}
		}
		rows = append(rows, row("`"+p.topic+"` "+p.name, keyCell(required), keyCell(other)))
	}
	return rows
}

// allocTypeRows draws the table of sched.alloc response types: which of
// the optional keys each type takes, and which it cannot do without.
func allocTypeRows(t *testing.T) []string {
	extra := map[string]any{"annotations": map[string]any{"sched": map[string]any{}}, "note": "why", "R": sampleR}
	decode := func(p map[string]any) error {
		_, err := DecodeAllocResponse(docMsg(TopicAlloc, wire.Response, p))
		return err
	}
	var rows []string
	for _, typ := range []AllocType{Success, Annotate, Deny, Cancel} {
		var cells []string
		for _, k := range jsonKeys(AllocResponse{}) {
			if k == "id" || k == "type" {
				continue
			}
			with := map[string]any{"id": 1, "type": int(typ), k: extra[k]}
			if decode(with) != nil {
				continue
			}
			cell := "`" + k + "`"
			if decode(without(with, k)) != nil {
				cell += " (required)"
			}
			cells = append(cells, cell)
		}
		kinds := "–"
		if len(cells) > 0 {
			kinds = strings.Join(cells, ", ")
		}
		rows = append(rows, row(typ.String(), strconv.Itoa(int(typ)), kinds))
	}
	if decode(map[string]any{"id": 1, "type": 4}) == nil {
		t.Error("a sched.alloc response of type 4 is accepted: the doc says 0-3")
	}
	return rows
}

// envelopeRows draws the message keys from wire.Message.
func envelopeRows() []string {
	var rows []string
	typ := reflect.TypeOf(wire.Message{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue // never on the line (Body: a message in process)
		}
		kind := map[reflect.Kind]string{reflect.String: "string", reflect.Int: "integer", reflect.Slice: "object",
			reflect.Uint32: "unsigned integer", reflect.Uint64: "unsigned integer"}[f.Type.Kind()]
		rows = append(rows, row("`"+name+"`", kind))
	}
	return rows
}

// errnumRows draws the error numbers fluxsched sends, checking that they
// are Linux's, as the doc says.
func errnumRows(t *testing.T) []string {
	nums := []struct {
		name string
		n    int
		sys  syscall.Errno
	}{
		// A refused SUCCESS is answered EINVAL by the job manager.
		{"EINVAL", int(syscall.EINVAL), syscall.EINVAL},
		{"ENOSYS", wire.ENOSYS, syscall.ENOSYS},
		{"ENODATA", wire.ENODATA, syscall.ENODATA},
		{"EPROTO", wire.EPROTO, syscall.EPROTO},
	}
	var rows []string
	for _, e := range nums {
		if e.n != int(e.sys) {
			t.Errorf("%s is %d in internal/wire, %d on Linux", e.name, e.n, int(e.sys))
		}
		rows = append(rows, row(strconv.Itoa(e.n), e.name))
	}
	return rows
}

// topicConsts reads the Topic* constants of this package from its
// sources, so that a topic added to the code and not to the doc fails.
func topicConsts(t *testing.T) map[string]string {
	fset := token.NewFileSet()
	out := map[string]string{}
	files, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, fi := range files {
		if !strings.HasSuffix(fi.Name(), ".go") || strings.HasSuffix(fi.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, fi.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !strings.HasPrefix(n.Name, "Topic") || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
						v, _ := strconv.Unquote(lit.Value)
						out[n.Name] = v
					}
				}
			}
		}
	}
	return out
}

// topicRows draws the topic table: who asks, who answers.
func topicRows(t *testing.T) []string {
	topics := []struct{ topic, asks, answers string }{
		{TopicAcquire, "scheduler", "fluxsched"},
		{TopicHello, "scheduler", "fluxsched"},
		{TopicReady, "scheduler", "fluxsched"},
		{TopicAlloc, "fluxsched", "scheduler"},
		{TopicCancel, "fluxsched", "scheduler"},
		{TopicPrioritize, "fluxsched", "scheduler"},
		{TopicFree, "fluxsched", "scheduler"},
	}
	consts := topicConsts(t)
	for name, v := range consts {
		if name == "TopicSync" {
			continue // in process only: never on a scheduler command's line
		}
		if !slices.ContainsFunc(topics, func(x struct{ topic, asks, answers string }) bool { return x.topic == v }) {
			t.Errorf("%s (%q) is a topic of the code that the doc's table lacks", name, v)
		}
	}
	if len(consts) < len(topics) {
		t.Errorf("found %d Topic constants in the sources, want at least %d", len(consts), len(topics))
	}
	var rows []string
	for _, x := range topics {
		rows = append(rows, row("`"+x.topic+"`", x.asks, x.answers))
	}
	return rows
}

func TestProtocolDocDrawn(t *testing.T) {
	doc := readDoc(t)
	text := squeeze(doc)
	tables := map[string][]string{
		"envelope":       envelopeRows(),
		"errnum":         errnumRows(t),
		"topic":          topicRows(t),
		"payload":        payloadRows(t),
		"alloc response": allocTypeRows(t),
	}
	for _, name := range []string{"envelope", "errnum", "topic", "payload", "alloc response"} {
		for _, l := range tables[name] {
			if os.Getenv("SCHEDPROTO_DRAW") != "" {
				t.Log(l)
			}
			if !strings.Contains(text, squeeze(l)) {
				t.Errorf("%s lacks the %s table line %q", docPath, name, l)
			}
		}
	}
}

// TestProtocolDocTopics holds the doc's prose to the code as well: every
// topic it names is one the code has, and the one topic that never
// reaches a scheduler command is said to be so.
func TestProtocolDocTopics(t *testing.T) {
	doc := readDoc(t)
	known := map[string]bool{}
	for _, v := range topicConsts(t) {
		known[v] = true
	}
	for _, m := range regexp.MustCompile("`((?:sched|job-manager|resource)\\.[a-z-]+)`").FindAllStringSubmatch(doc, -1) {
		if !known[m[1]] {
			t.Errorf("the doc names %s, which is no topic of internal/schedproto", m[1])
		}
	}
	if !strings.Contains(squeeze(doc), fmt.Sprintf("`%s` is fluxq's in-process request", TopicSync)) ||
		!strings.Contains(doc, "never sent to a scheduler command") {
		t.Errorf("the doc must say that %s never reaches a scheduler command", TopicSync)
	}
}

// TestProtocolDocExamples holds the doc's JSON examples to the parsers: a
// user copies them, so each must read, and an R must be one fluxq takes.
func TestProtocolDocExamples(t *testing.T) {
	doc := readDoc(t)
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(doc, -1)
	if len(blocks) == 0 {
		t.Fatal("the doc has no JSON example")
	}
	for _, b := range blocks {
		if !json.Valid([]byte(b[1])) {
			t.Errorf("a JSON example does not read:\n%s", b[1])
			continue
		}
		if strings.Contains(b[1], `"R_lite"`) {
			if _, err := rset.Parse([]byte(b[1])); err != nil {
				t.Errorf("the R example is not R fluxq takes: %v", err)
			}
		}
	}
}
