#!/usr/bin/env bash
# debfresh.sh [DEB]: the .deb on a fresh Debian 12: a minimal bookworm root
# made with debootstrap (from Debian's own mirror), the package installed
# there with dpkg, and each binary's --version run inside it. Needs root and
# debootstrap (apt-get install debootstrap); the root is made once in
# $DEBROOT (default /tmp/fluxq-bookworm) and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${DEBROOT:-/tmp/fluxq-bookworm}
deb=${1:-$(ls dist/fluxq_*.deb 2>/dev/null | head -n 1)}
[ -f "$deb" ] || { echo "debfresh: no .deb: run make deb first" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "debfresh: needs root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "debfresh: needs debootstrap" >&2; exit 2; }
if [ ! -f "$root/etc/debian_version" ]; then
	debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
fi
# A fresh root each time: remove what an earlier run installed.
chroot "$root" dpkg -r fluxq >/dev/null 2>&1 || true
cp "$deb" "$root/tmp/fluxq.deb"
echo "debfresh: Debian $(cat "$root/etc/debian_version"), $(chroot "$root" dpkg -l | grep -c '^ii') packages"
chroot "$root" dpkg -i /tmp/fluxq.deb >/dev/null
for b in fluxq fluxsched fluxres; do chroot "$root" "$b" --version; done
chroot "$root" dpkg -r fluxq >/dev/null
echo "debfresh: ok"
