//go:build linux && (amd64 || arm64)

package nvml

import (
	"fmt"

	"github.com/ebitengine/purego"
)

// memory is nvmlMemory_t (v1).
type memory struct {
	Total, Free, Used uint64
}

// pciInfo is nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it: the field
// sizes add up to 68 bytes with no padding, as in C.
type pciInfo struct {
	BusIDLegacy    [16]byte
	Domain         uint32
	Bus            uint32
	Device         uint32
	PCIDeviceID    uint32
	PCISubSystemID uint32
	BusID          [32]byte
}

// binding is NVML bound through purego. Its functions are set only by
// open after dlopen succeeded and every required symbol was found, so no
// call can reach an unloaded library; optional ones stay nil when absent.
type binding struct {
	init        func() Return
	shutdown    func() Return
	getCount    func(*uint32) Return
	getHandle   func(uint32, *uintptr) Return
	getName     func(uintptr, *byte, uint32) Return
	getUUID     func(uintptr, *byte, uint32) Return
	getMemory   func(uintptr, *memory) Return
	getPCI      func(uintptr, *pciInfo) Return
	errorString func(Return) string
}

// open dlopens name and binds the NVML functions. A missing library or
// required function is ErrNotPresent, never a panic: purego's
// RegisterLibFunc panics on a missing symbol, so symbols are looked up
// first.
func open(name string) (library, error) {
	h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNotPresent, err)
	}
	b := &binding{}
	required := []struct {
		sym string
		fn  any
	}{
		{"nvmlInit_v2", &b.init},
		{"nvmlShutdown", &b.shutdown},
		{"nvmlDeviceGetCount_v2", &b.getCount},
		{"nvmlDeviceGetHandleByIndex_v2", &b.getHandle},
		{"nvmlDeviceGetName", &b.getName},
		{"nvmlDeviceGetUUID", &b.getUUID},
	}
	for _, r := range required {
		if !bind(h, r.sym, r.fn) {
			// The handle stays open: closing a library that may have run
			// initialisers gains nothing in a short-lived command.
			return nil, fmt.Errorf("%w (%s has no %s)", ErrNotPresent, name, r.sym)
		}
	}
	bind(h, "nvmlDeviceGetMemoryInfo", &b.getMemory)
	bind(h, "nvmlDeviceGetPciInfo_v3", &b.getPCI)
	bind(h, "nvmlErrorString", &b.errorString)
	return b, nil
}

// bind points *fptr at symbol sym of the library handle, reporting whether
// the symbol exists.
func bind(handle uintptr, sym string, fptr any) bool {
	addr, err := purego.Dlsym(handle, sym)
	if err != nil || addr == 0 {
		return false
	}
	purego.RegisterFunc(fptr, addr)
	return true
}

func (b *binding) Init() Return     { return b.init() }
func (b *binding) Shutdown() Return { return b.shutdown() }

func (b *binding) DeviceCount() (uint32, Return) {
	var n uint32
	r := b.getCount(&n)
	return n, r
}

func (b *binding) DeviceHandle(index uint32) (uintptr, Return) {
	var h uintptr
	r := b.getHandle(index, &h)
	return h, r
}

func (b *binding) DeviceName(h uintptr) (string, Return) {
	buf := make([]byte, nameBufferSize)
	r := b.getName(h, &buf[0], uint32(len(buf)))
	return cString(buf), r
}

func (b *binding) DeviceUUID(h uintptr) (string, Return) {
	buf := make([]byte, uuidBufferSize)
	r := b.getUUID(h, &buf[0], uint32(len(buf)))
	return cString(buf), r
}

func (b *binding) DeviceMemoryTotal(h uintptr) (uint64, Return) {
	if b.getMemory == nil {
		return 0, ErrNotSupported
	}
	var m memory
	r := b.getMemory(h, &m)
	return m.Total, r
}

func (b *binding) DevicePCIBusID(h uintptr) (string, Return) {
	if b.getPCI == nil {
		return "", ErrNotSupported
	}
	var p pciInfo
	r := b.getPCI(h, &p)
	return cString(p.BusID[:]), r
}

func (b *binding) ErrorString(r Return) string {
	if b.errorString == nil {
		return ""
	}
	return b.errorString(r)
}
