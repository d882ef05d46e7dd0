#!/usr/bin/env bash
# hack/controller-mutants.sh: hand-made mutants of the host's safety rules in
# pkg/controller and pkg/prune and of run's leader election, each run against the
# end-to-end tests that guard it (a real kube-apiserver and etcd from bin/).
# A mutant is killed when those tests fail, and the tests that failed pass
# again on the unmutated code: a test that fails there too is flaky, which
# proves nothing about the mutant, and the run stops on it.
# The unmutated code must pass the same tests first, or nothing is proven.
# Each mutant is applied to a copy of the checkout; this one is never touched.
# Prints `controller_mutants_killed: <killed>/<total>` last; exits 1 if any lived.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export KUBEBUILDER_ASSETS="${KUBEBUILDER_ASSETS:-$root/bin}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# name ~ file ~ code ~ replacement ~ the tests that must catch it (regexp alternatives)
mutants=(
	"skip the watches on owned objects~pkg/controller/controller.go~b = b.Watches(obj, enqueueSingle)~_ = obj~TestHandlerRestored"
	"drop the owner-reference exemption from pruning~pkg/controller/prune.go~if len(item.GetOwnerReferences()) > 0 {~if false {~TestPruneNoLongerRendered"
	"keep the host's labels and fields on adopted objects~pkg/prune/prune.go~if err := release(ctx, c, gvk, item, opts.FieldManager); err != nil {~if err := error(nil); err != nil {~TestPruneNoLongerRendered|TestHandoverFromRealOperatorNamespaces"
	"prune CRDs like any other kind~pkg/prune/kinds.go~&networkingv1.NetworkPolicy{},~&networkingv1.NetworkPolicy{}, &apiextensionsv1.CustomResourceDefinition{},~TestPruneNoLongerRendered"
	"write the status on every reconcile~pkg/controller/status.go~if conditionsUnchanged(previous, conditions) {~if false && conditionsUnchanged(previous, conditions) {~TestIdleReconcilesWriteNothing"
	"run without leader election~cmd/cno-nmstate/host.go~LeaderElection:             true,~LeaderElection:             false,~TestRunOneWriter"
	"apply on every reconcile~pkg/controller/apply.go~if !r.opts.ApplyEveryReconcile {~if false {~TestIdleReconcilesWriteNothing"
	"apply without taking hand-edited fields back~pkg/controller/apply.go~client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {~client.FieldOwner(FieldManager)); err != nil {~TestHandEditsBeyondOwnedFields"
	"ignore handler DaemonSets of others~pkg/controller/other_manager.go~if ds := &handlers.Items[i]; !renderedHandler(ds) {~if ds := &handlers.Items[i]; false && !renderedHandler(ds) {~TestOtherHandlerDefersTheHost"
	"read only the first handler DaemonSet~pkg/controller/other_manager.go~handlerLabels, client.Limit(2)~handlerLabels, client.Limit(1)~TestOtherHandlerDefersTheHost"
)

copy_checkout() {
	rm -rf "$work/src"
	mkdir -p "$work/src"
	(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$work/src")
}

run_tests() {
	(cd "$work/src" && go test -count=1 -timeout 10m -run "^($1)\$" ./test/e2e/) >"$work/out.log" 2>&1
}

# passes_unmutated TESTS MESSAGE: runs TESTS on a fresh copy of the
# unmutated checkout; if they fail, shows the log's tail and MESSAGE, and
# exits 1.
passes_unmutated() {
	copy_checkout
	if ! run_tests "$1"; then
		tail -n 30 "$work/out.log" >&2
		echo "controller-mutants: $2" >&2
		exit 1
	fi
}

all_tests="$(printf '%s\n' "${mutants[@]}" | cut -d'~' -f5 | tr '|' '\n' | sort -u | paste -sd'|')"
passes_unmutated "$all_tests" "the unmutated code fails $all_tests; fix that first"
echo "controller-mutants: unmutated code passes $all_tests"

killed=0
for m in "${mutants[@]}"; do
	IFS='~' read -r name file code replacement tests <<<"$m"
	copy_checkout
	CODE="$code" REPL="$replacement" perl -0pi -e 's/\Q$ENV{CODE}\E/$ENV{REPL}/ or die "mutation site not found\n"' "$work/src/$file" ||
		{ echo "controller-mutants: $name: $file no longer has: $code" >&2; exit 1; }
	if run_tests "$tests"; then
		echo "controller-mutants: LIVED  $name ($tests passed)"
	else
		if grep -q -e '\[build failed\]' -e '^# ' "$work/out.log"; then
			tail -n 20 "$work/out.log" >&2
			echo "controller-mutants: $name does not compile; a mutant must" >&2
			exit 1
		fi
		failed="$(grep -oE -- '--- FAIL: [A-Za-z0-9_]+' "$work/out.log" | sort -u | cut -d' ' -f3 | paste -sd'|')"
		# A panic or a timeout names no test: all of them run again.
		failed="${failed:-$tests}"
		passes_unmutated "$failed" "FLAKY  $failed failed under $name and fail on the unmutated code too; fix the test first"
		echo "controller-mutants: killed $name by ${failed//|/,} (which pass again unmutated)"
		killed=$((killed + 1))
	fi
done
echo "controller_mutants_killed: $killed/${#mutants[@]}"
[ "$killed" -eq "${#mutants[@]}" ]
