package launcher

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/fluxq/fluxq/internal/peercred"
	"github.com/fluxq/fluxq/internal/wire"
)

// Attach is the far end of a launcher for other machines (`fluxsched
// agent --attach`, run by ssh or a command's template on the host): it
// reaches the agent of opts.Build in opts.StateDir on this machine,
// starting it as the local launcher does (in a session of its own, so
// that it outlives the connection) when none answers, and bridges in and
// out to its socket until either side ends.
//
// It carries only the agent protocol: each line from in must be an
// agentproto request (wire's JSON, a topic of agent.*, at most
// wire.MaxLine bytes), else the bridge ends with why. What the agent lets
// the caller do is the agent's to decide, on the bridge's uid (the user
// ssh logged in as), with its socket's caps: the bridge is one more
// connection to it, counted as any other.
func Attach(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	path := SocketPath(opts.StateDir, opts.Build)
	c, err := dial(ctx, path)
	if err != nil {
		// None answers: started as fluxsched would start it here.
		l, err := New(Local, opts)
		if err != nil {
			return err
		}
		agents, err := l.Connect(ctx)
		if err != nil {
			return err
		}
		for _, a := range agents {
			a.Conn.Close()
		}
		if c, err = dial(ctx, path); err != nil {
			return fmt.Errorf("exec agent %s: %w", path, err)
		}
	}
	defer c.Close()
	if err := ownAgent(c, path); err != nil {
		return err
	}
	fromAgent := make(chan error, 1)
	go func() {
		_, err := io.Copy(out, c)
		fromAgent <- err
	}()
	toAgent := make(chan error, 1)
	go func() { toAgent <- forward(in, c) }()
	select {
	case err := <-fromAgent:
		// The agent hung up: it exited, or another hello took it over.
		return err
	case err := <-toAgent:
		if err != nil {
			return err
		}
		// The far side is done sending: the agent answers what it was
		// sent, then closes.
		c.CloseWrite()
		return <-fromAgent
	case <-ctx.Done():
		return ctx.Err()
	}
}

// forward copies in's lines to c, each checked to be an agentproto
// request; nil at the end of in. The lines already read are written to c
// together, in one write, once no whole line is left buffered (the next
// read could wait): a burst of starts from fluxsched wakes the agent once,
// not once a line. The lines before a bad one are written before forward
// returns why.
func forward(in io.Reader, c *net.UnixConn) error {
	r := bufio.NewReaderSize(in, 64<<10)
	var batch []byte
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := c.Write(batch)
		batch = batch[:0]
		if err != nil {
			return fmt.Errorf("the bridge to the exec agent: %w", err)
		}
		return nil
	}
	for n := 1; ; n++ {
		line, err := readLine(r)
		if err == io.EOF {
			return flush()
		}
		if err != nil {
			if ferr := flush(); ferr != nil {
				return ferr
			}
			return fmt.Errorf("the bridge to the exec agent: line %d: %w", n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if err := CheckRequest(line); err != nil {
				if ferr := flush(); ferr != nil {
					return ferr
				}
				return fmt.Errorf("the bridge to the exec agent carries only its protocol: line %d: %w", n, err)
			}
			batch = append(batch, line...)
		}
		if !wholeLineBuffered(r) || len(batch) >= batchMax {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// batchMax bounds what forward holds before it writes.
const batchMax = 256 << 10

// wholeLineBuffered reports whether r holds a whole line already read, so
// that the next readLine returns without reading.
func wholeLineBuffered(r *bufio.Reader) bool {
	b, _ := r.Peek(r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// readLine reads one line, its newline included (one is added to a last
// line without it), of at most wire.MaxLine bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > wire.MaxLine {
			return nil, fmt.Errorf("message longer than %d bytes", wire.MaxLine)
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(line) > 0:
			return append(line, '\n'), nil
		default:
			return nil, err
		}
	}
}

// topicPrefix begins every agentproto topic.
const topicPrefix = "agent."

// CheckRequest says whether line is an agentproto request, as the bridge
// lets one through.
func CheckRequest(line []byte) error {
	var m wire.Message
	if err := json.Unmarshal(line, &m); err != nil {
		return errors.New("not a JSON message")
	}
	if err := m.Validate(); err != nil {
		return err
	}
	if m.Type != wire.Request || !strings.HasPrefix(m.Topic, topicPrefix) {
		return fmt.Errorf("%s %q is not a request of the exec agent's", m.Type, m.Topic)
	}
	return nil
}

// ownAgent refuses a socket that is not served by the bridge's own user or
// root. A remote state directory may be under a shared /tmp (fluxres
// discover's default inside Slurm), where another user could have made
// the folder first and listen in the agent's place: the bridge would hand
// that user every job's jobspec and take its word for their ends.
func ownAgent(c *net.UnixConn, path string) error {
	cred, err := peercred.Of(c)
	if err != nil {
		return fmt.Errorf("exec agent %s: who serves it: %w", path, err)
	}
	if uid := uint32(os.Getuid()); cred.Uid != uid && cred.Uid != 0 {
		return fmt.Errorf("exec agent %s is served by uid %d, not by this user (%d) or root: refused", path, cred.Uid, uid)
	}
	return nil
}
