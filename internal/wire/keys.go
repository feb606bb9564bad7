package wire

import (
	"bytes"
	json "github.com/goccy/go-json"
)

// isObject reports whether b, leading spaces aside, starts a JSON object.
func isObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// IsObject reports whether b is one JSON object, as decoding it into a map
// and finding it non-nil would, without building the map: the protocols
// check so that a response's data or annotations are objects.
func IsObject(b []byte) bool { return isObject(b) && json.Valid(b) }

// hasKey reports whether the JSON object b has key at its top level. b
// must be valid JSON (json.Unmarshal took it), which lets the walk skip
// values by their brackets and quotes alone.
func hasKey(b []byte, key string) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return false // "}": the object ended
		}
		end := skipString(b, i)
		if k := b[i+1 : end-1]; plain(k) {
			if string(k) == key {
				return true
			}
		} else {
			var s string
			if json.Unmarshal(b[i:end], &s) == nil && s == key {
				return true
			}
		}
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // the colon
		i = skipSpace(b, skipValue(b, i))
		if i >= len(b) || b[i] != ',' {
			return false
		}
		i++
	}
}

// plain reports whether a key's bytes are its text: no escapes, and
// ASCII (json.Unmarshal replaces invalid UTF-8).
func plain(k []byte) bool {
	for _, c := range k {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at i.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index just past the value that starts at i.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	// A number, true, false or null: up to what ends it.
	for i < len(b) && bytes.IndexByte([]byte(", \t\r\n}]"), b[i]) < 0 {
		i++
	}
	return i
}
