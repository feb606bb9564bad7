package agent

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/shell"
	"github.com/fluxq/fluxq/internal/wire"
)

// serveOutput answers agent.output: part of a job's output file in this
// machine's job folder, for fluxq attach and output of a job that ran on
// another host than fluxsched's (docs/architecture.md, "Other machines").
// It reads the file as it stands, with one pread of at most the bound, so
// that a start queued behind it on the connection waits for no more.
func (a *Agent) serveOutput(cn *conn, m wire.Message) {
	req, err := agentproto.DecodeOutputRequest(m)
	if err != nil {
		cn.send(answerLine(m, wire.NewError(m.Topic, wire.EPROTO, err.Error())))
		return
	}
	out, errnum, msg := a.output(cn.uid, req)
	if errnum != 0 {
		cn.send(answerLine(m, wire.NewError(m.Topic, errnum, msg)))
		return
	}
	resp, err := wire.NewResponse(m.Topic, out)
	if err != nil {
		return // our own type always encodes
	}
	cn.send(answerLine(m, resp))
}

// output reads what req asks for a caller of uid. The agent's own uid
// (fluxsched's exec service) may read any job's, as the job's user
// req.UserID; any other uid only its own jobs', and a smaller part at a
// time. The file is opened as shell.OpenOutput opens it for a reader that
// may be root, so a guest's link or FIFO in its folder is never followed.
func (a *Agent) output(uid uint32, req agentproto.OutputRequest) (agentproto.Output, int, string) {
	if uid != a.uid {
		a.mu.Lock()
		j := a.jobs[req.ID]
		a.mu.Unlock()
		if req.UserID != uid || (j != nil && j.userid != uid) {
			return agentproto.Output{}, errPerm, "permission denied: job " + req.ID.String() + " is not yours"
		}
		req.Max = min(req.Max, agentproto.MaxGuestOutputRead)
	}
	f, err := shell.OpenOutput(jobDir(a.jobsDir, req.ID), req.Stream, req.UserID)
	if errors.Is(err, fs.ErrNotExist) {
		return agentproto.Output{Data: []byte{}}, 0, "" // nothing written yet
	}
	if err != nil {
		return agentproto.Output{}, errPerm, err.Error()
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return agentproto.Output{}, wire.EPROTO, err.Error()
	}
	out := agentproto.Output{Size: fi.Size(), Data: []byte{}}
	if n := min(int64(req.Max), fi.Size()-req.Offset); n > 0 {
		buf := make([]byte, n)
		k, err := f.ReadAt(buf, req.Offset)
		if err != nil && err != io.EOF {
			return agentproto.Output{}, wire.EPROTO, err.Error()
		}
		out.Data = buf[:k]
	}
	return out, 0, ""
}

// jobDir is a job's folder under jobsDir, named by its id in decimal
// (internal/runner's layout).
func jobDir(jobsDir string, id fluid.ID) string {
	return filepath.Join(jobsDir, strconv.FormatUint(uint64(id), 10))
}

// answerLine encodes resp as the answer to req: with its matchtag.
func answerLine(req, resp wire.Message) []byte { return encodeLine(resp.Answering(req)) }
