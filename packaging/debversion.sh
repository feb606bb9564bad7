#!/bin/sh
# debversion.sh VERSION [COMMIT] prints the Debian upstream version for a
# `git describe --tags --always --dirty` string, as `make deb` needs it:
#
#   v0.6.0                  -> 0.6.0
#   v0.6.0-rc1              -> 0.6.0~rc1          (sorts before 0.6.0)
#   v0.6.0-3-gabc1234       -> 0.6.0+git3.abc1234 (sorts after 0.6.0)
#   abc1234                 -> 0.0.0~gitabc1234   (no tag yet)
#   dev, or anything else   -> 0.0.0~git<COMMIT>  (0.0.0~gitunknown without one)
#
# and "-dirty" adds ".dirty" (a build from a modified tree).
# `debversion.sh --test` checks these cases.
set -eu

map() {
	v=${1#v}
	commit=${2:-}
	dirty=
	case $v in *-dirty) v=${v%-dirty} dirty=.dirty ;; esac
	tag=$v extra=
	# A describe past a tag: TAG-N-gHASH.
	if past=$(printf '%s\n' "$v" | sed -nE 's/^(.+)-([0-9]+)-g([0-9a-f]+)$/\1 \2.\3/p') && [ -n "$past" ]; then
		tag=${past% *} extra=+git${past#* }
	fi
	if printf '%s\n' "$tag" | grep -Eq '^[0-9]+(\.[0-9]+)*([-~.+][0-9A-Za-z.]+)*$'; then
		# A pre-release suffix sorts before its release in Debian with "~".
		out=$(printf '%s' "$tag" | tr '-' '~')$extra
	elif printf '%s\n' "$v" | grep -Eq '^[0-9a-f]{4,40}$'; then
		out=0.0.0~git$v
	else
		out=0.0.0~git$(printf '%s' "${commit:-unknown}" | tr -cd '0-9A-Za-z')
	fi
	printf '%s%s\n' "$out" "$dirty"
}

if [ "${1:-}" = --test ]; then
	fail=0
	while read -r in commit want; do
		[ "$commit" = - ] && commit=
		got=$(map "$in" "$commit")
		if [ "$got" != "$want" ]; then
			echo "debversion: $in $commit: got $got, want $want" >&2
			fail=1
		fi
	done <<-EOF
		v0.6.0 - 0.6.0
		0.6.0 - 0.6.0
		v0.6.0-rc1 - 0.6.0~rc1
		v0.6.0-3-gabc1234 - 0.6.0+git3.abc1234
		v0.6.0-3-gabc1234-dirty - 0.6.0+git3.abc1234.dirty
		v1.2 - 1.2
		abc1234 abc1234 0.0.0~gitabc1234
		abc1234-dirty abc1234 0.0.0~gitabc1234.dirty
		dev abc1234 0.0.0~gitabc1234
		dev - 0.0.0~gitunknown
		release-x-3-gabc1234 abc1234 0.0.0~gitabc1234
	EOF
	exit $fail
fi
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: debversion.sh VERSION [COMMIT] | --test" >&2
	exit 2
fi
map "$@"
