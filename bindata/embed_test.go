package bindata

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Dir holds every embedded file, byte for byte, and is written once.
func TestDir(t *testing.T) {
	d1, err := Dir()
	require.NoError(t, err)
	d2, err := Dir()
	require.NoError(t, err)
	assert.Equal(t, d1, d2, "written once per process")
	count := 0
	require.NoError(t, fs.WalkDir(FS, ".", func(path string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			return nil
		}
		want, err := FS.ReadFile(path)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(d1, path))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), path)
		count++
		return nil
	}))
	assert.GreaterOrEqual(t, count, 11, "the kubernetes-nmstate manifests")
}

// The release is a version tag: it names a module version of upstream's.
func TestKubernetesNMStateVersion(t *testing.T) {
	assert.Regexp(t, `^v[0-9]+\.[0-9]+\.[0-9]+$`, KubernetesNMStateVersion)
}
