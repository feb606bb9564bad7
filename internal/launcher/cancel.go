package launcher

import (
	"context"
	"errors"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/wire"
)

// Cancel asks every agent of the state directory to stop the given jobs'
// processes now (agent.cancel), as `fluxq cancel` does while no fluxsched
// runs to pass its exception on. The job's end is reported to the next
// fluxsched as usual. Agents that do not hold a job refuse it, which is
// not an error; the first agent that cannot be asked at all is.
func Cancel(ctx context.Context, stateDir string, ids []fluid.ID) error {
	socks, err := Sockets(stateDir)
	if err != nil {
		return err
	}
	var errs []error
	for _, path := range socks {
		c, err := dial(ctx, path)
		if err != nil {
			continue // a dead agent's socket
		}
		conn := wire.NewLineConn(c, c, c.Close)
		for _, id := range ids {
			req, err := wire.NewRequest(agentproto.TopicCancel, agentproto.Cancel{ID: id})
			if err != nil {
				errs = append(errs, err)
				break
			}
			if _, err := roundTrip(c, conn, req); err != nil {
				var werr *wire.Error
				if errors.As(err, &werr) {
					continue // refused: not its job
				}
				errs = append(errs, err)
				break
			}
		}
		conn.Close()
	}
	return errors.Join(errs...)
}
