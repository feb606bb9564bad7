// Package nvml lists NVIDIA GPUs through the driver's NVML library
// (libnvidia-ml.so.1) without cgo: the library is opened at run time with
// purego, so a binary built with CGO_ENABLED=0 still uses NVML where the
// driver is installed and simply finds nothing where it is not.
//
// Only the calls fluxq needs are bound: nvmlInit_v2, nvmlDeviceGetCount_v2,
// nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetName, nvmlDeviceGetUUID,
// nvmlDeviceGetMemoryInfo, nvmlDeviceGetPciInfo_v3, nvmlErrorString and
// nvmlShutdown. nvmlDeviceGetMemoryInfo, nvmlDeviceGetPciInfo_v3 and
// nvmlErrorString are optional: a driver without them still yields names
// and UUIDs.
package nvml

import (
	"errors"
	"fmt"
	"sync"
)

// LibraryName is the soname dlopen is asked for: the unversioned
// libnvidia-ml.so exists only where the driver's development files are.
const LibraryName = "libnvidia-ml.so.1"

// ErrNotPresent means NVML cannot be used here: the library is missing,
// lacks a required function, or finds no NVIDIA driver loaded. Callers
// fall back to other sources without telling the user.
var ErrNotPresent = errors.New("nvml: " + LibraryName + " not present")

// Return is an nvmlReturn_t.
type Return int32

// The nvmlReturn_t values fluxq tells apart (nvml.h).
const (
	Success          Return = 0
	ErrNotSupported  Return = 3
	ErrDriverMissing Return = 9  // NVML_ERROR_DRIVER_NOT_LOADED
	ErrLibMissing    Return = 12 // NVML_ERROR_LIBRARY_NOT_FOUND
)

// Buffer sizes from nvml.h (the _V2 sizes, large enough for every version).
const (
	nameBufferSize = 96 // NVML_DEVICE_NAME_V2_BUFFER_SIZE
	uuidBufferSize = 96 // NVML_DEVICE_UUID_V2_BUFFER_SIZE
)

// Error is a failed NVML call.
type Error struct {
	Func string // the C function, e.g. "nvmlDeviceGetUUID"
	Code Return
	Msg  string // nvmlErrorString's text, or the code when it is missing
}

func (e *Error) Error() string { return fmt.Sprintf("nvml: %s: %s", e.Func, e.Msg) }

// Device is one GPU as NVML reports it.
type Device struct {
	Index       int    // NVML's index: the order nvidia-smi shows
	Name        string // e.g. "NVIDIA A100-SXM4-40GB"
	UUID        string // e.g. "GPU-5f1c…"
	BusID       string // PCI address as NVML writes it, "00000000:3B:00.0"; "" if unknown
	MemoryBytes uint64 // total frame buffer; 0 if unknown
}

// library is the part of NVML that enumerate calls, one method per C
// function, so that the enumeration is tested against a fake while the
// purego binding stays a thin layer that only exists after a successful
// dlopen.
type library interface {
	Init() Return
	Shutdown() Return
	DeviceCount() (uint32, Return)
	DeviceHandle(index uint32) (uintptr, Return)
	DeviceName(h uintptr) (string, Return)
	DeviceUUID(h uintptr) (string, Return)
	// DeviceMemoryTotal and DevicePCIBusID answer ErrNotSupported when the
	// library lacks the function.
	DeviceMemoryTotal(h uintptr) (uint64, Return)
	DevicePCIBusID(h uintptr) (string, Return)
	ErrorString(r Return) string
}

// loaded opens the library once per process. It is never closed: NVML may
// leave threads behind, and the commands that ask exit soon after.
var loaded = sync.OnceValues(func() (library, error) { return open(LibraryName) })

// Devices lists the GPUs NVML sees, in NVML index order. The error wraps
// ErrNotPresent when NVML cannot be used on this machine.
func Devices() ([]Device, error) {
	lib, err := loaded()
	if err != nil {
		return nil, err
	}
	return enumerate(lib)
}

// enumerate runs one init/list/shutdown round over lib.
func enumerate(lib library) ([]Device, error) {
	if r := lib.Init(); r != Success {
		if r == ErrDriverMissing || r == ErrLibMissing {
			// The library is installed (a container image, a driver
			// package) but no driver runs: there is no GPU to use.
			return nil, fmt.Errorf("%w: %w", ErrNotPresent, callError(lib, "nvmlInit_v2", r))
		}
		return nil, callError(lib, "nvmlInit_v2", r)
	}
	defer lib.Shutdown()
	n, r := lib.DeviceCount()
	if r != Success {
		return nil, callError(lib, "nvmlDeviceGetCount_v2", r)
	}
	devs := make([]Device, 0, n)
	for i := uint32(0); i < n; i++ {
		h, r := lib.DeviceHandle(i)
		if r != Success {
			return nil, fmt.Errorf("gpu %d: %w", i, callError(lib, "nvmlDeviceGetHandleByIndex_v2", r))
		}
		d := Device{Index: int(i)}
		if d.Name, r = lib.DeviceName(h); r != Success {
			return nil, fmt.Errorf("gpu %d: %w", i, callError(lib, "nvmlDeviceGetName", r))
		}
		if d.UUID, r = lib.DeviceUUID(h); r != Success {
			return nil, fmt.Errorf("gpu %d: %w", i, callError(lib, "nvmlDeviceGetUUID", r))
		}
		// Memory and PCI address are extras: a GPU that will not say
		// (a MIG-enabled one answers NOT_SUPPORTED for memory) is still
		// a GPU.
		if m, r := lib.DeviceMemoryTotal(h); r == Success {
			d.MemoryBytes = m
		}
		if b, r := lib.DevicePCIBusID(h); r == Success {
			d.BusID = b
		}
		devs = append(devs, d)
	}
	return devs, nil
}

func callError(lib library, fn string, r Return) error {
	msg := lib.ErrorString(r)
	if msg == "" {
		msg = fmt.Sprintf("error %d", int32(r))
	}
	return &Error{Func: fn, Code: r, Msg: msg}
}

// cString returns the text of a NUL-terminated C string in buf.
func cString(buf []byte) string {
	for i, c := range buf {
		if c == 0 {
			return string(buf[:i])
		}
	}
	return string(buf)
}
