#!/usr/bin/env bash
# hack/cno-e2e.sh CNO_DIR
#
# Runs the real Cluster Network Operator as the host of kubernetes-nmstate in
# the dev cluster, and the scenarios of test/cnoe2e against it. Given a
# pristine openshift/cluster-network-operator checkout at 2a6a57fef (refused
# otherwise, as hack/cno-check.sh does) it
#   0. builds the dev cluster's binaries (`make tools`) when they are missing;
#   1. clones CNO_DIR into a temporary directory (CNO_DIR itself is never
#      changed) and builds the pristine cmd/cluster-network-operator of
#      2a6a57fef, for the upgrade and downgrade scenarios;
#   2. prepares the clone as hack/cno-check.sh does (hack/cno/prepare.sh: the
#      patch, the library by a replace to this checkout, vendored, the
#      openshift/api overlay) and builds the patched binary;
#   3. runs `go test -tags cnoe2e ./test/cnoe2e` with the two binaries and the
#      patched tree (CNO reads ./bindata, so it runs with the tree as its
#      working directory, as its own hack/run-locally.sh does).
# Both binaries are cached in bin/: the pristine one by CNO's commit, the
# patched one by a hash of the CNO commit, the two patches, prepare.sh and the
# library's sources (go.mod, go.sum, pkg/, bindata/: the files git tracks and the
# untracked ones it does not ignore, with their working-tree content). The
# lines before the last are TestWhatThePatchCosts's summary (`cno_...: N`),
# whose figures it also writes into docs/resource-budget.md; the last line is
# `cno-e2e: PASS (N scenarios)` or `cno-e2e: FAIL: ...`.
#
# Environment: what hack/cno/prepare.sh reads, and
#   CNO_E2E_RUN   a `go test -run` pattern (default: every scenario).
#   CNO_E2E_PATCHED_BINARY  run the scenarios against this patched CNO binary
#                 instead of building one (an earlier build, to show that a
#                 scenario fails without a fix).
#   KEEP_LOGS=1   keep the clusters' directories (CNO's log among them).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base=2a6a57fef
logs="$(mktemp -d /tmp/cno-e2e-logs.XXXXXX)"
start=$SECONDS

prefix=cno-e2e
# shellcheck source=lib/steps.sh
. "$root/hack/lib/steps.sh"
cno="$(checkout_arg openshift/cluster-network-operator "$base" "$@")"

cd "$cno"
require_pristine "$cno" "$base"
commit="$(git rev-parse HEAD)"

# What the dev cluster runs (kube-apiserver, etcd, the controllers, kwok,
# upstream's handler and operator): built here so that a fresh clone needs
# nothing else; make skips what is already built.
step "0. the dev cluster's binaries (make tools)"
logged tools make -C "$root" tools

work="$(mktemp -d /tmp/cno-e2e-tree.XXXXXX)"
trap 'rm -rf "$work"' EXIT
tree="$work/cluster-network-operator"
step "cloning $cno at $base into $tree (CNO_DIR stays as it is)"
logged clone git clone -q --no-checkout --shared "$cno" "$tree"
logged checkout git -C "$tree" checkout -q --detach "$commit"

build() { (cd "$tree" && CGO_ENABLED=0 go build -mod=vendor -o "$1" ./cmd/cluster-network-operator); }

mkdir -p "$root/bin"
pristine="$root/bin/cluster-network-operator-$commit"
t=$SECONDS
if [ -x "$pristine" ]; then
	step "1. pristine CNO $base: cached ($pristine)"
else
	step "1. building the pristine CNO $base"
	logged build-pristine build "$pristine.tmp"
	mv "$pristine.tmp" "$pristine"
	step "   built in $((SECONDS - t))s"
fi

key="$( (
	echo "$commit"
	cd "$root"
	sha256sum hack/cno/kubernetes-nmstate.patch hack/openshift-api/kubernetes-nmstate.patch hack/cno/prepare.sh
	git ls-files -z --cached --others --exclude-standard go.mod go.sum pkg bindata | xargs -0 sha256sum
) | sha256sum | cut -c1-16)"
patched="$root/bin/cluster-network-operator-nmstate-$key"
step "2. preparing the patched tree"
PREPARE_PREFIX=cno-e2e "$root/hack/cno/prepare.sh" "$tree" "$logs" || fail "preparing CNO"
t=$SECONDS
if [ -n "${CNO_E2E_PATCHED_BINARY:-}" ]; then
	patched="$(realpath "$CNO_E2E_PATCHED_BINARY")"
	[ -x "$patched" ] || fail "CNO_E2E_PATCHED_BINARY $patched is not an executable"
	step "   patched CNO: $patched, as CNO_E2E_PATCHED_BINARY says (not built from this checkout)"
elif [ -x "$patched" ]; then
	step "   patched CNO: cached ($patched)"
else
	step "   building the patched CNO"
	logged build-patched build "$patched.tmp"
	mv "$patched.tmp" "$patched"
	step "   built in $((SECONDS - t))s"
fi

step "3. the scenarios (go test -tags cnoe2e ./test/cnoe2e)"
cd "$root"
t=$SECONDS
set +e
CNO_E2E_PATCHED="$patched" CNO_E2E_PRISTINE="$pristine" CNO_E2E_TREE="$tree" CNO_E2E_KEEP_LOGS="${KEEP_LOGS:-}" \
	CNO_E2E_WRITE_DOC="$root" go test -tags cnoe2e -count=1 -timeout 60m -v -run "${CNO_E2E_RUN:-.}" ./test/cnoe2e/ >"$logs/test.log" 2>&1
rc=$?
set -e
grep -E '^(=== RUN|--- (PASS|FAIL|SKIP)|    --- (PASS|FAIL))|cnoe2e: figure' "$logs/test.log" || true
passed="$(grep -cE '^--- PASS: Test' "$logs/test.log" || true)"
failed="$(grep -E '^--- FAIL: Test' "$logs/test.log" | awk '{print $3}' | tr '\n' ' ' || true)"
skipped="$(grep -cE '^--- SKIP: Test' "$logs/test.log" || true)"
step "scenarios ran in $((SECONDS - t))s; all in $((SECONDS - start))s"
if [ "$rc" -ne 0 ] || [ -n "$failed" ] || [ "$skipped" -ne 0 ] || [ "$passed" -eq 0 ]; then
	tail -n 60 "$logs/test.log" >&2
	fail "${failed:+scenarios failed: $failed}$([ "$skipped" -ne 0 ] && echo " $skipped skipped")(go test exit $rc)"
fi
# TestWhatThePatchCosts's and TestRetryAfterFailedApplies's summary lines;
# the same figures went into docs/resource-budget.md.
grep -E '^cno_[a-z0-9_]+: ' "$logs/test.log" || true
echo "cno-e2e: PASS ($passed scenarios)"
