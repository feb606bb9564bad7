package state

import (
	"encoding/json"
	"fmt"
	"os/user"
	"strconv"
	"strings"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/store"
)

// QueueSet is the instance's queue configuration as the loop last saved
// it; an instance never started with [queues] has one anonymous queue.
func QueueSet(tx *store.Tx) (*queue.Set, error) {
	raw := tx.QueueConfig()
	if raw == nil {
		return queue.Anonymous(), nil
	}
	var s queue.Set
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("stored queue configuration: %w", err)
	}
	return &s, nil
}

// QueueStates returns every queue's state, the initial one for a queue
// with none saved.
func QueueStates(tx *store.Tx, set *queue.Set) (map[string]queue.State, error) {
	states := make(map[string]queue.State, len(set.Names()))
	for _, name := range set.Names() {
		st := queue.Initial(set.Named())
		if raw := tx.Queue(name); raw != nil {
			if err := json.Unmarshal(raw, &st); err != nil {
				return nil, fmt.Errorf("stored state of queue %q: %w", name, err)
			}
		}
		states[name] = st
	}
	return states, nil
}

// PutQueueState saves one queue's state.
func PutQueueState(tx *store.Tx, name string, st queue.State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return tx.PutQueue(name, b)
}

// StartQueues is what a starting loop does with the queues: it saves the
// configuration it runs with, so that the commands read the same one, and
// takes every queue back to its checkpointed state (a stop with
// --nocheckpoint does not outlive the loop). Queues that left the
// configuration keep their saved state, in case they come back.
func StartQueues(tx *store.Tx, set *queue.Set) (map[string]queue.State, error) {
	b, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	if err := tx.PutQueueConfig(b); err != nil {
		return nil, err
	}
	states, err := QueueStates(tx, set)
	if err != nil {
		return nil, err
	}
	for name, st := range states {
		st = st.Restart()
		states[name] = st
		if err := PutQueueState(tx, name, st); err != nil {
			return nil, err
		}
	}
	return states, nil
}

// QueueChange is one administrative command on queues.
type QueueChange = api.QueueChange

// ChangeQueues applies a change and returns the names it applied to, with
// the configuration and every queue's state after it.
func ChangeQueues(tx *store.Tx, c QueueChange) ([]string, *queue.Set, map[string]queue.State, error) {
	// A reason is printed after "disabled: " in one-line messages.
	if strings.ContainsAny(c.Reason, "\n\r") {
		return nil, nil, nil, fmt.Errorf("the reason must be one line")
	}
	set, err := QueueSet(tx)
	if err != nil {
		return nil, nil, nil, err
	}
	names, err := set.Lookup(c.Queue, c.All)
	if err != nil {
		return nil, nil, nil, err
	}
	states, err := QueueStates(tx, set)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, name := range names {
		st := states[name]
		if c.Enable != nil {
			st.Enable(*c.Enable, c.Reason)
		}
		if c.Start != nil {
			st.Start(*c.Start, c.Reason, c.NoCheckpoint)
		}
		states[name] = st
		if err := PutQueueState(tx, name, st); err != nil {
			return nil, nil, nil, err
		}
	}
	return names, set, states, nil
}

// submitter resolves the user the queue policy judges: the name and groups
// are looked up only when some queue restricts access.
func submitter(set *queue.Set, uid uint32, owner bool, cache map[uint32]queue.User) queue.User {
	u := queue.User{UID: uid, Owner: owner}
	if owner || !set.RestrictsAccess() {
		return u
	}
	if c, ok := cache[uid]; ok {
		return c
	}
	if usr, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		u.Name = usr.Username
		if gids, err := usr.GroupIds(); err == nil {
			for _, gid := range gids {
				if g, err := user.LookupGroupId(gid); err == nil {
					u.Groups = append(u.Groups, g.Name)
				}
			}
		}
	}
	cache[uid] = u
	return u
}
