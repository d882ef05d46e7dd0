#!/usr/bin/env bash
# hack/cno-check.sh CNO_DIR
#
# Proves the CNO integration against the real Cluster Network Operator: given a
# pristine openshift/cluster-network-operator checkout at 2a6a57fef it
#   1. applies hack/cno/kubernetes-nmstate.patch (CNO's side of the integration);
#   2. requires this checkout as github.com/cno-nmstate/cno-nmstate (a replace),
#      runs `go mod tidy` and fails if any requirement CNO already had changed:
#      the library must ask CNO for nothing newer than it has;
#   3. vendors, then lays hack/openshift-api/kubernetes-nmstate.patch (the Go
#      files and CRD manifests of operator/v1 and features/) over
#      vendor/github.com/openshift/api: it stands in for the openshift/api bump
#      CNO takes once that change merges, which is what gives the typed
#      spec.kubernetesNMState field and the KubernetesNMStateByDefault gate;
#   4. builds ./pkg/... and ./cmd/..., vets the packages the patch touches, and
#      runs CNO's own tests of pkg/bootstrap, pkg/network,
#      pkg/controller/statusmanager and pkg/controller/operconfig, the new ones
#      among them (keepCRDs, pruning, conditions, image env);
#   5. checks docs/cno-integration.md against the patch and CNO: every code block
#      is in the patch, every CNO file:line it names exists at 2a6a57fef.
# It exits 0 only when all pass; the last line is the summary.
#
# The Go module proxy refuses three of CNO's exact pseudo-versions
# (openshift/library-go, openshift/build-machinery-go and openshift/api). The
# script builds a file-system GOPROXY for just those, zipped from git snapshots
# of the three repositories at the commits the pseudo-versions name
# (hack/cno/fsproxy); the zips hash to what CNO's go.sum records, and `go mod`
# verifies them as usual. The openshift/api snapshot lacks one large generated
# file; it is taken from the served neighbour v0.0.0-20260724095150-18550f1a6d13
# only because its git blob hash is the one the commit records.
#
# Environment:
#   LIBRARY_GO_GIT, BUILD_MACHINERY_GO_GIT, OPENSHIFT_API_GIT
#       git directories (bare or .git) holding those commits; by default the
#       snapshots the fetch tool writes under $MIRROR_ROOT (/work/.mirror).
#   KEEP_CNO_DIR=1  leave CNO_DIR patched (default: restore it on exit).
set -euo pipefail

if [ $# -ne 1 ]; then
	echo "usage: $0 CNO_DIR (a pristine openshift/cluster-network-operator checkout at 2a6a57fef)" >&2
	exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cno="$(cd "$1" && pwd)"
base=2a6a57fef
mirror="${MIRROR_ROOT:-/work/.mirror}"
library_go_git="${LIBRARY_GO_GIT:-$mirror/openshift+library-go/repo}"
build_machinery_git="${BUILD_MACHINERY_GO_GIT:-$mirror/openshift+build-machinery-go/repo}"
api_git="${OPENSHIFT_API_GIT:-$mirror/openshift+api/repo}"
logs="$(mktemp -d)"
start=$SECONDS

step() { echo "cno-check: $*"; }
fail() {
	echo "cno-check: FAIL: $* (logs in $logs)" >&2
	exit 1
}
logged() {
	local name="$1"
	shift
	if ! "$@" >"$logs/$name.log" 2>&1; then
		tail -n 40 "$logs/$name.log" >&2
		fail "$name"
	fi
}

cd "$cno"
[ "$(git rev-parse --short=9 HEAD)" = "$base" ] || fail "$cno is at $(git rev-parse --short=9 HEAD), not $base"
[ -z "$(git status --porcelain)" ] || fail "$cno has local changes; give a pristine checkout"
if [ "${KEEP_CNO_DIR:-}" != 1 ]; then
	trap 'cd "$cno" && git checkout -q -- . && git clean -qfd' EXIT
fi

step "1. applying hack/cno/kubernetes-nmstate.patch"
git apply "$root/hack/cno/kubernetes-nmstate.patch" || fail "the patch does not apply to $base"
touched="$(git apply --numstat "$root/hack/cno/kubernetes-nmstate.patch" | awk '$3 ~ /\.go$/ {print "./" $3}' | xargs -n1 dirname | sort -u)"

step "2. requiring the library (replace => $root) through a file-system GOPROXY for CNO's refused pseudo-versions"
proxy="$logs/goproxy"
fill="$(cd "$root/hack/cno/fsproxy" && GOFLAGS=-mod=mod GONOSUMDB=github.com/openshift \
	go mod download -json github.com/openshift/api@v0.0.0-20260724095150-18550f1a6d13 |
	sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
[ -d "$fill" ] || fail "downloading the openshift/api neighbour"
logged fsproxy bash -c "cd '$root/hack/cno/fsproxy' && go run . -out '$proxy' -fill '$fill' \
	github.com/openshift/library-go@v0.0.0-20260716164659-7926d144f96a='$library_go_git' \
	github.com/openshift/build-machinery-go@v0.0.0-20260427155009-b879704ce51f='$build_machinery_git' \
	github.com/openshift/api@v0.0.0-20260724065811-356624ff036f='$api_git'"
export GOPROXY="file://$proxy,https://proxy.golang.org" GONOSUMDB=github.com/openshift,github.com/nmstate GOFLAGS=-mod=mod
cp go.mod "$logs/go.mod.before"
go mod edit -require=github.com/cno-nmstate/cno-nmstate@v0.0.0-00010101000000-000000000000 \
	-replace=github.com/cno-nmstate/cno-nmstate="$root"
logged tidy go mod tidy
# Every requirement but the library's must be as CNO had it.
requirements() { go mod edit -json "$1" | tr -d ' \n\t' | grep -oE '"Go":"[^"]+"|"Path":"[^"]+","Version":"[^"]+"' | grep -v cno-nmstate | sort; }
changed="$(diff <(requirements "$logs/go.mod.before") <(requirements go.mod) || true)"
if [ -n "$changed" ]; then
	echo "$changed" >&2
	fail "taking the library changed CNO's own requirements"
fi
git diff --quiet go.sum || fail "taking the library changed CNO's go.sum: $(git diff --stat go.sum)"
logged vendor go mod vendor
unset GOFLAGS

step "3. laying the openshift/api change over vendor/github.com/openshift/api"
v=vendor/github.com/openshift/api
git apply --directory="$v" --include="$v/features/features.go" --include="$v/operator/v1/*.go" \
	--include="$v/operator/v1/zz_generated.crd-manifests/*" --include="$v/operator/v1/zz_generated.featuregated-crd-manifests.yaml" \
	"$root/hack/openshift-api/kubernetes-nmstate.patch" || fail "the openshift/api patch does not apply to CNO's vendored openshift/api"
git apply --numstat --directory="$v" --include="$v/features/features.go" --include="$v/operator/v1/*.go" \
	"$root/hack/openshift-api/kubernetes-nmstate.patch" | grep -q types_network.go || fail "the openshift/api overlay did not touch operator/v1"

step "4. building, vetting what the patch touches, running CNO's tests"
logged build go build ./pkg/... ./cmd/...
# shellcheck disable=SC2086 # one package per word
logged vet go vet $touched
packages="./pkg/bootstrap/... ./pkg/network/... ./pkg/controller/statusmanager/... ./pkg/controller/operconfig/..."
# shellcheck disable=SC2086
logged test go test -count=1 $packages
passed="$(grep -c '^ok' "$logs/test.log")"
ours="$(grep -hoE '^func Test[A-Za-z0-9_]*(KubernetesNMState|KeepCRDs)[A-Za-z0-9_]*' pkg/network/*_test.go pkg/controller/statusmanager/*_test.go | wc -l)"
# shellcheck disable=SC2086
go test -count=1 -v -run 'KubernetesNMState|KeepCRDs' ./pkg/network/ ./pkg/controller/statusmanager/ >"$logs/ours.log" 2>&1 ||
	fail "the integration's own tests"
ran="$(grep -cE '^--- PASS: Test' "$logs/ours.log")"
[ "$ran" -eq "$ours" ] || fail "$ours integration tests declared but $ran passed"

step "5. docs/cno-integration.md against the patch and CNO $base"
missing=""
for ref in $(grep -oE '`[a-zA-Z0-9_./-]+\.(go|yaml|references)(:[0-9]+)?`' "$root/docs/cno-integration.md" | tr -d '`' | sort -u); do
	file="${ref%%:*}"
	line="${ref#*:}"
	[ "$line" = "$ref" ] && line=""
	case "$file" in pkg/* | manifests/* | bindata/* | cmd/*) ;; *) continue ;; esac
	if ! git cat-file -e "$base:$file" 2>/dev/null; then
		grep -q "^diff --git a/$file " "$root/hack/cno/kubernetes-nmstate.patch" || missing="$missing $ref"
		continue
	fi
	if [ -n "$line" ] && [ "$(git show "$base:$file" | wc -l)" -lt "$line" ]; then
		missing="$missing $ref"
	fi
done
[ -z "$missing" ] || fail "docs/cno-integration.md names what is not in CNO $base nor the patch:$missing"
(cd "$root" && go test -count=1 -run TestCNOIntegrationDocMatchesPatch ./pkg/nmstate/ >"$logs/docs.log" 2>&1) || fail "docs snippets"

step "PASS in $((SECONDS - start))s"
echo "cno-check: PASS (patch applied to CNO $base; go.mod: only the library added, nothing bumped; build ok; $passed CNO test packages ok ($ran integration tests among them); docs match the patch)"
