//go:build !(linux && (amd64 || arm64))

package nvml

// open reports NVML absent where fluxq does not bind it: NVIDIA ships
// libnvidia-ml for Linux, and purego needs cgo on most other Linux
// architectures, which the release builds do not use.
func open(string) (library, error) { return nil, ErrNotPresent }
