package agentproto

import (
	"fmt"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/wire"
)

// TopicOutput reads part of a job's output file in the agent's own job
// folder (STATE_DIR/jobs/ID/stdout or stderr on the agent's machine), for
// `fluxq attach`/`output` of a job that ran on another host: a request,
// payload OutputRequest, answered once with Output (or an error), with
// the request's matchtag, since several may be in flight on fluxsched's
// connection.
const TopicOutput = "agent.output"

// Bounds of an agent.output answer's data: what one request reads at
// most (MaxOutputRead, also the default), and what a guest's may (its
// answers queued on the agent beyond 64 KiB close its connection).
const (
	MaxOutputRead      = 1 << 20
	MaxGuestOutputRead = 16 << 10
)

// The streams of a job's output, named as its job folder's files are
// (shell.StdoutFile and StderrFile).
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
)

// OutputRequest is the payload of agent.output.
type OutputRequest struct {
	ID fluid.ID `json:"id"`
	// UserID is the job's user, whose the job folder is: a file of it
	// that user does not own is not read (shell.OpenOutput). A guest
	// asking for itself must name its own uid.
	UserID uint32 `json:"userid"`
	Stream string `json:"stream"`
	// Offset is where in the file to read from; Max how much at most
	// (0: MaxOutputRead).
	Offset int64 `json:"offset"`
	Max    int   `json:"max,omitempty"`
}

// Output answers agent.output.
type Output struct {
	// Data are the bytes from the request's Offset on, at most its Max.
	Data []byte `json:"data"`
	// Size is the file's size when it was read; 0 with no file yet.
	Size int64 `json:"size"`
}

// DecodeOutputRequest reads an agent.output request, within its bounds:
// a stream of the job folder's, an offset not negative, a read of at most
// MaxOutputRead (0 is that).
func DecodeOutputRequest(m wire.Message) (OutputRequest, error) {
	var r OutputRequest
	if err := wire.Decode(m, &r, "id", "userid", "stream", "offset"); err != nil {
		return OutputRequest{}, err
	}
	switch {
	case r.Stream != StreamStdout && r.Stream != StreamStderr:
		return OutputRequest{}, fmt.Errorf("%s: stream %q is neither %s nor %s", TopicOutput, r.Stream, StreamStdout, StreamStderr)
	case r.Offset < 0:
		return OutputRequest{}, fmt.Errorf("%s: offset %d is negative", TopicOutput, r.Offset)
	case r.Max < 0 || r.Max > MaxOutputRead:
		return OutputRequest{}, fmt.Errorf("%s: max %d is not within 0-%d", TopicOutput, r.Max, MaxOutputRead)
	}
	if r.Max == 0 {
		r.Max = MaxOutputRead
	}
	return r, nil
}
