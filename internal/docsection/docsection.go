// Package docsection writes the generated sections of the docs: the figures
// a run measured (make bench, hack/cno-e2e.sh), between two marker lines, so
// the doc shows exactly what the run wrote, and checks that a doc's section
// has the shape its generator writes.
package docsection

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Markers are the two lines a generated section lies between.
type Markers struct{ Begin, End string }

// Write replaces the generated section of the doc at path with section,
// which includes the markers.
func (m Markers) Write(path, section string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	before, after, err := m.Split(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	out := append(append(append([]byte{}, before...), section...), after...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Split returns what comes before the section's first marker line and what
// follows its last.
func (m Markers) Split(doc []byte) (before, after []byte, err error) {
	begin := []byte(m.Begin + "\n")
	end := []byte(m.End + "\n")
	if bytes.Count(doc, begin) != 1 || bytes.Count(doc, end) != 1 {
		return nil, nil, fmt.Errorf("want the lines %q and %q once each, around the generated section", m.Begin, m.End)
	}
	i, j := bytes.Index(doc, begin), bytes.Index(doc, end)
	if j < i {
		return nil, nil, fmt.Errorf("%q comes before %q", m.End, m.Begin)
	}
	return doc[:i], doc[j+len(end):], nil
}

// Section returns the doc's generated section, markers included.
func (m Markers) Section(doc []byte) (string, error) {
	before, after, err := m.Split(doc)
	if err != nil {
		return "", err
	}
	return string(doc[len(before) : len(doc)-len(after)]), nil
}

// figure is a number, or a list of them separated by ", ", whose length
// is a figure too.
var figure = regexp.MustCompile(`-?[0-9]+(?:[.,][0-9]+)*(?:, -?[0-9]+(?:[.,][0-9]+)*)*`)

// SameButFigures compares got with want line by line, every figure (a
// number, or a list of numbers) read as "#": the figures vary from run to
// run, the rest is what the generator writes. It returns "" when they
// match, or the first line that differs.
func SameButFigures(got, want string) string {
	g := strings.Split(figure.ReplaceAllString(got, "#"), "\n")
	w := strings.Split(figure.ReplaceAllString(want, "#"), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d (figures as #) is\n  %s\nwhere the generator writes\n  %s", i+1, gl, wl)
		}
	}
	return ""
}
