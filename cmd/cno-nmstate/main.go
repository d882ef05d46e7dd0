// Command cno-nmstate runs the kubernetes-nmstate plugin of the Cluster
// Network Operator outside CNO: render prints what it would deploy, run hosts
// it against a cluster, demo shows it on an embedded one, migrate prints the
// command that carries a standalone operator's settings over.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
)

// command is a subcommand; run returns flag.ErrHelp after printing its help,
// a usageError for a mistake on the command line, any other error for a
// failure while running.
type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) error
}

var commands = []command{
	{"render", renderSummary, renderCmd},
	{"run", runSummary, runCmd},
	{"demo", demoSummary, demoCmd},
	{"migrate", migrateSummary, migrateCmd},
	{"version", versionSummary, versionCmd},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run returns the exit code: 0, 1 when the command failed, 2 when it was
// called wrongly, as Go's flag package and most Unix tools do.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		printUsage(stdout)
		return 0
	case "demo":
		// The simulated cluster's pods have addresses only its own network
		// namespace reaches; its API server is forwarded out for kubectl.
		if code, reexeced := devcluster.RunIsolated(true); reexeced {
			return code
		}
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		var usage usageError
		switch err := c.run(args[1:], stdout, stderr); {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &usage):
			fmt.Fprintf(stderr, "cno-nmstate %s: %v\nrun 'cno-nmstate %s -h' for its flags\n", c.name, err, c.name)
			return 2
		default:
			fmt.Fprintf(stderr, "cno-nmstate %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "cno-nmstate: unknown command %q\n\n", args[0])
	printUsage(stderr)
	return 2
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, "usage: cno-nmstate <command> [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, strings.ReplaceAll(c.summary, "\n", "\n           "))
	}
	fmt.Fprint(w, "\nrun 'cno-nmstate <command> -h' for a command's flags\n")
}
