// Package inorder runs numbered pieces of work on every core and hands
// their results on in their order, each as soon as it and those before it
// are done: a long listing encoded in chunks is written or sent chunk by
// chunk while the later ones are still being encoded.
package inorder

import "runtime"

// Each calls work(i) for every i in [0, n), on up to GOMAXPROCS
// goroutines, and emit(i, r) with each result in the order of i. It
// returns the first error, of work(i) or of emit, in that order; then no
// more is emitted, and the workers stop before their next piece (one
// under way is finished and dropped). work must be safe to call
// concurrently; emit is called from the caller's goroutine.
func Each[R any](n int, work func(i int) (R, error), emit func(i int, r R) error) error {
	if n <= 0 {
		return nil
	}
	type result struct {
		r   R
		err error
	}
	done := make([]chan result, n)
	for i := range done {
		done[i] = make(chan result, 1)
	}
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	stop := make(chan struct{})
	defer close(stop)
	for range min(runtime.GOMAXPROCS(0), n) {
		go func() {
			for i := range next {
				select {
				case <-stop:
					return
				default:
				}
				r, err := work(i)
				done[i] <- result{r, err}
			}
		}()
	}
	for i := range n {
		res := <-done[i]
		done[i] = nil
		if res.err != nil {
			return res.err
		}
		if err := emit(i, res.r); err != nil {
			return err
		}
	}
	return nil
}
