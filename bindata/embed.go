// Package bindata carries the manifests in the binary, for the command line
// and the tests; CNO itself reads them from its image's /bindata directory.
package bindata

import "embed"

// FS holds network/kubernetes-nmstate/*.yaml.
//
//go:embed network
var FS embed.FS
