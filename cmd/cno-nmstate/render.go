package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	"sigs.k8s.io/yaml"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

func renderCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	platform := fs.String("platform", string(configv1.BareMetalPlatformType), "Infrastructure platform type, e.g. BareMetal, None, VSphere, AWS")
	topology := fs.String("topology", string(configv1.HighlyAvailableTopologyMode), "infrastructure topology: HighlyAvailable or SingleReplica")
	controlPlane := fs.String("control-plane-topology", "", "control plane topology (default: same as -topology), e.g. External for hosted control planes")
	mode := fs.String("mode", "", "spec.kubernetesNMState.mode: Enabled, Disabled or empty for the platform default")
	handlerImage := fs.String("handler-image", os.Getenv(nmstate.EnvHandlerImage), "kubernetes-nmstate handler image, also used by the webhook (default $"+nmstate.EnvHandlerImage+")")
	release := fs.String("release-version", os.Getenv(nmstate.EnvReleaseVersion), "release version for release.openshift.io/version (default $"+nmstate.EnvReleaseVersion+")")
	gate := fs.Bool("default-on-gate", true, "feature gate KubernetesNMStateByDefault: when false, an omitted mode is off everywhere")
	standalone := fs.Bool("standalone-operator", false, "pretend the standalone kubernetes-nmstate operator is installed")
	manifests := fs.String("manifests", "", "bindata root to render from (default: the manifests built into this binary)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	if *controlPlane == "" {
		*controlPlane = *topology
	}
	// On a cluster an unknown platform is simply off by default; on the
	// command line it is far more likely a typo, so it is refused.
	if err := oneOf("-platform", *platform, nmstate.KnownPlatforms); err != nil {
		return err
	}
	infra := &configv1.Infrastructure{Status: configv1.InfrastructureStatus{
		PlatformStatus:         &configv1.PlatformStatus{Type: configv1.PlatformType(*platform)},
		ControlPlaneTopology:   configv1.TopologyMode(*controlPlane),
		InfrastructureTopology: configv1.TopologyMode(*topology),
	}}
	cluster := nmstate.ClusterFromInfrastructure(infra)
	cluster.DefaultOnGate = *gate
	cluster.StandaloneOperator = *standalone

	cfg, err := nmstate.ConfigFromNetwork(networkWithMode(*mode))
	if err != nil {
		return fmt.Errorf("-mode: %w", err)
	}
	decision := nmstate.Decide(cfg, cluster)
	fmt.Fprintf(stderr, "decision: enabled=%v reason=%s\n%s\n", decision.Enabled, decision.Reason, decision.Message)
	if !decision.Enabled {
		return nil
	}
	if *handlerImage == "" {
		return errors.New("no handler image: pass -handler-image or set $" + nmstate.EnvHandlerImage)
	}

	dir, cleanup, err := manifestDir(*manifests)
	if err != nil {
		return err
	}
	defer cleanup()
	objs, err := nmstate.Render(decision, nmstate.NewRenderParams(cfg, cluster, *handlerImage, *release), dir)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return fmt.Errorf("encoding %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		if _, err := fmt.Fprintf(stdout, "---\n%s", data); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "rendered %d objects\n", len(objs))
	return nil
}

// oneOf refuses a flag value that is not in valid, suggesting the value that
// differs only in case.
func oneOf[T ~string](flagName, value string, valid []T) error {
	names := make([]string, len(valid))
	hint := ""
	for i, v := range valid {
		names[i] = string(v)
		if string(v) == value {
			return nil
		}
		if strings.EqualFold(string(v), value) {
			hint = fmt.Sprintf(" (values are case-sensitive: did you mean %q?)", v)
		}
	}
	return fmt.Errorf("%s %q is not valid%s; valid values are %s", flagName, value, hint, strings.Join(names, ", "))
}
