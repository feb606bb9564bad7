//go:build linux && (amd64 || arm64)

package nvml

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

func TestOpenMissingLibrary(t *testing.T) {
	lib, err := open("libfluxq-no-such-library.so.1")
	if lib != nil || !errors.Is(err, ErrNotPresent) {
		t.Fatalf("open = %v, %v; want nil and ErrNotPresent", lib, err)
	}
}

// A library that loads but is not NVML must be "not present" too, not a
// panic: purego.RegisterLibFunc would panic on the first missing symbol.
func TestOpenLibraryWithoutNVML(t *testing.T) {
	if _, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW); err != nil {
		t.Skipf("no glibc to stand in for a foreign library: %v", err)
	}
	lib, err := open("libc.so.6")
	if lib != nil || !errors.Is(err, ErrNotPresent) || !strings.Contains(err.Error(), "has no nvmlInit_v2") {
		t.Fatalf("open(libc) = %v, %v; want nil and ErrNotPresent naming nvmlInit_v2", lib, err)
	}
}

// TestBind calls through the same bind the NVML functions use, on libc
// functions with NVML's argument shapes (int return, pointer and uint32
// arguments), so a broken binding shows on a machine without a GPU.
func TestBind(t *testing.T) {
	h, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW)
	if err != nil {
		t.Skipf("no glibc: %v", err)
	}
	var abs func(Return) Return
	if !bind(h, "abs", &abs) {
		t.Fatal("bind(abs) = false")
	}
	if got := abs(-12); got != 12 {
		t.Errorf("abs(-12) = %d", got)
	}
	// strnlen(const char *, size_t) is nvmlDeviceGetName's shape: a Go
	// buffer passed as *byte with its length.
	var strnlen func(*byte, uint32) uint32
	if !bind(h, "strnlen", &strnlen) {
		t.Fatal("bind(strnlen) = false")
	}
	buf := []byte("GPU-1234\x00rest")
	if got := strnlen(&buf[0], uint32(len(buf))); got != 8 {
		t.Errorf("strnlen = %d, want 8", got)
	}
	var missing func() Return
	if bind(h, "nvmlInit_v2", &missing) || missing != nil {
		t.Error("bind of a missing symbol succeeded or set the function")
	}
}

// nvml.h lays nvmlPciInfo_t out in 68 bytes and nvmlMemory_t in 24; the
// Go structs passed by pointer must match or NVML writes past them.
func TestStructLayout(t *testing.T) {
	if s := unsafe.Sizeof(pciInfo{}); s != 68 {
		t.Errorf("sizeof(pciInfo) = %d, want 68", s)
	}
	if o := unsafe.Offsetof(pciInfo{}.BusID); o != 36 {
		t.Errorf("offsetof(pciInfo.BusID) = %d, want 36", o)
	}
	if s := unsafe.Sizeof(memory{}); s != 24 {
		t.Errorf("sizeof(memory) = %d, want 24", s)
	}
}
