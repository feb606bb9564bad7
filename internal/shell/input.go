package shell

import (
	"fmt"
	"path/filepath"
)

// msgInput is flux-shell's message for an input file it cannot open.
const msgInput = "error opening input file '%s': %v"

// InputPath is the file the tasks read their stdin from, as flux-shell's
// input plugin reads its options: input.stdin.path when input.stdin.type
// is "file", relative to cwd (the tasks' working directory) when it is
// not absolute. "" is none: the tasks' stdin is /dev/null.
func InputPath(opts map[string]any, cwd string) string {
	in, _ := opts["input"].(map[string]any)
	s, _ := in["stdin"].(map[string]any)
	if t, _ := s["type"].(string); t != "file" {
		return ""
	}
	p, _ := s["path"].(string)
	if p != "" && !filepath.IsAbs(p) && cwd != "" {
		p = filepath.Join(cwd, p)
	}
	return p
}

// InputOptions are the shell options of stdin read from path, as flux
// run --input writes them in a jobspec.
func InputOptions(path string) map[string]any {
	return map[string]any{"stdin": map[string]any{"type": "file", "path": path}}
}

// InputOpenError is the fatal error of an input file that cannot be
// opened.
func InputOpenError(path string, err error) error {
	return fmt.Errorf(msgInput, path, strerror(err))
}
