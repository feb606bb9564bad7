package diskspace

import (
	"testing"

	"golang.org/x/sys/unix"
)

// The reserve is 5% of the filesystem, at most 1G, in whole KiB; there is
// room while what is left after a write keeps it.
func TestRoom(t *testing.T) {
	const k = 1024
	for _, tc := range []struct {
		name          string
		blocks, avail uint64 // in 4 KiB blocks
		n             uint64
		ok            bool
		reserve       uint64
	}{
		{"roomy", 8192, 8000, 64 * k, true, 1638 * k},
		{"under the reserve", 8192, 409, 1, false, 1638 * k},
		{"write crosses it", 8192, 500, 400 * k, false, 1638 * k},
		{"write fits", 8192, 500, 300 * k, true, 1638 * k},
		{"full", 8192, 0, 1, false, 1638 * k},
		{"large fs: 1G at most", 1 << 30, 1 << 20, 64 * k, true, 1 << 30},
	} {
		st := unix.Statfs_t{Blocks: tc.blocks, Bavail: tc.avail, Bsize: 4096}
		ok, reserve := roomFor(&st, tc.n)
		if ok != tc.ok || reserve != tc.reserve {
			t.Errorf("%s: roomFor = %v, %d; want %v, %d", tc.name, ok, reserve, tc.ok, tc.reserve)
		}
	}
}

// A filesystem that cannot be asked does not stop a write.
func TestRoomUnknown(t *testing.T) {
	if ok, _ := RoomPath("/nonexistent/fluxq", 1); !ok {
		t.Error("RoomPath of a missing path = no room")
	}
	if ok, _ := RoomFD(-1, 1); !ok {
		t.Error("RoomFD(-1) = no room")
	}
}
