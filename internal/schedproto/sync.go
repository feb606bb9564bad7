package schedproto

import (
	"github.com/fluxq/fluxq/internal/wire"
)

// TopicSync is fluxq's one request beyond RFC 27, and only between the
// job manager and the scheduler of the same process (sched.Run over a
// wire.Pipe): never on a line to a scheduler command. The scheduler
// answers it with a response of the same topic and sequence number once
// it has handled every message sent before it and finished the pass they
// started. The job manager thereby takes the scheduler's answers (a free,
// the allocations it made possible) into the turn that caused them, and
// one commit covers both: see internal/loop, exchange.
const TopicSync = "sched.sync"

// Sync is the payload of a sync request and of its answer.
type Sync struct {
	Seq uint64 `json:"seq"`
}

// NewSync returns the sync request numbered seq.
func NewSync(seq uint64) (wire.Message, error) {
	return wire.NewRequest(TopicSync, Sync{Seq: seq})
}

// SyncAnswer returns the answer to a sync request.
func SyncAnswer(req wire.Message) wire.Message {
	return wire.Message{Topic: TopicSync, Type: wire.Response, Payload: req.Payload}
}

// IsSyncAnswer reports whether m answers the sync request numbered seq.
func IsSyncAnswer(m wire.Message, seq uint64) bool {
	if m.Type != wire.Response || m.Topic != TopicSync || m.IsError() {
		return false
	}
	var s Sync
	return wire.Decode(m, &s) == nil && s.Seq == seq
}
