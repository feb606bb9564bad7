package output

import (
	"bufio"
	"fmt"
	"io"

	gojson "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/inorder"
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
	err := inorder.Each(n, func(i int) ([]byte, error) {
		part := items[min(len(items), i*jsonChunk):min(len(items), (i+1)*jsonChunk)]
		return gojson.MarshalWithOption(chunk(part), gojson.DisableHTMLEscape())
	}, func(i int, b []byte) error {
		if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
			return fmt.Errorf("a chunk of %q is not a list", key)
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
		return nil
	})
	if err != nil {
		return fmt.Errorf("encoding JSON: %w", err)
	}
	bw.WriteString("}\n")
	return bw.Flush()
}
