#!/usr/bin/env bash
# hack/cno/prepare.sh CNO_DIR LOGS_DIR
#
# The steps hack/cno-check.sh and hack/cno-e2e.sh share: given a pristine
# openshift/cluster-network-operator checkout at 2a6a57fef, it
#   1. applies hack/cno/kubernetes-nmstate.patch (CNO's side of the integration);
#   2. requires this checkout as github.com/cno-nmstate/cno-nmstate (a replace),
#      runs `go mod tidy` and fails if any requirement CNO already had changed:
#      the library must ask CNO for nothing newer than it has;
#   3. vendors, then lays hack/openshift-api/kubernetes-nmstate.patch (the Go
#      files and CRD manifests of operator/v1 and features/) over
#      vendor/github.com/openshift/api: it stands in for the openshift/api bump
#      CNO takes once that change merges, which is what gives the typed
#      spec.kubernetesNMState field and the KubernetesNMStateByDefault gate.
# CNO_DIR is changed in place: the caller restores it (cno-check) or works on
# a copy (cno-e2e). Logs go to LOGS_DIR; the file-system GOPROXY is built in
# LOGS_DIR/goproxy.
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
#   PREPARE_PREFIX  the prefix of its progress lines (default: prepare).
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 CNO_DIR LOGS_DIR" >&2
	exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cno="$(cd "$1" && pwd)"
logs="$(cd "$2" && pwd)"
base=2a6a57fef
prefix="${PREPARE_PREFIX:-prepare}"
mirror="${MIRROR_ROOT:-/work/.mirror}"
library_go_git="${LIBRARY_GO_GIT:-$mirror/openshift+library-go/repo}"
build_machinery_git="${BUILD_MACHINERY_GO_GIT:-$mirror/openshift+build-machinery-go/repo}"
api_git="${OPENSHIFT_API_GIT:-$mirror/openshift+api/repo}"

# shellcheck source=../lib/steps.sh
. "$root/hack/lib/steps.sh"

cd "$cno"
require_pristine "$cno" "$base"

step "1. applying hack/cno/kubernetes-nmstate.patch"
git apply "$root/hack/cno/kubernetes-nmstate.patch" || fail "the patch does not apply to $base"

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
