package nvml

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fake is an NVML with scripted answers; handles are index+100 so a mixed
// up handle and index shows.
type fake struct {
	initRet   Return
	count     uint32
	countRet  Return
	names     []string
	uuids     []string
	mem       []uint64 // 0: NOT_SUPPORTED
	bus       []string // "": NOT_SUPPORTED
	failOn    string   // method that answers failRet
	failRet   Return
	noErrText bool

	inits, shutdowns int
}

func (f *fake) fail(m string) bool { return f.failOn == m }

func (f *fake) Init() Return {
	f.inits++
	return f.initRet
}

func (f *fake) Shutdown() Return {
	f.shutdowns++
	return Success
}

func (f *fake) DeviceCount() (uint32, Return) { return f.count, f.countRet }

func (f *fake) DeviceHandle(i uint32) (uintptr, Return) {
	if f.fail("handle") && i == 1 {
		return 0, f.failRet
	}
	return uintptr(i) + 100, Success
}

func (f *fake) DeviceName(h uintptr) (string, Return) {
	if f.fail("name") {
		return "", f.failRet
	}
	return f.names[h-100], Success
}

func (f *fake) DeviceUUID(h uintptr) (string, Return) {
	if f.fail("uuid") {
		return "", f.failRet
	}
	return f.uuids[h-100], Success
}

func (f *fake) DeviceMemoryTotal(h uintptr) (uint64, Return) {
	if f.mem == nil || f.mem[h-100] == 0 {
		return 0, ErrNotSupported
	}
	return f.mem[h-100], Success
}

func (f *fake) DevicePCIBusID(h uintptr) (string, Return) {
	if f.bus == nil || f.bus[h-100] == "" {
		return "", ErrNotSupported
	}
	return f.bus[h-100], Success
}

func (f *fake) ErrorString(r Return) string {
	if f.noErrText {
		return ""
	}
	return map[Return]string{9: "Driver Not Loaded", 15: "GPU is lost", 4: "Insufficient Permissions"}[r]
}

func twoGPUs() *fake {
	return &fake{
		count: 2,
		names: []string{"NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"},
		uuids: []string{"GPU-aaaa", "GPU-bbbb"},
		mem:   []uint64{40 << 30, 0},
		bus:   []string{"00000000:3B:00.0", ""},
	}
}

func TestEnumerate(t *testing.T) {
	f := twoGPUs()
	got, err := enumerate(f)
	if err != nil {
		t.Fatal(err)
	}
	want := []Device{
		{Index: 0, Name: "NVIDIA A100-SXM4-40GB", UUID: "GPU-aaaa", BusID: "00000000:3B:00.0", MemoryBytes: 40 << 30},
		{Index: 1, Name: "NVIDIA A100-SXM4-40GB", UUID: "GPU-bbbb"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("devices (-want +got):\n%s", diff)
	}
	if f.inits != 1 || f.shutdowns != 1 {
		t.Errorf("init %d, shutdown %d times; want once each", f.inits, f.shutdowns)
	}
}

func TestEnumerateNoGPUs(t *testing.T) {
	got, err := enumerate(&fake{})
	if err != nil || len(got) != 0 {
		t.Errorf("enumerate = %v, %v; want no devices, no error", got, err)
	}
}

func TestEnumerateErrors(t *testing.T) {
	tests := []struct {
		name       string
		f          *fake
		notPresent bool // errors.Is ErrNotPresent: the caller falls back silently
		want       string
		shutdowns  int
	}{
		{"driver not loaded", &fake{initRet: ErrDriverMissing}, true, "nvmlInit_v2: Driver Not Loaded", 0},
		{"library pieces missing", &fake{initRet: ErrLibMissing, noErrText: true}, true, "nvmlInit_v2: error 12", 0},
		{"no permission", &fake{initRet: 4}, false, "nvml: nvmlInit_v2: Insufficient Permissions", 0},
		{"count fails", &fake{countRet: 15}, false, "nvmlDeviceGetCount_v2: GPU is lost", 1},
		{"handle fails", func() *fake { f := twoGPUs(); f.failOn, f.failRet = "handle", 15; return f }(), false, "gpu 1: nvml: nvmlDeviceGetHandleByIndex_v2: GPU is lost", 1},
		{"name fails", func() *fake { f := twoGPUs(); f.failOn, f.failRet = "name", 15; return f }(), false, "gpu 0: nvml: nvmlDeviceGetName: GPU is lost", 1},
		{"uuid fails", func() *fake { f := twoGPUs(); f.failOn, f.failRet = "uuid", 15; return f }(), false, "gpu 0: nvml: nvmlDeviceGetUUID: GPU is lost", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := enumerate(tc.f)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if got := errors.Is(err, ErrNotPresent); got != tc.notPresent {
				t.Errorf("errors.Is(err, ErrNotPresent) = %v, want %v", got, tc.notPresent)
			}
			var ne *Error
			if !errors.As(err, &ne) {
				t.Errorf("err %v is not an *Error", err)
			}
			// nvmlShutdown balances a successful nvmlInit_v2 only.
			if tc.f.shutdowns != tc.shutdowns {
				t.Errorf("shutdown called %d times, want %d", tc.f.shutdowns, tc.shutdowns)
			}
		})
	}
}

func TestCString(t *testing.T) {
	for in, want := range map[string]string{"abc\x00junk": "abc", "\x00": "", "no nul": "no nul", "": ""} {
		if got := cString([]byte(in)); got != want {
			t.Errorf("cString(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDevicesOnThisMachine runs the real loader: on a machine without the
// driver (CI, this project's test machines) it must say "not present",
// cleanly, and on one with the driver it must list without error.
func TestDevicesOnThisMachine(t *testing.T) {
	devs, err := Devices()
	if err == nil {
		t.Logf("NVML present: %d GPUs", len(devs))
		return
	}
	if !errors.Is(err, ErrNotPresent) {
		t.Fatalf("Devices() = %v, want an error wrapping ErrNotPresent", err)
	}
	if _, err2 := Devices(); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second Devices() = %v, want the same answer %v", err2, err)
	}
}
