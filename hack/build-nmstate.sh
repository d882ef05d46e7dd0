#!/usr/bin/env bash
# Builds upstream kubernetes-nmstate's own binaries from its Go module, at the
# version the templates in bindata/ follow, into OUT_DIR:
#   kubernetes-nmstate-handler   cmd/handler (the image's "manager": handler,
#                                webhook or metrics manager by environment)
#   kubernetes-nmstate-operator  cmd/operator (the standalone OLM operator)
#
# The module's zip lacks ./api, which its go.mod replaces with that local
# path (./api is a module of its own, so the zip leaves it out). The proxy does
# not serve the api module at the v0.86.0 commit; the build takes the served
# pseudo-version below instead, whose api/ differs from v0.86.0's only by one
# doc comment (api/shared/nodenetworkconfigurationpolicy_types.go) and its own
# dependency bumps. Everything is fetched through the Go module proxy and
# checked against the checksum database; nothing of upstream's is kept here.
set -euo pipefail

NMSTATE_VERSION=v0.86.0
NMSTATE_API_VERSION=v0.0.0-20260707144101-8853341855d6

out=$(mkdir -p "$1" && cd "$1" && pwd)
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT

cd "$work"
go mod download "github.com/nmstate/kubernetes-nmstate@$NMSTATE_VERSION"
src="$(go env GOMODCACHE)/github.com/nmstate/kubernetes-nmstate@$NMSTATE_VERSION"
cp -r "$src/." module
chmod -R u+w module
cd module
go mod edit -replace "github.com/nmstate/kubernetes-nmstate/api=github.com/nmstate/kubernetes-nmstate/api@$NMSTATE_API_VERSION"
export CGO_ENABLED=0
go build -mod=mod -trimpath -o "$out/kubernetes-nmstate-handler" ./cmd/handler
go build -mod=mod -trimpath -o "$out/kubernetes-nmstate-operator" ./cmd/operator
