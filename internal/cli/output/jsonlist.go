package output

import (
	"bufio"
	"fmt"
	"io"
	"runtime"

	gojson "github.com/goccy/go-json"
)

// jsonChunk is how many items of a --json list one goroutine encodes.
const jsonChunk = 4096

// WriteJSONList writes the document {"KEY":[...]} whose list is the
// items, as WriteJSON writes it, byte for byte: the list is encoded in
// chunks on every core (chunk gives the JSON value of a run of items, a
// slice; each item stands alone) and written in order as each is ready.
// A --json listing of 100,000 jobs spent a third of its CPU encoding
// them on one core. key is written as it is: a plain name.
func WriteJSONList[T any](w io.Writer, key string, items []T, chunk func([]T) any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(`{"` + key + `":`)
	n := max(1, (len(items)+jsonChunk-1)/jsonChunk)
	out := make([][]byte, n)
	errs := make([]error, n)
	ready := make([]chan struct{}, n)
	for i := range ready {
		ready[i] = make(chan struct{})
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
				part := items[min(len(items), i*jsonChunk):min(len(items), (i+1)*jsonChunk)]
				out[i], errs[i] = gojson.MarshalWithOption(chunk(part), gojson.DisableHTMLEscape())
				close(ready[i])
			}
		}()
	}
	for i := range n {
		<-ready[i]
		if errs[i] != nil {
			return fmt.Errorf("encoding JSON: %w", errs[i])
		}
		b := out[i]
		out[i] = nil
		if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
			return fmt.Errorf("encoding JSON: a chunk of %q is not a list", key)
		}
		switch {
		case n == 1:
			bw.Write(b)
		case i == 0:
			bw.Write(b[:len(b)-1])
		case i == n-1:
			bw.WriteByte(',')
			bw.Write(b[1:])
		default:
			bw.WriteByte(',')
			bw.Write(b[1 : len(b)-1])
		}
	}
	bw.WriteString("}\n")
	return bw.Flush()
}
