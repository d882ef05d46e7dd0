package bindata

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// TestTemplatesNumberedUniquely: CNO's renderer applies the templates in the
// order of their file names, so each carries its own number and a reader
// sees the order from the names alone.
func TestTemplatesNumberedUniquely(t *testing.T) {
	entries, err := FS.ReadDir("network/kubernetes-nmstate")
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	seen := map[string]string{}
	for i, e := range entries {
		number, _, ok := strings.Cut(e.Name(), "-")
		require.True(t, ok, "%s has no number prefix", e.Name())
		assert.Len(t, number, 3, "%s: the prefix is three digits", e.Name())
		assert.Empty(t, seen[number], "%s and %s share the number %s", seen[number], e.Name(), number)
		seen[number] = e.Name()
		assert.Equal(t, fmt.Sprintf("%03d", i), number, "%s: the numbers run from 000 without a gap", e.Name())
	}
}
