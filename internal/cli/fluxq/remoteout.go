package fluxq

import (
	"bytes"
	"context"
	"io"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/shell"
)

// remoteOutput follows the output of a job whose tasks ran on other
// machines (JobInfo.OutputRemote), which each host's exec agent keeps
// there: fluxsched answers job-output from them. A multi-host job's
// output is merged line by line: each host's lines in their order, whole,
// in the order they are read, as flux job attach prints the lines of its
// ranks' shells as their eventlog entries come.
type remoteOutput struct {
	cl      client.Client
	id      fluid.ID
	out     io.Writer // stdout
	err     io.Writer // stderr
	at      map[streamKey]int64
	partial map[streamKey][]byte // the start of a line not ended yet
	hosts   []string
	// failed is why each host's stream could not be read last, told once
	// by note until it is read again.
	failed map[string]string
	note   func(msg string)
}

type streamKey struct{ host, stream string }

func newRemoteOutput(cl client.Client, id fluid.ID, out, err io.Writer, note func(string)) *remoteOutput {
	return &remoteOutput{cl: cl, id: id, out: out, err: err, at: map[streamKey]int64{},
		partial: map[streamKey][]byte{}, failed: map[string]string{}, note: note}
}

// pump writes what the hosts hold past what was written, until none holds
// more. It returns the first host's error of this round (a
// *hostOutputError, also told by note, once per outage), or nil.
func (o *remoteOutput) pump(ctx context.Context) error {
	for {
		p := api.OutputParams{ID: o.id}
		for k, off := range o.at {
			p.From = append(p.From, api.OutputCursor{Host: k.host, Stream: k.stream, Offset: off})
		}
		res, err := client.Call(ctx, o.cl, api.JobOutput, p, nil)
		if err != nil {
			return err
		}
		o.hosts = res.Hosts
		more := false
		var hostErr error
		for _, ch := range res.Chunks {
			if ch.Error != "" {
				if o.failed[ch.Host] != ch.Error && o.note != nil {
					o.note(ch.Error)
				}
				o.failed[ch.Host] = ch.Error
				if hostErr == nil {
					hostErr = &hostOutputError{ch.Error}
				}
				continue
			}
			k := streamKey{ch.Host, ch.Stream}
			if ch.Offset != o.at[k] {
				continue // not where this reader is: asked again next round
			}
			if err := o.write(k, ch.Data); err != nil {
				return err
			}
			o.at[k] += int64(len(ch.Data))
			more = more || ch.More
		}
		for h := range o.failed {
			if !failedIn(res.Chunks, h) {
				delete(o.failed, h)
			}
		}
		if !more {
			return hostErr
		}
	}
}

// hostOutputError is a host's stream that could not be read: its host
// unreachable, say. The message names the host.
type hostOutputError struct{ msg string }

func (e *hostOutputError) Error() string { return e.msg }

func failedIn(chunks []api.OutputChunk, host string) bool {
	for _, ch := range chunks {
		if ch.Host == host && ch.Error != "" {
			return true
		}
	}
	return false
}

// write writes the whole lines of data, keeping the start of a line not
// ended yet for the next chunk of the same stream.
func (o *remoteOutput) write(k streamKey, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	buf := append(o.partial[k], data...)
	i := bytes.LastIndexByte(buf, '\n')
	if i < 0 {
		o.partial[k] = buf
		return nil
	}
	o.partial[k] = append([]byte(nil), buf[i+1:]...)
	_, err := o.writer(k).Write(buf[:i+1])
	return err
}

// flush writes what is left of lines not ended: the job has ended, and
// nothing more will end them. Hosts in R's order, stdout before stderr.
func (o *remoteOutput) flush() error {
	for _, h := range o.hosts {
		for _, st := range []string{shell.StdoutFile, shell.StderrFile} {
			k := streamKey{h, st}
			if b := o.partial[k]; len(b) > 0 {
				delete(o.partial, k)
				if _, err := o.writer(k).Write(b); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (o *remoteOutput) writer(k streamKey) io.Writer {
	if k.stream == shell.StderrFile {
		return o.err
	}
	return o.out
}
