#!/usr/bin/env bash
# hack/cno-check.sh CNO_DIR
#
# Proves the CNO integration against the real Cluster Network Operator: given a
# pristine openshift/cluster-network-operator checkout at 2a6a57fef it
#   1-3. applies hack/cno/kubernetes-nmstate.patch, requires this checkout as
#      github.com/cno-nmstate/cno-nmstate (a replace) with nothing CNO had
#      bumped, vendors, and lays the openshift/api change over vendor
#      (hack/cno/prepare.sh, shared with hack/cno-e2e.sh, says how and why);
#   4. builds ./pkg/... and ./cmd/..., vets the packages the patch touches, and
#      runs CNO's own tests of pkg/bootstrap, pkg/network,
#      pkg/controller/statusmanager and pkg/controller/operconfig, the new ones
#      among them (keepCRDs, pruning, conditions, image env);
#   5. checks docs/cno-integration.md against the patch and CNO: every code block
#      is in the patch, every CNO file:line it names exists at 2a6a57fef.
# It exits 0 only when all pass; the last line is the summary.
#
# Environment: what hack/cno/prepare.sh reads (LIBRARY_GO_GIT,
# BUILD_MACHINERY_GO_GIT, OPENSHIFT_API_GIT, MIRROR_ROOT), and
#   KEEP_CNO_DIR=1  leave CNO_DIR patched (default: restore it on exit).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base=2a6a57fef
logs="$(mktemp -d)"
start=$SECONDS

prefix=cno-check
# shellcheck source=lib/steps.sh
. "$root/hack/lib/steps.sh"
cno="$(checkout_arg openshift/cluster-network-operator "$base" "$@")"

cd "$cno"
require_pristine "$cno" "$base"
if [ "${KEEP_CNO_DIR:-}" != 1 ]; then
	trap 'cd "$cno" && git checkout -q -- . && git clean -qfd' EXIT
fi

PREPARE_PREFIX=cno-check "$root/hack/cno/prepare.sh" "$cno" "$logs" || fail "preparing CNO (steps 1-3)"
touched="$(git apply --numstat "$root/hack/cno/kubernetes-nmstate.patch" | awk '$3 ~ /\.go$/ {print "./" $3}' | xargs -n1 dirname | sort -u)"

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
