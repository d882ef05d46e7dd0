#!/usr/bin/env bash
# Builds upstream kubernetes-nmstate's two binaries from the Go module proxy:
#
#   OUT_DIR/kubernetes-nmstate-handler   ./cmd/handler  (upstream ships it as
#       `manager` in its handler image; handler, webhook or metrics manager
#       depending on its environment)
#   OUT_DIR/kubernetes-nmstate-operator  ./cmd/operator (the standalone operator)
#
# Usage: hack/build-nmstate.sh OUT_DIR
#        hack/build-nmstate.sh --update-sum   (rewrites hack/tools/nmstate/go.sum)
#
# The module zip of NMSTATE_VERSION lacks ./api, which its go.mod replaces with
# `=> ./api`, and the proxy does not serve the api pseudo-version of that
# commit. NMSTATE_API_VERSION is the nearest one it serves; its api/ differs
# from NMSTATE_VERSION's only by a doc comment and dependency bumps in
# api/go.mod. The module is copied into a temporary directory, the replace is
# pointed at NMSTATE_API_VERSION, and `go mod tidy` applies the resulting
# requirement bumps to go.mod. Every module hash comes from
# hack/tools/nmstate/go.sum: the build fails if tidy would change it, and the
# binaries are built with -mod=readonly.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)

# Where the versions are pinned (the Makefile rebuilds when this file,
# hack/tools/nmstate/* or bindata/kubernetes-nmstate-version changes). The
# release is the one the templates follow, recorded beside them, where
# `cno-nmstate version` reads it too; the hash and the api pseudo-version
# below belong to that release.
NMSTATE_MODULE=github.com/nmstate/kubernetes-nmstate
NMSTATE_VERSION=$(tr -d '[:space:]' <"$ROOT/bindata/kubernetes-nmstate-version")
NMSTATE_SUM=h1:p6YmPV/kFpz9q+5EQ2TzE47bw90EQrJkbPcN2vDrduU=
NMSTATE_API_VERSION=v0.0.0-20260707144101-8853341855d6

GO=${GO:-go}
PINNED_SUM=$ROOT/hack/tools/nmstate/go.sum

update_sum=false
case "${1:-}" in
  --update-sum) update_sum=true ;;
  ""|-*) echo "usage: $0 OUT_DIR | --update-sum" >&2; exit 2 ;;
  *) mkdir -p "$1"; OUT_DIR=$(cd "$1" && pwd) ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/build-nmstate.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# Download outside any module (so no go.mod or go.sum of ours is touched);
# the go command checks the zip against the checksum database, and we check
# it against the pinned hash.
info=$(cd "$tmp" && GOFLAGS=-mod=mod "$GO" mod download -json "$NMSTATE_MODULE@$NMSTATE_VERSION")
sum=$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",*$/\1/p' <<<"$info")
dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p' <<<"$info")
if [[ "$sum" != "$NMSTATE_SUM" ]]; then
  echo "$NMSTATE_MODULE@$NMSTATE_VERSION: hash $sum, pinned $NMSTATE_SUM" >&2
  exit 1
fi

src=$tmp/src
cp -R "$dir" "$src"
chmod -R u+w "$src"
cd "$src"
"$GO" mod edit -replace "$NMSTATE_MODULE/api=$NMSTATE_MODULE/api@$NMSTATE_API_VERSION"

if $update_sum; then
  "$GO" mod tidy
  mkdir -p "$(dirname "$PINNED_SUM")"
  cp go.sum "$PINNED_SUM"
  echo "wrote $PINNED_SUM"
  exit 0
fi

cp "$PINNED_SUM" go.sum
"$GO" mod tidy
if ! cmp -s go.sum "$PINNED_SUM"; then
  echo "go mod tidy changed the pinned go.sum (run $0 --update-sum and review):" >&2
  diff -u "$PINNED_SUM" go.sum >&2 || true
  exit 1
fi

export CGO_ENABLED=0
"$GO" build -mod=readonly -trimpath -buildvcs=false -o "$OUT_DIR/kubernetes-nmstate-handler" ./cmd/handler
"$GO" build -mod=readonly -trimpath -buildvcs=false -o "$OUT_DIR/kubernetes-nmstate-operator" ./cmd/operator
