package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/cno-nmstate/cno-nmstate/bindata"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const versionSummary = "print the versions of this command, of the kubernetes-nmstate release\nits templates follow, and of Go"

func versionCmd(args []string, stdout, _ io.Writer) error {
	if err := parseFlags(newFlagSet("version"), versionSummary, args, stdout); err != nil {
		return err
	}
	// One "name: value" per line, for people and for grep alike.
	_, err := fmt.Fprintf(stdout, "cno-nmstate: %s\nplugin: %s (the %s label on what it renders)\nkubernetes-nmstate: %s\ngo: %s %s/%s\n",
		moduleVersion(), nmstate.PluginVersion, nmstate.OwnerLabel, bindata.KubernetesNMStateVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}

// moduleVersion is the version `go install module@version` or a build in a
// tagged checkout stamps; "(devel)" for any other build, as the go command
// itself says.
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
