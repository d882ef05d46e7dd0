package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cno-nmstate/cno-nmstate/internal/hint"
)

// usageError is a mistake on the command line (an unknown or malformed flag,
// a bad flag value, an unexpected argument): exit code 2, where a failure
// while running exits 1.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// newFlagSet is a command's flags. Parse reports errors instead of printing
// them, so that main prints each once, with the command's name.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses a command's arguments, which are flags only. On -h or
// --help it prints the command's usage on stdout and returns flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, summary string, args []string, stdout io.Writer) error {
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "usage: cno-nmstate %s [flags]\n\n%s\n", fs.Name(), summary)
		if hasFlags(fs) {
			fmt.Fprint(stdout, "\nflags:\n")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
		}
		return err
	case err != nil:
		return usageError{err}
	case fs.NArg() > 0:
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	return nil
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// oneOf refuses a flag value that is not one of valid, with the same
// did-you-mean as the API gives for its fields.
func oneOf[T ~string](flagName, value string, valid []T) error {
	names := make([]string, len(valid))
	for i, v := range valid {
		if string(v) == value {
			return nil
		}
		names[i] = string(v)
	}
	return usageErrorf("-%s %q is not valid%s; valid values are %s", flagName, value, hint.Case(value, valid), strings.Join(names, ", "))
}
