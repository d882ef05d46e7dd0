// Command fsproxy writes a file-system GOPROXY (the layout of
// https://go.dev/ref/mod#goproxy-protocol) holding the given module versions,
// each zipped from a local git repository at the commit its pseudo-version
// names. The Go module proxy refuses a few of the exact pseudo-versions CNO
// requires; zipped with golang.org/x/mod/zip from the same commit, they hash
// to what CNO's go.sum records, so `go mod tidy` and `go mod vendor` verify
// them as usual.
//
// A snapshot may lack the content of its largest files. -fill names a
// directory with the same module at another version (from the module proxy);
// a missing file is taken from there only when its git blob hash is the one
// the commit records, so the zip is still exactly that commit's.
//
//	fsproxy -out DIR [-fill MODULE_DIR ...] MODULE@VERSION=GITDIR ...
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func main() {
	out := flag.String("out", "", "directory to write the proxy into")
	flag.Func("fill", "a directory holding the module at another version, to take missing blobs from (repeatable)", func(dir string) error {
		fillDirs = append(fillDirs, dir)
		return nil
	})
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: fsproxy -out DIR MODULE@VERSION=GITDIR ...")
		os.Exit(2)
	}
	for _, arg := range flag.Args() {
		if err := add(*out, arg); err != nil {
			fmt.Fprintln(os.Stderr, "fsproxy:", err)
			os.Exit(1)
		}
	}
}

var fillDirs []string

func add(out, arg string) error {
	spec, gitDir, ok := strings.Cut(arg, "=")
	path, version, ok2 := strings.Cut(spec, "@")
	if !ok || !ok2 {
		return fmt.Errorf("%q is not MODULE@VERSION=GITDIR", arg)
	}
	if !module.IsPseudoVersion(version) {
		return fmt.Errorf("%s: only pseudo-versions are supported", spec)
	}
	rev, err := module.PseudoVersionRev(version)
	if err != nil {
		return fmt.Errorf("%s: %w", spec, err)
	}
	when, err := module.PseudoVersionTime(version)
	if err != nil {
		return fmt.Errorf("%s: %w", spec, err)
	}
	escaped, err := module.EscapePath(path)
	if err != nil {
		return fmt.Errorf("%s: %w", spec, err)
	}
	dir := filepath.Join(out, escaped, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}

	// x/mod/zip reads the files of a commit from a work tree of it.
	tree, err := os.MkdirTemp("", "fsproxy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tree)
	if err := fillMissingBlobs(gitDir, rev); err != nil {
		return fmt.Errorf("%s: %w", spec, err)
	}
	if err := git(gitDir, "--work-tree", tree, "checkout", rev, "--", "."); err != nil {
		return fmt.Errorf("%s: checking out %s from %s: %w", spec, rev, gitDir, err)
	}
	var zipped bytes.Buffer
	if err := zip.CreateFromDir(&zipped, module.Version{Path: path, Version: version}, tree); err != nil {
		return fmt.Errorf("%s: zipping: %w", spec, err)
	}
	goMod, err := os.ReadFile(filepath.Join(tree, "go.mod"))
	if err != nil {
		return fmt.Errorf("%s: %w", spec, err)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, when})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		version + ".zip":  zipped.Bytes(),
		version + ".mod":  goMod,
		version + ".info": info,
		"list":            []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("fsproxy: %s from %s at %s\n", spec, gitDir, rev)
	return nil
}

// fillMissingBlobs writes into gitDir every blob of rev that it lacks, from
// the first -fill directory whose file at the same path has that blob hash.
func fillMissingBlobs(gitDir, rev string) error {
	listing, err := gitOutput(gitDir, nil, "ls-tree", "-r", "--full-tree", rev)
	if err != nil {
		return fmt.Errorf("listing %s: %w", rev, err)
	}
	paths := map[string]string{} // blob -> path
	var blobs strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(listing), "\n") {
		meta, path, _ := strings.Cut(line, "\t")
		fields := strings.Fields(meta)
		if len(fields) == 3 && fields[1] == "blob" {
			paths[fields[2]] = path
			blobs.WriteString(fields[2] + "\n")
		}
	}
	checked, err := gitOutput(gitDir, strings.NewReader(blobs.String()), "cat-file", "--batch-check")
	if err != nil {
		return fmt.Errorf("checking the blobs of %s: %w", rev, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(checked), "\n") {
		blob, state, _ := strings.Cut(line, " ")
		if state != "missing" {
			continue
		}
		if err := fillBlob(gitDir, blob, paths[blob]); err != nil {
			return err
		}
	}
	return nil
}

func fillBlob(gitDir, blob, path string) error {
	for _, dir := range fillDirs {
		candidate := filepath.Join(dir, path)
		if _, err := os.Stat(candidate); err != nil {
			continue
		}
		hash, err := gitOutput(gitDir, nil, "hash-object", candidate)
		if err != nil || strings.TrimSpace(hash) != blob {
			continue
		}
		if _, err := gitOutput(gitDir, nil, "hash-object", "-w", candidate); err != nil {
			return fmt.Errorf("writing blob %s (%s): %w", blob, path, err)
		}
		fmt.Printf("fsproxy: %s (blob %s) taken from %s\n", path, blob[:12], dir)
		return nil
	}
	return fmt.Errorf("%s (blob %s) is missing from the snapshot and from every -fill directory", path, blob)
}

func git(gitDir string, args ...string) error {
	cmd := exec.Command("git", append([]string{"--git-dir", gitDir}, args...)...)
	cmd.Stderr = os.Stderr
	return cmd.Run()
}

func gitOutput(gitDir string, stdin *strings.Reader, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"--git-dir", gitDir}, args...)...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	return string(out), err
}
