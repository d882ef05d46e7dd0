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

// Every code block of docs/cno-integration.md except the shell ones is a
// verbatim excerpt of the CNO patch's new text (added and context lines), so
// the document cannot describe code the patch does not have.
func TestCNOIntegrationDocMatchesPatch(t *testing.T) {
	patch, err := os.ReadFile("../../hack/cno/kubernetes-nmstate.patch")
	require.NoError(t, err)
	var post []string
	for _, line := range strings.Split(string(patch), "\n") {
		if strings.HasPrefix(line, "+++") || line == "" {
			continue
		}
		if line[0] == '+' || line[0] == ' ' {
			post = append(post, strings.TrimRight(line[1:], " \t"))
		}
	}
	doc, err := os.ReadFile("../../docs/cno-integration.md")
	require.NoError(t, err)
	blocks := 0
	var block []string
	inBlock := false
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case !inBlock && line == "```go":
			inBlock, block = true, nil
		case inBlock && line == "```":
			inBlock = false
			blocks++
			assert.True(t, containsRun(post, block), "a ```go block of docs/cno-integration.md is not in hack/cno/kubernetes-nmstate.patch:\n%s", strings.Join(block, "\n"))
		case inBlock:
			block = append(block, strings.TrimRight(line, " \t"))
		}
	}
	assert.GreaterOrEqual(t, blocks, 8, "the document's go blocks")
}

func containsRun(lines, run []string) bool {
	for i := 0; i+len(run) <= len(lines); i++ {
		match := true
		for j := range run {
			if lines[i+j] != run[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
