package docsection

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var m = Markers{Begin: "<!-- begin -->", End: "<!-- end -->"}

func TestWriteReplacesOnlyItsSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	require.NoError(t, os.WriteFile(path, []byte("# before\n"+m.Begin+"\nold figures\n"+m.End+"\nafter\n"), 0o600))
	require.NoError(t, m.Write(path, m.Begin+"\nnew figures\n"+m.End+"\n"))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "# before\n"+m.Begin+"\nnew figures\n"+m.End+"\nafter\n", string(got))
	section, err := m.Section(got)
	require.NoError(t, err)
	assert.Equal(t, m.Begin+"\nnew figures\n"+m.End+"\n", section)
}

func TestSplitNeedsBothMarkers(t *testing.T) {
	for name, doc := range map[string]string{
		"none":      "# doc\n",
		"no end":    m.Begin + "\n",
		"reversed":  m.End + "\n" + m.Begin + "\n",
		"two begin": m.Begin + "\n" + m.Begin + "\n" + m.End + "\n",
	} {
		_, _, err := m.Split([]byte(doc))
		assert.Error(t, err, "%s: Split accepted %q", name, doc)
	}
}

func TestSameButFigures(t *testing.T) {
	assert.Empty(t, SameButFigures("took 12.5 s, 3 requests\n", "took 0 s, 1,024 requests\n"))
	diff := SameButFigures("took 12.5 s\nby hand\n", "took 1 s\nas written\n")
	assert.True(t, strings.HasPrefix(diff, "line 2 "), diff)
	assert.NotEmpty(t, SameButFigures("a\n", "a\nb\n"), "a line missing")
	assert.Empty(t, SameButFigures("tried at 0.0, 20.5, 49.2 s\n", "tried at 0.0, 1.0 s\n"), "a list of figures of another length")
	assert.NotEmpty(t, SameButFigures("tried at 0.0, then 20.5 s\n", "tried at 0.0, 1.0 s\n"), "words between figures")
}
