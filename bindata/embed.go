// Package bindata carries the manifests in the binary, for the command line
// and the tests; CNO itself reads them from its image's /bindata directory.
package bindata

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FS holds network/kubernetes-nmstate/*.yaml.
//
//go:embed network
var FS embed.FS

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
