package job

import "testing"

// TestReturnCode holds ReturnCode to the values flux jobs prints for each
// way a job ends (flux-core t2800-jobs-cmd.t: 143 for a job canceled while
// it ran, 142 for a timeout, -128 for one canceled before it ran).
func TestReturnCode(t *testing.T) {
	ws := func(w int) *int { return &w }
	tests := []struct {
		name   string
		ws     *int
		result Result
		want   int
		wantOK bool
	}{
		{"completed", ws(0), Completed, 0, true},
		{"failed with exit code 3", ws(WaitStatusExited(3)), Failed, 3, true},
		{"command not found", ws(WaitStatusExited(127)), Failed, 127, true},
		{"exit 255", ws(WaitStatusExited(255)), Failed, 255, true},
		{"signaled by SIGINT", ws(WaitStatusSignaled(2)), Failed, 130, true},
		{"signaled by SIGKILL", ws(WaitStatusSignaled(9)), Failed, 137, true},
		{"canceled while running (SIGTERM)", ws(WaitStatusSignaled(15)), Canceled, 143, true},
		{"timed out while running (SIGALRM)", ws(WaitStatusSignaled(14)), Timeout, 142, true},
		{"timed out, SIGALRM ignored, SIGKILL after the grace", ws(WaitStatusSignaled(9)), Timeout, 137, true},
		{"canceled before it ran", nil, Canceled, -128, true},
		{"exception before it started", nil, Failed, 1, true},
		{"timed out before it started", nil, Timeout, 0, false},
		{"active", nil, 0, 0, false},
		{"stopped status is not a signal", ws(0x7f | WaitStatusExited(5)), Failed, 5, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ReturnCode(tc.ws, tc.result)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("ReturnCode = %d, %v; want %d, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
