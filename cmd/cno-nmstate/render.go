package main

import (
	"fmt"
	"io"
	"os"

	configv1 "github.com/openshift/api/config/v1"
	"sigs.k8s.io/yaml"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const renderSummary = "print the decision (stderr) and the rendered objects (stdout, YAML)"

// The values openshift/api's Infrastructure status admits for each topology
// (its enum markers): on the command line anything else is a typo.
var (
	infrastructureTopologies = []configv1.TopologyMode{configv1.HighlyAvailableTopologyMode, configv1.SingleReplicaTopologyMode}
	controlPlaneTopologies   = []configv1.TopologyMode{configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableArbiterMode,
		configv1.SingleReplicaTopologyMode, configv1.DualReplicaTopologyMode, configv1.ExternalTopologyMode}
	modes = []nmstate.Mode{nmstate.ModeEnabled, nmstate.ModeDisabled}
)

func renderCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("render")
	platform := fs.String("platform", string(configv1.BareMetalPlatformType), "Infrastructure platform type, e.g. BareMetal, None, VSphere, AWS")
	topology := fs.String("topology", string(configv1.HighlyAvailableTopologyMode), "infrastructure topology: HighlyAvailable or SingleReplica")
	controlPlane := fs.String("control-plane-topology", "", "control plane topology (default: same as -topology), e.g. External for hosted control planes")
	mode := fs.String("mode", "", "spec.kubernetesNMState.mode: Enabled, Disabled or empty for the platform default")
	handlerImage := fs.String("handler-image", os.Getenv(nmstate.EnvHandlerImage), "kubernetes-nmstate handler image, also used by the webhook (default $"+nmstate.EnvHandlerImage+")")
	release := fs.String("release-version", os.Getenv(nmstate.EnvReleaseVersion), "release version for release.openshift.io/version (default $"+nmstate.EnvReleaseVersion+")")
	gate := fs.Bool("default-on-gate", true, "feature gate KubernetesNMStateByDefault: when false, an omitted mode is off everywhere")
	standalone := fs.Bool("standalone-operator", false, "pretend the standalone kubernetes-nmstate operator is installed")
	manifests := fs.String("manifests", "", "bindata root to render from (default: the manifests built into this binary)")
	if err := parseFlags(fs, renderSummary, args, stdout); err != nil {
		return err
	}
	if *controlPlane == "" {
		*controlPlane = *topology
	}
	// On a cluster an unknown platform or topology is taken as it is (off by
	// default, highly available); on the command line it is far more likely
	// a typo, so it is refused, naming the flag.
	if err := oneOf("platform", *platform, nmstate.KnownPlatforms()); err != nil {
		return err
	}
	if err := oneOf("topology", *topology, infrastructureTopologies); err != nil {
		return err
	}
	if err := oneOf("control-plane-topology", *controlPlane, controlPlaneTopologies); err != nil {
		return err
	}
	if *mode != "" {
		if err := oneOf("mode", *mode, modes); err != nil {
			return err
		}
	}
	in := nmstate.Input{
		Network: networkWithMode(*mode),
		Infrastructure: nmstate.Infrastructure{Platform: configv1.PlatformType(*platform),
			ControlPlaneTopology: configv1.TopologyMode(*controlPlane), InfrastructureTopology: configv1.TopologyMode(*topology)},
		DefaultOnGate: *gate,
		Images:        nmstate.Images{Handler: *handlerImage, ReleaseVersion: *release},
	}
	if *standalone {
		in.State.Other.ManagedBy = "the standalone kubernetes-nmstate operator (-standalone-operator)"
	}
	dir, cleanup, err := manifestDir(*manifests)
	if err != nil {
		return err
	}
	defer cleanup()
	in.ManifestDir = dir
	res := nmstate.Render(in)
	if nmstate.ReasonOf(res.Err) == nmstate.ReasonInvalidConfig {
		return fmt.Errorf("-mode: %w", res.Err)
	}
	decision := res.Decision
	fmt.Fprintf(stderr, "decision: enabled=%v reason=%s\n%s\n", decision.Enabled, decision.Reason, decision.Message)
	if !decision.Enabled {
		return nil
	}
	if nmstate.ReasonOf(res.Err) == nmstate.ReasonMissingImage {
		return usageErrorf("no handler image: pass -handler-image or set $%s", nmstate.EnvHandlerImage)
	}
	if res.Err != nil {
		return res.Err
	}
	objs := res.Objects
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
