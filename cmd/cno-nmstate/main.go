// Command cno-nmstate runs the kubernetes-nmstate plugin of the Cluster
// Network Operator outside CNO: render prints what it would deploy.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
)

const usage = `usage: cno-nmstate <command> [flags]

commands:
  render   print the decision (stderr) and the rendered objects (stdout, YAML)
  run      run the plugin host against a cluster (-kubeconfig)
  demo     start an embedded control plane with simulated nodes, a sample
           bare-metal cluster and the host, run upstream's handler and
           webhook, and show the decision, rollout, policy and conditions

run 'cno-nmstate <command> -h' for a command's flags
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "render":
		err = renderCmd(args[1:], stdout, stderr)
	case "run":
		err = runCmd(args[1:], stderr)
	case "demo":
		// The simulated cluster's pods have addresses only its own network
		// namespace reaches; its API server is forwarded out for kubectl.
		if code, reexeced := devcluster.RunIsolated(true); reexeced {
			return code
		}
		err = demoCmd(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "cno-nmstate: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "cno-nmstate %s: %v\n", args[0], err)
		return 1
	}
	return 0
}
