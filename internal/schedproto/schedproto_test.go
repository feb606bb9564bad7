package schedproto

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/wire"
)

func msg(topic string, typ wire.Type, payload string) wire.Message {
	return wire.Message{Topic: topic, Type: typ, Payload: json.RawMessage(payload)}
}

// keys returns the sorted top-level keys of a JSON object.
func keys(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The RFC 27 examples, decoded. The RFC prints the hello and alloc examples
// with trailing commas, which JSON does not allow; they are removed here.
func TestRFC27Examples(t *testing.T) {
	h, err := DecodeHelloJob(msg(TopicHello, wire.Response, `{"id": 1552593348, "priority": 43444, "userid": 5588, "t_submit": 1552593348.073045}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(HelloJob{ID: 1552593348, Priority: 43444, UserID: 5588, TSubmit: 1552593348.073045}, h); diff != "" {
		t.Errorf("hello (-want +got):\n%s", diff)
	}

	r, err := DecodeReady(msg(TopicReady, wire.Request, `{"mode":"limited","limit":42}`))
	if err != nil || r != (Ready{Mode: ModeLimited, Limit: 42}) {
		t.Errorf("ready = %+v, %v", r, err)
	}

	a, err := DecodeAlloc(msg(TopicAlloc, wire.Request, `{
     "id": 1552593348, "priority": 53444, "userid": 5588,
     "jobspec": {"resources": [{"type": "slot", "count": 1, "with": [{"type": "core", "count": 1}], "label": "task"}],
       "tasks": [{"command": ["/bin//true"], "slot": "task", "count": {"per_slot": 1}}],
       "attributes": {"system": {"duration": 0, "cwd": "/home/user/project"}}, "version": 1}}`))
	if err != nil || a.ID != 1552593348 || a.Priority != 53444 || a.UserID != 5588 || !strings.Contains(string(a.Jobspec), `"/bin//true"`) {
		t.Errorf("alloc = %+v, %v", a, err)
	}

	examples := []struct {
		payload string
		want    AllocResponse
	}{
		{`{"id": 1552593348, "type": 0, "annotations": {"sched": {"resource_summary":"rank[0-1]/core0"}}}`,
			AllocResponse{ID: 1552593348, Type: Success, Annotations: json.RawMessage(`{"sched": {"resource_summary":"rank[0-1]/core0"}}`)}},
		{`{"id": 1552593348, "type": 1, "annotations": {"sched": {"t_estimate": 593016000.0, "reason_pending": "requested GPUs are unavailable"}}}`,
			AllocResponse{ID: 1552593348, Type: Annotate, Annotations: json.RawMessage(`{"sched": {"t_estimate": 593016000.0, "reason_pending": "requested GPUs are unavailable"}}`)}},
		{`{"id": 1552593348, "type": 2, "note": "more nodes requested than configured"}`,
			AllocResponse{ID: 1552593348, Type: Deny, Note: "more nodes requested than configured"}},
		{`{"id": 1552593348, "type": 3}`, AllocResponse{ID: 1552593348, Type: Cancel}},
	}
	for _, ex := range examples {
		got, err := DecodeAllocResponse(msg(TopicAlloc, wire.Response, ex.payload))
		if err != nil {
			t.Errorf("%s: %v", ex.payload, err)
			continue
		}
		if diff := cmp.Diff(ex.want, got); diff != "" {
			t.Errorf("alloc response (-want +got):\n%s", diff)
		}
	}

	c, err := DecodeJobID(msg(TopicCancel, wire.Request, `{"id": 1552593348}`))
	if err != nil || c.ID != 1552593348 {
		t.Errorf("cancel = %+v, %v", c, err)
	}
	p, err := DecodePrioritize(msg(TopicPrioritize, wire.Request, `{"jobs":[[49056579584, 444],[57428410368, 298],[63988301824, 343205],[69675778048, 99]]}`))
	if err != nil || len(p.Jobs) != 4 || p.Jobs[2] != [2]uint64{63988301824, 343205} {
		t.Errorf("prioritize = %+v, %v", p, err)
	}
}

// The JSON keys our types send are exactly the RFC's (plus the documented R).
func TestKeys(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want []string
	}{
		{"hello", HelloJob{ID: 1}, []string{"id", "priority", "t_submit", "userid"}},
		{"hello with R", HelloJob{ID: 1, R: json.RawMessage(`{}`)}, []string{"R", "id", "priority", "t_submit", "userid"}},
		{"ready unlimited", Ready{Mode: ModeUnlimited}, []string{"mode"}},
		{"ready limited", Ready{Mode: ModeLimited, Limit: 8}, []string{"limit", "mode"}},
		{"ready response", ReadyResponse{}, []string{"count"}},
		{"alloc", Alloc{Jobspec: json.RawMessage(`{}`)}, []string{"id", "jobspec", "priority", "t_submit", "userid"}},
		{"cancel response", AllocResponse{Type: Cancel}, []string{"id", "type"}},
		{"deny", AllocResponse{Type: Deny, Note: "x"}, []string{"id", "note", "type"}},
		{"success", AllocResponse{Type: Success, R: json.RawMessage(`{}`), Annotations: json.RawMessage(`{}`)}, []string{"R", "annotations", "id", "type"}},
		{"free", JobID{ID: 3}, []string{"id"}},
		{"prioritize", Prioritize{Jobs: [][2]uint64{{1, 2}}}, []string{"jobs"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, keys(t, tc.v)); diff != "" {
			t.Errorf("%s keys (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestRejects(t *testing.T) {
	tests := []struct {
		name   string
		decode func(wire.Message) error
		m      wire.Message
		want   string
	}{
		{"hello without t_submit", func(m wire.Message) error { _, err := DecodeHelloJob(m); return err },
			msg(TopicHello, wire.Response, `{"id":1,"priority":1,"userid":1}`), `payload has no "t_submit"`},
		{"priority too big", func(m wire.Message) error { _, err := DecodeAlloc(m); return err },
			msg(TopicAlloc, wire.Request, `{"id":1,"priority":4294967296,"userid":1,"jobspec":{}}`), "priority 4294967296 is out of range"},
		{"limited without limit", func(m wire.Message) error { _, err := DecodeReady(m); return err },
			msg(TopicReady, wire.Request, `{"mode":"limited"}`), "limit must be 1-2147483647"},
		{"unlimited with limit", func(m wire.Message) error { _, err := DecodeReady(m); return err },
			msg(TopicReady, wire.Request, `{"mode":"unlimited","limit":3}`), "limit is only for limited mode"},
		{"unknown mode", func(m wire.Message) error { _, err := DecodeReady(m); return err },
			msg(TopicReady, wire.Request, `{"mode":"single"}`), `unknown mode "single"`},
		{"type 4", func(m wire.Message) error { _, err := DecodeAllocResponse(m); return err },
			msg(TopicAlloc, wire.Response, `{"id":1,"type":4}`), "response type 4 is not 0-3"},
		{"annotate without annotations", func(m wire.Message) error { _, err := DecodeAllocResponse(m); return err },
			msg(TopicAlloc, wire.Response, `{"id":1,"type":1}`), "annotations are required"},
		{"cancel with note", func(m wire.Message) error { _, err := DecodeAllocResponse(m); return err },
			msg(TopicAlloc, wire.Response, `{"id":1,"type":3,"note":"x"}`), "only the required keys are allowed in a CANCEL response"},
		{"annotations not an object", func(m wire.Message) error { _, err := DecodeAllocResponse(m); return err },
			msg(TopicAlloc, wire.Response, `{"id":1,"type":0,"annotations":[1]}`), "annotations must be an object"},
		{"error response", func(m wire.Message) error { _, err := DecodeAllocResponse(m); return err },
			wire.NewError(TopicAlloc, wire.ENOSYS, "no scheduler"), "sched.alloc: no scheduler"},
		{"free without id", func(m wire.Message) error { _, err := DecodeJobID(m); return err },
			msg(TopicFree, wire.Request, `{}`), `payload has no "id"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.decode(tc.m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestAcquire(t *testing.T) {
	// The decoded form, with idsets as strings so cmp can compare them.
	type decoded struct {
		Resources, Up, Down string
		Sessions            map[string]string
		Outside             *string
	}
	str := func(s string) *string { return &s }
	tests := []struct {
		name    string
		first   bool
		payload string
		want    decoded
		wantErr string
	}{
		{name: "first", first: true, payload: `{"resources":{"version":1},"up":"0-3"}`,
			want: decoded{Resources: `{"version":1}`, Up: "0-3"}},
		{name: "first without resources", first: true, payload: `{"up":"0-3"}`, wantErr: `payload has no "resources"`},
		{name: "first with sessions and outside", first: true,
			payload: `{"resources":{"version":1},"up":"0-5","sessions":{"r1":"1-2","r2":"3"},"outside":"4-5"}`,
			want:    decoded{Resources: `{"version":1}`, Up: "0-5", Sessions: map[string]string{"r1": "1-2", "r2": "3"}, Outside: str("4-5")}},
		{name: "down", payload: `{"down":"2"}`, want: decoded{Down: "2"}},
		{name: "empty update", payload: `{}`, wantErr: "an update carries up, down, resources, sessions or outside"},
		{name: "null keys are absent", payload: `{"sessions":null,"outside":null}`, wantErr: "an update carries up, down, resources, sessions or outside"},
		// fluxq's extension of RFC 28: spare nodes joining, and sessions.
		{name: "joining resources", payload: `{"resources":{"version":1}}`, want: decoded{Resources: `{"version":1}`}},
		{name: "sessions alone", payload: `{"sessions":{"r1":"0-1"}}`, want: decoded{Sessions: map[string]string{"r1": "0-1"}}},
		{name: "empty sessions clears", payload: `{"sessions":{}}`, want: decoded{Sessions: map[string]string{}}},
		{name: "empty outside", payload: `{"outside":""}`, want: decoded{Outside: str("")}},
		{name: "bad idset", payload: `{"sessions":{"r1":"x"}}`, wantErr: `error parsing range "x"`},
		{name: "sessions not an object", payload: `{"sessions":["r1"]}`, wantErr: "cannot unmarshal"},
		{name: "default is no allocation id", payload: `{"sessions":{"default":"1"}}`, wantErr: `sessions: "default" is not an allocation id`},
		{name: "empty allocation id", payload: `{"sessions":{"":"1"}}`, wantErr: `sessions: "" is not an allocation id`},
		{name: "overlapping reservations", payload: `{"sessions":{"r2":"3-5","r1":"0-3","r3":"5"}}`, wantErr: "sessions: ranks 3 are in both r1 and r2"},
		{name: "reserved and outside", payload: `{"sessions":{"r1":"0-3"},"outside":"3-4"}`, wantErr: "outside: ranks 3 are also reserved"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := DecodeAcquire(msg(TopicAcquire, wire.Response, tc.payload), tc.first)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := decoded{Resources: string(a.Resources)}
			if a.Up != nil {
				got.Up = *a.Up
			}
			if a.Down != nil {
				got.Down = *a.Down
			}
			if a.Sessions != nil {
				got.Sessions = map[string]string{}
				for id, ranks := range a.Sessions {
					got.Sessions[id] = ranks.String()
				}
			}
			if a.Outside != nil {
				got.Outside = str(a.Outside.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

// Absent keys stay absent on the wire, and an empty sessions map (clear
// all) is sent as {}, not dropped.
func TestAcquireKeys(t *testing.T) {
	up := "1"
	none := idset.Set{}
	tests := []struct {
		name string
		a    Acquire
		want []string
	}{
		{"up", Acquire{Up: &up}, []string{"up"}},
		{"clear sessions", Acquire{Sessions: map[string]idset.Set{}}, []string{"sessions"}},
		{"empty outside", Acquire{Outside: &none}, []string{"outside"}},
		{"all", Acquire{Resources: json.RawMessage(`{}`), Up: &up, Down: &up, Sessions: map[string]idset.Set{"r1": idset.Of(2)}, Outside: &none},
			[]string{"down", "outside", "resources", "sessions", "up"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, keys(t, tc.a)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
	b, err := json.Marshal(Acquire{Sessions: map[string]idset.Set{"r1": idset.MustParse("0-2,5")}, Outside: &none})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"sessions":{"r1":"0-2,5"},"outside":""}`; string(b) != want {
		t.Errorf("encoded %s, want %s", b, want)
	}
}
