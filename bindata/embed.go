// Package bindata carries the manifests in the binary, so that whoever
// renders them (CNO, the command line, the tests) renders exactly the
// templates of the module version it requires: they cannot drift from the
// code that fills them.
package bindata

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// FS holds network/kubernetes-nmstate/*.yaml.
//
//go:embed network
var FS embed.FS

//go:embed kubernetes-nmstate-version
var kubernetesNMStateVersion string

// KubernetesNMStateVersion is the upstream kubernetes-nmstate release the
// templates follow (its handler, webhook, RBAC and admission policy). The
// file it comes from is the one record of it: `cno-nmstate version` prints
// it, and hack/build-nmstate.sh builds that release's binaries for the
// tests.
var KubernetesNMStateVersion = strings.TrimSpace(kubernetesNMStateVersion)

// WriteTo copies the embedded manifests under dir, which then serves as the
// manifestDir of nmstate.Render: CNO's renderer reads files from disk.
func WriteTo(dir string) error {
	return fs.WalkDir(FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, path)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := FS.ReadFile(path)
		if err != nil {
			return fmt.Errorf("reading embedded %s: %w", path, err)
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", target, err)
		}
		return nil
	})
}

var (
	dirOnce sync.Once
	dir     string
	dirErr  error
)

// Dir returns a directory holding the embedded manifests, written once per
// process into a private temporary directory: CNO's template renderer reads
// files, not an fs.FS. Use it as the manifestDir of nmstate.Render.
func Dir() (string, error) {
	dirOnce.Do(func() {
		dir, dirErr = os.MkdirTemp("", "cno-nmstate-bindata-")
		if dirErr != nil {
			dirErr = fmt.Errorf("creating a directory for the kubernetes-nmstate manifests: %w", dirErr)
			return
		}
		dirErr = WriteTo(dir)
	})
	return dir, dirErr
}
