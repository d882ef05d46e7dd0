#!/usr/bin/env bash
# hack/openshift-api-check.sh API_DIR
#
# Proves that this project's proposed openshift/api change,
# hack/openshift-api/kubernetes-nmstate.patch, is a correct openshift/api
# change: given a pristine openshift/api checkout at 2a3d73913 it applies the
# patch, builds, checks that every generated file in the patch is what
# openshift/api's own generators write, runs openshift/api's unit tests for the
# packages the patch touches and its integration suite (tests/, vendored
# ginkgo + envtest) for networks.operator.openshift.io, and checks that
# spec.kubernetesNMState in this project's manifests/ is the schema the patched
# openshift/api generates, feature set by feature set. Exits 0 only when every
# step passes; the last line is the summary. Needs bash, git, go, make and
# python3 (standard library only, to read ginkgo's JSON reports).
#
# The feature gates (decided here, see also hack/generate.sh):
#   KubernetesNMState           gates the field itself (+openshift:enable:FeatureGate):
#                               openshift/api requires new fields on a stable API
#                               behind a gate; enabled in TechPreviewNoUpgrade and
#                               DevPreviewNoUpgrade (CustomNoUpgrade carries every
#                               gated field), so Default and OKD CRDs lack it.
#   KubernetesNMStateByDefault  CNO's staged default (mode omitted = on for BareMetal,
#                               None, VSphere); gates behaviour, no API field.
# They are separate because they graduate separately: the field (opt-in on any
# platform) can reach Default while the default stays off, and the default can
# be turned off again without removing a field that stored configs use
# (dropping a field from the Default CRD would prune users' settings).
#
# Environment:
#   KUBEBUILDER_ASSETS  kube-apiserver, etcd, kubectl for envtest (default: this
#                       project's bin/, built by `make tools`; Kubernetes v1.36)
#   GOFLAGS etc.        passed through to go
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
patch="$root/hack/openshift-api/kubernetes-nmstate.patch"
base=2a3d73913
export KUBEBUILDER_ASSETS="${KUBEBUILDER_ASSETS:-$root/bin}"
logs="$(mktemp -d)"
prefix=openshift-api-check
# shellcheck source=lib/steps.sh
. "$root/hack/lib/steps.sh"
api="$(checkout_arg openshift/api "$base" "$@")"

# The integration suite for networks.operator.openshift.io (see step 6), with
# a ginkgo JSON report next to the log.
run_integration() { # NAME
	(
		cd "$api/tests"
		# test.sh expands the arguments unquoted: no spaces in the focus regex.
		GINKGO_ARGS="-r -v --randomize-all --keep-going --timeout=60m --skip-package=eval --no-color" \
			GINKGO_EXTRA_ARGS="--focus=\\[operator\\.openshift\\.io/v1,.Resource=networks\\] --json-report=$logs/$1.json" \
			./hack/test.sh
	) >"$logs/$1.log" 2>&1 || true
	[ -s "$logs/$1.json" ] || { tail -n 40 "$logs/$1.log" >&2; fail "the integration suite did not run (log: $logs/$1.log)"; }
}
# Reads a ginkgo JSON report: writes the names of the specs that did not pass
# to NAME.failed and prints "PASSED FAILED OURS_PASSED OURS_TOTAL", where ours
# are the specs of the KubernetesNMState and -KubernetesNMState test files.
summarize() { # NAME
	python3 - "$logs/$1.json" "$logs/$1.failed" <<'PY'
import json, sys
passed = ours = ours_passed = 0
failed = []
for suite in json.load(open(sys.argv[1])):
    for spec in suite.get("SpecReports") or []:
        if spec.get("LeafNodeType") != "It":
            continue
        state = spec.get("State")
        if state in ("skipped", "pending"):
            continue
        name = " ".join(spec.get("ContainerHierarchyTexts") or []) + " " + spec.get("LeafNodeText", "")
        mine = "[FeatureGate=KubernetesNMState]" in name or "[FeatureGate=-KubernetesNMState]" in name
        ours += mine
        if state == "passed":
            passed += 1
            ours_passed += mine
        else:
            failed.append(name)
open(sys.argv[2], "w").write("".join(n + "\n" for n in sorted(set(failed))))
print(passed, len(failed), ours_passed, ours)
PY
}

for tool in kube-apiserver etcd kubectl; do
	[ -x "$KUBEBUILDER_ASSETS/$tool" ] || fail "$KUBEBUILDER_ASSETS/$tool is missing: run make tools (or set KUBEBUILDER_ASSETS)"
done

cd "$api"

# 1. The checkout is openshift/api at the commit the patch is written against,
#    and pristine: so whatever differs afterwards comes from the patch.
head="$(git rev-parse HEAD)"
[ "$head" = "$(git rev-parse "$base^{commit}")" ] || fail "$api is at $head, not $base"
# Snapshots of github.com/openshift/api may lack the blob of the largest file
# (openapi/generated_openapi/zz_generated.openapi.go), so the checkout lacks
# the file. It is generated: regenerate it from the pristine sources and
# require the result to hash to the blob id in the commit's tree. That proves
# the generator reproduces the committed file bit for bit.
codegen="$api/tools/_output/bin/$(go env GOOS)/$(go env GOARCH)/codegen"
build_codegen() { [ -x "$codegen" ] || logged build-codegen make -C "$api/tools" codegen; }
openapi=openapi/generated_openapi/zz_generated.openapi.go
if ! git cat-file -e "HEAD:$openapi" 2>/dev/null || [ ! -f "$openapi" ]; then
	step "the checkout lacks $openapi; regenerating it from the pristine sources"
	build_codegen
	CODEGEN="$codegen" logged openapi-pristine hack/update-openapi.sh
	want="$(git rev-parse "HEAD:$openapi")"
	got="$(git hash-object -w "$openapi")"
	[ "$got" = "$want" ] || fail "regenerated $openapi hashes to $got, the commit has $want"
	git update-index -q --refresh || true
fi
[ -z "$(git status --porcelain)" ] || fail "$api is not pristine: $(git status --porcelain | head -5)"
step "pristine openshift/api at $(git rev-parse --short=9 HEAD)"

# 1b. The integration suite for networks.operator.openshift.io on the pristine
#     tree: the baseline for step 6.
run_integration pristine
read -r base_passed base_failed _ _ < <(summarize pristine)
[ -z "$(git status --porcelain)" ] || fail "the pristine integration run changed $api"
step "baseline: $base_passed integration specs pass on the pristine tree, $base_failed fail"

# 2. The patch applies cleanly to it.
git apply --check "$patch" || fail "the patch does not apply to $base"
git apply "$patch"
files="$(git status --porcelain | wc -l)"
step "patch applied ($files files)"

# 3. It builds: the whole module, and go vet on the packages it touches.
logged build go build ./...
logged vet go vet ./operator/v1/ ./features/
step "build ok"

# 4. The generated files in the patch are what openshift/api's generators
#    write: snapshot the patched tree in the index, run the generators the
#    patch needs in the order `make update` needs them (the payload feature
#    gates first: the CRD generator reads gate enablement from them), then
#    require no change at all. The per-group generators run for
#    operator.openshift.io/v1 only (the one group the patch touches); OpenAPI
#    is multi-group and runs for everything, as AGENTS.md requires.
# (Staging touches only API_DIR's index, which is a scratch checkout.)
git add -A
build_codegen
export CODEGEN="$codegen"
# Protobuf needs protoc, and no package the patch touches has protobuf.
export PROTO_OPTIONAL=1
logged gen-featuregates hack/update-payload-featuregates.sh
API_GROUP_VERSIONS=operator.openshift.io/v1 logged gen-codegen hack/update-codegen.sh
logged gen-openapi hack/update-openapi.sh
logged gen-payload-crds hack/update-payload-crds.sh
if ! git diff --quiet || [ -n "$(git ls-files --others --exclude-standard)" ]; then
	git status --short | head -20 >&2
	git diff | head -60 >&2
	fail "the generators change the patched tree: the patch's generated files are stale"
fi
# openshift/api's own verifiers for what the patch adds: the CRD schema checker
# (no new API violations against $base) and every feature-gated CRD variant
# having its test suite.
COMPARISON_BASE="$base" API_GROUP_VERSIONS=operator.openshift.io/v1 logged verify-crd-schema hack/verify-crd-schema-checker.sh
logged verify-integration-tests env API_GROUP_VERSION_PATHS=operator/v1 hack/verify-integration-tests.sh
step "generated files are what the generators write"

# 5. openshift/api's unit tests for the packages the patch touches.
logged unit go test -count=1 ./operator/v1/... ./features/...
units="$(grep -cE '^ok[[:space:]]' "$logs/unit.log" || true)"
[ "$units" -gt 0 ] || fail "no unit test package ran"
step "unit tests ok ($units packages)"

# 6. The integration suite for networks.operator.openshift.io, by
#    openshift/api's own harness (tests/hack/test.sh: vendored ginkgo, envtest),
#    against a real kube-apiserver and etcd: every feature-set variant of the
#    Network CRD that a test file's featureGates select, so the patch's
#    KubernetesNMState.yaml runs against the TechPreviewNoUpgrade,
#    DevPreviewNoUpgrade and CustomNoUpgrade CRDs and proves the CEL rules, and
#    -KubernetesNMState.yaml proves Default and OKD prune the field.
#    openshift/api pins envtest 1.32; this runs 1.36, whose messages differ for
#    some of the suite's existing expectedErrors (CEL errors on a string field
#    now show the value, not "string"). So the suite also ran on the pristine
#    checkout before the patch (step 1b): every KubernetesNMState spec must
#    pass, and the patch must not add a failure to those of the pristine tree.
run_integration patched
read -r passed failed ours_passed ours < <(summarize patched)
if grep -F -e '[FeatureGate=KubernetesNMState]' -e '[FeatureGate=-KubernetesNMState]' "$logs/patched.failed" >&2; then
	fail "KubernetesNMState integration specs failed (log: $logs/patched.log)"
fi
[ "$ours" -gt 0 ] && [ "$ours_passed" -eq "$ours" ] || fail "$ours_passed of $ours KubernetesNMState integration specs passed"
if comm -13 "$logs/pristine.failed" "$logs/patched.failed" | grep . >&2; then
	fail "the patch makes integration specs fail that pass on the pristine tree (log: $logs/patched.log)"
fi
step "integration suite ok: $passed specs passed ($ours_passed of them KubernetesNMState), $failed failing as on the pristine tree"

# 7. manifests/ carries the same spec.kubernetesNMState as the patched
#    openshift/api, in the same feature sets.
cd "$root"
out="$(go run ./hack/openshift-api/schemacheck -api "$api" -manifests manifests)" || fail "schema out of sync"
echo "$out"
sets="$(echo "$out" | sed -nE 's/.*in sync for ([0-9]+) feature sets.*/\1/p')"

# 8. The CEL rules work in this project's own CRDs too (whose other fields come
#    from the openshift/api version this project pins): the KubernetesNMState
#    test files of the patch, run by the same harness against manifests/ put in
#    place of the patched openshift/api's Network CRDs, then put back.
crds=operator/v1/zz_generated.crd-manifests
for set in Default TechPreviewNoUpgrade DevPreviewNoUpgrade CustomNoUpgrade OKD; do
	cp "manifests/0000_70_network_01_networks-$set.crd.yaml" "$api/$crds/"
done
(
	cd "$api/tests"
	GINKGO_ARGS="-r -v --keep-going --timeout=60m --skip-package=eval --no-color" \
		GINKGO_EXTRA_ARGS="--focus=FeatureGate=-?KubernetesNMState\\] --json-report=$logs/manifests.json" \
		./hack/test.sh
) >"$logs/manifests.log" 2>&1 || true
(cd "$api" && git checkout -q -- "$crds")
[ -s "$logs/manifests.json" ] || { tail -n 40 "$logs/manifests.log" >&2; fail "the suite against manifests/ did not run"; }
read -r m_passed m_failed m_ours_passed m_ours < <(summarize manifests)
[ "$m_failed" -eq 0 ] && [ "$m_ours" -gt 0 ] && [ "$m_ours_passed" -eq "$m_ours" ] || {
	cat "$logs/manifests.failed" >&2
	fail "the KubernetesNMState specs against manifests/: $m_ours_passed of $m_ours passed (log: $logs/manifests.log)"
}
step "the $m_ours KubernetesNMState specs pass against manifests/ too"

rm -rf "$logs"
echo "openshift-api-check: PASS (patch applied, build ok, generated files in sync, $units unit pkgs ok, $passed integration specs ok ($ours_passed KubernetesNMState; $failed pre-existing failures under Kubernetes 1.36, as on the pristine tree), schema in sync for $sets feature sets, $m_ours specs ok against manifests/)"
