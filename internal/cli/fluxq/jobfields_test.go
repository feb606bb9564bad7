package fluxq

import "testing"

// The COMMAND column reads back in a shell as the job's argv.
func TestCommandLine(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"sleep", "10"}, "sleep 10"},
		{[]string{"./a.out", "--n=4", "x,y:z@h%/_-+."}, "./a.out --n=4 x,y:z@h%/_-+."},
		{[]string{"sh", "-c", `echo "hi"; exit 0`}, `sh -c 'echo "hi"; exit 0'`},
		{[]string{"echo", "it's"}, `echo 'it'"'"'s'`},
		{[]string{"echo", ""}, "echo ''"},
		{[]string{"a b", "$HOME", "*"}, `'a b' '$HOME' '*'`},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := commandLine(tt.argv); got != tt.want {
			t.Errorf("commandLine(%q) = %s, want %s", tt.argv, got, tt.want)
		}
	}
}
