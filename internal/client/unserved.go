package client

// Unserved reports whether the last call cl made was answered by the
// store itself because no fluxsched loop served the socket: the store
// is held by a running loop, so an answer from it means none ran then.
// The commands use it to say so once ("fluxsched is not running"); a
// Client that is not this package's (a test's fake) is never unserved.
func Unserved(cl Client) bool {
	c, ok := cl.(*conn)
	if !ok {
		return false
	}
	a, ok := c.t.(*auto)
	return ok && a.unserved.Load()
}
