# cno-nmstate: see README.md. `make test` is the one test command; `make demo`
# runs the plugin against an embedded control plane.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

GO          ?= go
BIN         := $(CURDIR)/bin
TOOLS_DIR   := hack/tools
# The control plane runs the Kubernetes minor CNO's go.mod uses (k8s.io/* v0.36).
KUBE_VERSION := v1.36.2
KUBE_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=36 \
	-X k8s.io/client-go/pkg/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/client-go/pkg/version.gitMajor=1 \
	-X k8s.io/client-go/pkg/version.gitMinor=36
TOOL_BUILD  := cd $(TOOLS_DIR) && CGO_ENABLED=0 $(GO) build -trimpath
# controller-gen and the nmstate API it reads: a module of their own (see its tools.go).
CODEGEN_DIR := $(TOOLS_DIR)/codegen

# kwok, the simulated nodes' kubelets: a module of its own (see its tools.go).
KWOK_DIR    := $(TOOLS_DIR)/kwok
# The PrometheusRule checker, on Prometheus' own parser: a module of its own
# (see its main.go) so that github.com/prometheus/prometheus stays out of the
# library's go.mod.
PROMRULES_DIR := hack/promrules

CONTROLLER_GEN := $(BIN)/controller-gen
KUBE_APISERVER := $(BIN)/kube-apiserver
ETCD           := $(BIN)/etcd
KUBECTL        := $(BIN)/kubectl
KUBE_CONTROLLER_MANAGER := $(BIN)/kube-controller-manager
KUBE_SCHEDULER := $(BIN)/kube-scheduler
KWOK           := $(BIN)/kwok
# Upstream kubernetes-nmstate's own binaries (hack/build-nmstate.sh).
NMSTATE_HANDLER := $(BIN)/kubernetes-nmstate-handler
NMSTATE_OPERATOR := $(BIN)/kubernetes-nmstate-operator
PROMRULES      := $(BIN)/promrules
# What the demo and the tests run: the control plane, its controllers, the
# simulated nodes and the operands.
CLUSTER_TOOLS := $(KUBE_APISERVER) $(ETCD) $(KUBECTL) $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(KWOK) $(NMSTATE_HANDLER)
TOOLS := $(CONTROLLER_GEN) $(CLUSTER_TOOLS) $(NMSTATE_OPERATOR) $(PROMRULES)

# envtest finds kube-apiserver, etcd and kubectl here.
export KUBEBUILDER_ASSETS := $(BIN)

.PHONY: all build test unit generate verify bench demo tools clean mutation

all: build

# Each tool is rebuilt only when the tools module changes; Go's build cache makes
# a rebuild after a module bump cheap for whatever did not change.
tools: $(TOOLS)

$(CONTROLLER_GEN): $(CODEGEN_DIR)/go.mod $(CODEGEN_DIR)/go.sum
	cd $(CODEGEN_DIR) && CGO_ENABLED=0 $(GO) build -trimpath -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen

$(ETCD): $(TOOLS_DIR)/go.mod $(TOOLS_DIR)/go.sum
	$(TOOL_BUILD) -o $@ go.etcd.io/etcd/server/v3

$(KUBE_APISERVER): $(TOOLS_DIR)/go.mod $(TOOLS_DIR)/go.sum
	$(TOOL_BUILD) -ldflags "$(KUBE_LDFLAGS)" -o $@ k8s.io/kubernetes/cmd/kube-apiserver

$(KUBECTL): $(TOOLS_DIR)/go.mod $(TOOLS_DIR)/go.sum
	$(TOOL_BUILD) -ldflags "$(KUBE_LDFLAGS)" -o $@ k8s.io/kubernetes/cmd/kubectl

$(KUBE_CONTROLLER_MANAGER): $(TOOLS_DIR)/go.mod $(TOOLS_DIR)/go.sum
	$(TOOL_BUILD) -ldflags "$(KUBE_LDFLAGS)" -o $@ k8s.io/kubernetes/cmd/kube-controller-manager

$(KUBE_SCHEDULER): $(TOOLS_DIR)/go.mod $(TOOLS_DIR)/go.sum
	$(TOOL_BUILD) -ldflags "$(KUBE_LDFLAGS)" -o $@ k8s.io/kubernetes/cmd/kube-scheduler

$(KWOK): $(KWOK_DIR)/go.mod $(KWOK_DIR)/go.sum
	cd $(KWOK_DIR) && CGO_ENABLED=0 $(GO) build -trimpath -o $@ sigs.k8s.io/kwok/cmd/kwok

$(PROMRULES): $(PROMRULES_DIR)/go.mod $(PROMRULES_DIR)/go.sum $(PROMRULES_DIR)/main.go
	cd $(PROMRULES_DIR) && CGO_ENABLED=0 $(GO) build -trimpath -o $@ .

# Both come from one build of upstream's module; the script pins its hash,
# bindata/kubernetes-nmstate-version its release, and hack/tools/nmstate/go.sum
# every module hash of that build.
$(NMSTATE_HANDLER) $(NMSTATE_OPERATOR) &: hack/build-nmstate.sh bindata/kubernetes-nmstate-version $(TOOLS_DIR)/nmstate/go.sum
	GO=$(GO) hack/build-nmstate.sh $(BIN)

build:
	$(GO) build -o $(BIN)/cno-nmstate ./cmd/cno-nmstate

# The one test command: unit tests (the rule checker's too; cmd/cno-nmstate
# runs it on the rendered PrometheusRule), then the end-to-end tests against
# a real kube-apiserver and etcd that `make tools` builds.
test: tools
	$(GO) test -count=1 -timeout 5m $$($(GO) list ./... | grep -v /test/e2e)
	cd $(PROMRULES_DIR) && $(GO) test -count=1 ./...
	$(GO) test -count=1 -timeout 30m ./test/e2e/
	hack/fuzz.sh

# Unit tests only: no control plane needed.
unit:
	$(GO) test -count=1 ./pkg/...

# The main job on an embedded default: a control plane with its controllers
# and kwok nodes, a sample bare-metal cluster, the plugin host, upstream's
# handler and webhook. `make demo ARGS=--keep` keeps it running.
demo: $(CLUSTER_TOOLS) build
	$(BIN)/cno-nmstate demo -assets $(BIN) $(ARGS)

generate: $(CONTROLLER_GEN)
	CONTROLLER_GEN=$(CONTROLLER_GEN) hack/generate.sh .

# Fails when a generated file differs from what `make generate` writes, when
# a file is not gofmt-clean, or when go vet complains.
verify: $(CONTROLLER_GEN)
	@out=$$(gofmt -l $$(git ls-files '*.go' ; git ls-files --others --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	CONTROLLER_GEN=$(CONTROLLER_GEN) hack/generate.sh "$$tmp"; \
	status=0; \
	for f in $$(cd "$$tmp" && find . -type f | sort); do \
		if ! diff -u "$$f" "$$tmp/$$f" >/dev/null 2>&1; then \
			echo "generated file out of date: $$f (run make generate)"; status=1; fi; \
	done; \
	exit $$status
	$(GO) mod tidy -diff
	cd $(PROMRULES_DIR) && $(GO) vet ./... && $(GO) mod tidy -diff
	cd $(TOOLS_DIR)/monitoring && $(GO) mod tidy -diff

# Go benchmarks, then the budget driver against a real kube-apiserver and
# etcd; it ends with its summary lines and writes its figures into
# docs/resource-budget.md's generated section (see there why it writes
# rather than checks).
bench: tools
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...
	$(GO) run ./test/bench -assets $(BIN) -write-doc docs/resource-budget.md

# Mutation testing: gremlins' default mutators on pkg/nmstate against its unit
# tests, then hand-made mutants of pkg/controller against the e2e tests; it
# ends with the summary lines hack/mutation.sh describes. gremlins is
# built into bin/ from hack/tools/mutation, a module of its own (see its
# tools.go), and rebuilt only when that module changes.
mutation: tools
	@if [ ! -x $(BIN)/gremlins ] || [ $(TOOLS_DIR)/mutation/go.mod -nt $(BIN)/gremlins ] || [ $(TOOLS_DIR)/mutation/go.sum -nt $(BIN)/gremlins ]; then \
		echo "building $(BIN)/gremlins"; \
		cd $(TOOLS_DIR)/mutation && CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/gremlins github.com/go-gremlins/gremlins/cmd/gremlins; \
	fi
	GREMLINS=$(BIN)/gremlins hack/mutation.sh

clean:
	rm -rf $(BIN)
