# Sourced by hack/cno-check.sh, hack/cno-e2e.sh, hack/cno/prepare.sh and
# hack/openshift-api-check.sh: their argument, progress lines, failures and
# logged commands. The caller sets $prefix (the start of every line it
# prints) and $logs (a directory).

# checkout_arg WHAT BASE "$@": the one argument these scripts take, a
# checkout of WHAT at BASE; prints its absolute path, or the usage and
# exits 2.
checkout_arg() {
	local what="$1" base="$2"
	shift 2
	if [ $# -ne 1 ]; then
		echo "usage: $0 DIR (a pristine $what checkout at $base)" >&2
		exit 2
	fi
	if [ ! -d "$1" ]; then
		echo "$prefix: FAIL: $1 is not a directory; give a pristine $what checkout at $base" >&2
		exit 2
	fi
	cd "$1" && pwd
}

step() { echo "$prefix: $*"; }

fail() {
	echo "$prefix: FAIL: $* (logs in $logs)" >&2
	exit 1
}

# logged NAME CMD...: runs CMD with its output in $logs/NAME.log and, if it
# fails, shows the log's tail and fails.
logged() {
	local name="$1"
	shift
	if ! "$@" >"$logs/$name.log" 2>&1; then
		tail -n 40 "$logs/$name.log" >&2
		fail "$name"
	fi
}

# require_pristine DIR BASE: DIR is a git checkout at commit BASE (short
# hash) with no local changes.
require_pristine() {
	local at
	at="$(git -C "$1" rev-parse --short=9 HEAD)"
	[ "$at" = "$2" ] || fail "$1 is at $at, not $2"
	[ -z "$(git -C "$1" status --porcelain)" ] || fail "$1 has local changes; give a pristine checkout"
}
