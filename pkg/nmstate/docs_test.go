package nmstate_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sourceFiles parses the package's own source, its tests left out.
func sourceFiles(t *testing.T) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var files []*ast.File
	for _, entry := range entries {
		if !strings.HasSuffix(entry.Name(), ".go") || strings.HasSuffix(entry.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, entry.Name(), nil, 0)
		require.NoError(t, err)
		files = append(files, file)
	}
	require.NotEmpty(t, files)
	return files
}

// reasonConstants returns every exported Reason* string constant of the
// package, name to value, so that a new reason cannot be added without this
// test noticing.
func reasonConstants(t *testing.T) map[string]string {
	t.Helper()
	reasons := map[string]string{}
	for _, file := range sourceFiles(t) {
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

// exportedNames are the package's exported top-level names and the exported
// methods of its exported types, as Type.Method.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, file := range sourceFiles(t) {
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				switch {
				case !d.Name.IsExported():
				case d.Recv == nil:
					names[d.Name.Name] = true
				default:
					recv := d.Recv.List[0].Type
					if star, ok := recv.(*ast.StarExpr); ok {
						recv = star.X
					}
					if typ := recv.(*ast.Ident).Name; ast.IsExported(typ) {
						names[typ+"."+d.Name.Name] = true
					}
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						if spec.Name.IsExported() {
							names[spec.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, name := range spec.Names {
							if name.IsExported() {
								names[name.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return names
}

// What the package exports becomes API once CNO vendors it: every exported
// name has its line in docs/cno-integration.md's list, and the list names
// nothing the package no longer exports.
func TestExportedNamesListed(t *testing.T) {
	doc, err := os.ReadFile("../../docs/cno-integration.md")
	require.NoError(t, err)
	_, section, found := strings.Cut(string(doc), "\n## The library's API: what `pkg/nmstate` exports\n")
	require.True(t, found, "docs/cno-integration.md has no section listing the exported names")
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		names, _, ok := strings.Cut(strings.TrimPrefix(line, "- "), ": ")
		if !strings.HasPrefix(line, "- ") || !ok {
			continue
		}
		for _, name := range strings.Split(names, ", ") {
			listed[strings.Trim(name, "`")] = true
		}
	}
	exported := exportedNames(t)
	require.Greater(t, len(exported), 40, "the parser found too few exported names")
	for name := range exported {
		assert.True(t, listed[name], "pkg/nmstate exports %s, which docs/cno-integration.md's API list does not name", name)
	}
	for name := range listed {
		assert.True(t, exported[name], "docs/cno-integration.md's API list names %s, which pkg/nmstate does not export", name)
	}
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

// Inside the package, names flow one way: from the files that define the
// basic types up to the files that use them, so that a reader can start at
// the bottom. A file that uses a name of a file that uses one of its own
// closes a circle, which this test names.
func TestNamesFlowOneWay(t *testing.T) {
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	definedIn := map[string]string{}
	for _, entry := range entries {
		if !strings.HasSuffix(entry.Name(), ".go") || strings.HasSuffix(entry.Name(), "_test.go") {
			continue
		}
		// With object resolution: a name declared in the file itself, a
		// local one included, resolves; one of another file does not.
		file, err := parser.ParseFile(fset, entry.Name(), nil, 0)
		require.NoError(t, err)
		files[entry.Name()] = file
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					definedIn[d.Name.Name] = entry.Name()
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						definedIn[spec.Name.Name] = entry.Name()
					case *ast.ValueSpec:
						for _, name := range spec.Names {
							definedIn[name.Name] = entry.Name()
						}
					}
				}
			}
		}
	}
	uses := map[string]map[string]string{} // file -> file it uses -> a name it uses
	for name, file := range files {
		uses[name] = map[string]string{}
		skip := map[*ast.Ident]bool{}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				skip[n.Sel] = true // a field or method, or another package's name
			case *ast.KeyValueExpr:
				if key, ok := n.Key.(*ast.Ident); ok {
					skip[key] = true // a field name in a composite literal
				}
			case *ast.Ident:
				if other, ok := definedIn[n.Name]; ok && other != name && n.Obj == nil && !skip[n] {
					uses[name][other] = n.Name
				}
			}
			return true
		})
	}
	// A depth-first walk: a file met again while still on the path closes a
	// circle.
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var walk func(file string)
	walk = func(file string) {
		state[file] = onPath
		path = append(path, file)
		for next := range uses[file] {
			switch state[next] {
			case onPath:
				i := slices.Index(path, next)
				var steps []string
				for j, f := range append(path[i:], next)[1:] {
					from := path[i+j]
					steps = append(steps, fmt.Sprintf("%s uses %s of %s", from, uses[from][f], f))
				}
				t.Errorf("names must flow one way: %s", strings.Join(steps, ", "))
			case unseen:
				walk(next)
			}
		}
		path = path[:len(path)-1]
		state[file] = done
	}
	for file := range uses {
		if state[file] == unseen {
			walk(file)
		}
	}
	assert.NotEmpty(t, uses["nmstate.go"], "the parser found no use of another file's names")
}
