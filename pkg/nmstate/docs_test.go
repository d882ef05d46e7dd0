package nmstate_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reasonConstants parses the package's source and returns every exported
// Reason* string constant, name to value, so that a new reason cannot be added
// without this test noticing.
func reasonConstants(t *testing.T) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	fset := token.NewFileSet()
	reasons := map[string]string{}
	for _, entry := range entries {
		if !strings.HasSuffix(entry.Name(), ".go") || strings.HasSuffix(entry.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, entry.Name(), nil, 0)
		require.NoError(t, err)
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !name.IsExported() || !strings.HasPrefix(name.Name, "Reason") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					require.True(t, ok && lit.Kind == token.STRING, "%s is not a string literal", name.Name)
					value, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					reasons[name.Name] = value
				}
			}
		}
	}
	return reasons
}

// Every reason the plugin can emit has its own section in
// docs/troubleshooting.md and a row in its table.
func TestTroubleshootingCoversEveryReason(t *testing.T) {
	reasons := reasonConstants(t)
	require.GreaterOrEqual(t, len(reasons), 16, "the parser found too few Reason constants: %v", reasons)
	data, err := os.ReadFile("../../docs/troubleshooting.md")
	require.NoError(t, err)
	doc := string(data)
	for name, value := range reasons {
		assert.Contains(t, doc, "\n### `"+value+"`\n", "docs/troubleshooting.md has no section for %s (%q)", name, value)
		assert.Contains(t, doc, "\n| `"+value+"` |", "docs/troubleshooting.md's table has no row for %s (%q)", name, value)
	}
}
