package agent

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/wire"
)

// Running is an agent found in a state directory: its build, socket and
// pid (0 if its pid file is unreadable).
type Running struct {
	Build  string
	Socket string
	PID    int
}

// Find lists the agents whose sockets are in stateDir's agents' folder;
// some may be dead agents' leftovers, which refuse connections.
func Find(stateDir string) ([]Running, error) {
	dir := filepath.Join(stateDir, agentproto.Dir)
	socks, err := filepath.Glob(filepath.Join(dir, "*.sock"))
	if err != nil {
		return nil, err
	}
	var out []Running
	for _, s := range socks {
		build := strings.TrimSuffix(filepath.Base(s), ".sock")
		out = append(out, Running{Build: build, Socket: s, PID: ReadPID(PIDPath(dir, build))})
	}
	return out, nil
}

// ReadPID reads a pid file; 0 if it cannot.
func ReadPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0
	}
	return pid
}

// ErrNotRunning is returned by Call when no agent answers at the socket.
var ErrNotRunning = errors.New("no agent answers")

// Call sends one request to the agent at socket and returns its answer,
// within timeout. It is for requests that do not take the agent over
// (agent.stop, agent.cancel), not for fluxsched's connection.
func Call(socket, topic string, payload any, timeout time.Duration) (wire.Message, error) {
	c, err := net.DialTimeout("unix", socket, timeout)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ECONNREFUSED) {
			return wire.Message{}, ErrNotRunning
		}
		return wire.Message{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	lc := wire.NewLineConn(c, c, nil)
	req, err := wire.NewRequest(topic, payload)
	if err != nil {
		return wire.Message{}, err
	}
	if err := lc.Send(req); err != nil {
		// An agent that does not let the caller in may have answered
		// why and hung up before the request went: the answer is
		// still there to read.
		if m, rerr := lc.Recv(); rerr == nil && m.IsError() {
			return m, nil
		}
		return wire.Message{}, err
	}
	for {
		m, err := lc.Recv()
		if err == io.EOF {
			return wire.Message{}, fmt.Errorf("%s: the agent closed the connection", topic)
		}
		if err != nil {
			return wire.Message{}, err
		}
		// A connection the agent does not let in is answered with an
		// error of agent.cancel, whatever it was going to ask.
		if m.Type == wire.Response && (m.Topic == topic || m.IsError() && m.Topic == agentproto.TopicCancel) {
			return m, nil
		}
	}
}
