// Package cnoe2e runs the real Cluster Network Operator, with
// hack/cno/kubernetes-nmstate.patch applied, as the host of kubernetes-nmstate
// in the dev cluster, and the scenarios of issue 19 against it.
//
// Its tests carry the build tag cnoe2e and need the CNO binaries and tree
// that hack/cno-e2e.sh builds from a fetched CNO checkout (CI has none), so
// `make test` and `go test ./...` leave them out. Run them with
//
//	hack/cno-e2e.sh CNO_DIR
//
// which sets CNO_E2E_PATCHED, CNO_E2E_PRISTINE and CNO_E2E_TREE.
package cnoe2e
