package agent

import (
	"context"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/agentproto"
)

// An agent exits once it has held no job and had no fluxsched connected
// for its idle timeout ([exec] agent-idle-timeout), the one its last
// fluxsched's hello said, else its own; never while a job is held or a
// fluxsched is connected.
func TestIdleTimeout(t *testing.T) {
	defer func(d time.Duration) { checkInterval = d }(checkInterval)
	checkInterval = 20 * time.Millisecond
	const short = 100 * time.Millisecond
	for _, tc := range []struct {
		name  string
		own   time.Duration // Options.IdleTimeout
		hello float64       // the hello's idle_timeout; no hello if 0
		job   bool          // a job is started, and runs on
		stay  bool          // the fluxsched stays connected
		exits bool
	}{
		{name: "never connected: its own timeout", own: short, exits: true},
		{name: "fluxsched gone: the hello's timeout", own: -1, hello: short.Seconds(), exits: true},
		{name: "the hello says never", own: short, hello: -1},
		{name: "a hello that says nothing keeps its own", own: short, hello: 0, exits: true},
		{name: "fluxsched connected", own: short, hello: short.Seconds(), stay: true},
		{name: "a job held, fluxsched gone", own: short, hello: short.Seconds(), job: true},
		{name: "own timeout never", own: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			useScripted(t)
			state := stateDir(t)
			a, err := New(Options{StateDir: state, Build: "b1", Log: quietLog(), IdleTimeout: tc.own})
			if err != nil {
				t.Fatal(err)
			}
			ran := make(chan error, 1)
			go func() { ran <- a.Run(context.Background()) }()
			t.Cleanup(func() {
				a.Close()
				<-ran
			})
			if tc.hello != 0 || tc.job || tc.stay {
				p := dial(t, state, "b1")
				p.call(agentproto.TopicHello, agentproto.HelloRequest{Build: "b1", IdleTimeout: tc.hello})
				if tc.job {
					p.start(1, false, makeJobspec(t, "sleep", "9"), makeR(t))
					p.wait("start", 5*time.Second, func() bool { return len(p.streamLocked(1)) == 1 })
				}
				if !tc.stay {
					p.lc.Close()
				}
			}
			// Long enough for a short timeout to pass many times over.
			select {
			case err := <-ran:
				ran <- err // for the cleanup
				if !tc.exits {
					t.Fatalf("agent exited (%v), want it running", err)
				}
				if err != nil {
					t.Fatalf("agent exited with %v", err)
				}
			case <-time.After(20 * short):
				if tc.exits {
					t.Fatalf("agent still running after %s, want it gone after %s idle", 20*short, short)
				}
			}
		})
	}
}
