#!/usr/bin/env bash
# debcheck.sh [DEB]: the acceptance check "installs on a fresh Debian
# machine". It installs the .deb that `make deb` built (dist/fluxq_*.deb, or
# DEB), runs the installed fluxq, finds its man pages, and removes the
# package again:
#
#   dpkg -i dist/fluxq_*.deb && fluxq --version && man -w fluxq && dpkg -r fluxq
#
# It prints the version line and exits non-zero on the first failure. The
# package is removed even when a check fails. Needs root (or sudo) and a
# machine where installing and removing fluxq is fine: it must not be
# installed already.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=()
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "debcheck: needs root or sudo (dpkg -i)" >&2; exit 2; }
	sudo=(sudo)
fi

if [ $# -gt 1 ]; then
	echo "usage: bench/debcheck.sh [DEB]" >&2
	exit 2
fi
if [ $# -eq 1 ]; then
	deb=$1
else
	debs=(dist/fluxq_*.deb)
	if [ ! -f "${debs[0]}" ] || [ ${#debs[@]} -ne 1 ]; then
		echo "debcheck: want exactly one dist/fluxq_*.deb (run make deb), found: ${debs[*]}" >&2
		exit 2
	fi
	deb=${debs[0]}
fi
if dpkg-query -W -f='${Status}' fluxq 2>/dev/null | grep -q 'ok installed'; then
	echo "debcheck: fluxq is installed already; not touching it" >&2
	exit 2
fi

echo "debcheck: dpkg -i $deb"
"${sudo[@]}" dpkg -i "$deb"
trap 'echo "debcheck: dpkg -r fluxq"; "${sudo[@]}" dpkg -r fluxq' EXIT

# The package's binary, not one that `make install` put earlier in PATH.
if [ "$(command -v fluxq)" != /usr/bin/fluxq ]; then
	echo "debcheck: warning: fluxq in PATH is $(command -v fluxq), not /usr/bin/fluxq; checking /usr/bin/fluxq" >&2
fi
for b in fluxq fluxsched fluxres; do
	/usr/bin/$b --version
done
man -w fluxq
man -w fluxsched fluxres
man -w 5 fluxq.toml
for f in /usr/share/bash-completion/completions/fluxq /usr/share/zsh/vendor-completions/_fluxq \
	/usr/share/fish/vendor_completions.d/fluxq.fish /usr/share/doc/fluxq/README.md /usr/share/doc/fluxq/policies.md; do
	[ -f "$f" ] || { echo "debcheck: $f is missing" >&2; exit 1; }
done
echo "debcheck: ok: $(/usr/bin/fluxq --version)"
