package nmstate

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	allModes                = []Mode{ModeDefault, ModeEnabled, ModeDisabled}
	allControlPlaneTopology = []configv1.TopologyMode{
		configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableArbiterMode, configv1.SingleReplicaTopologyMode,
		configv1.DualReplicaTopologyMode, configv1.ExternalTopologyMode,
	}
	allInfrastructureTopology = []configv1.TopologyMode{configv1.HighlyAvailableTopologyMode, configv1.SingleReplicaTopologyMode}
	// Beyond what this release knows: no platform at all, one from a newer
	// release, a topology from a newer release. None may be an error.
	unknownPlatforms = []configv1.PlatformType{"", "Metal3"}
	unknownTopology  = configv1.TopologyMode("Quorum")
)

// tableRow is one row of docs/decision-table.md.
type tableRow struct {
	standalone, mode, gate, controlPlane, platform, kept string
	enabled                                              bool
	reason                                               string
}

func readDecisionTable(t *testing.T) []tableRow {
	t.Helper()
	f, err := os.Open("../../docs/decision-table.md")
	require.NoError(t, err)
	defer f.Close()
	var rows []tableRow
	inTable := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if strings.HasPrefix(line, "| Standalone operator |") {
			inTable = true
			continue
		}
		if !inTable || strings.HasPrefix(line, "| ---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		require.Len(t, cells, 8, "row %q", line)
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		require.Contains(t, []string{"yes", "no"}, cells[6], "Enabled column of %q", line)
		rows = append(rows, tableRow{cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6] == "yes", cells[7]})
	}
	require.NoError(t, s.Err())
	require.NotEmpty(t, rows, "no decision table found in docs/decision-table.md")
	return rows
}

// matches implements the table's column language: any, not X, any other, a list.
func matches(cell, value string) bool {
	switch {
	case cell == "any" || cell == "any other":
		return true
	case strings.HasPrefix(cell, "not "):
		return !matches(strings.TrimPrefix(cell, "not "), value)
	}
	for _, v := range strings.Split(cell, ",") {
		if strings.TrimSpace(v) == value {
			return true
		}
	}
	return false
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// keptInputs are the combinations of cluster.Deployed and cluster.Policies
// that matter: only both together keep a handler.
var keptInputs = []struct {
	deployed bool
	policies int
}{{false, 0}, {false, 3}, {true, 0}, {true, 1}}

func withoutPolicies(c cluster) cluster {
	c.Deployed, c.Policies = false, 0
	return c
}

func TestDecideMatchesDecisionTable(t *testing.T) {
	rows := readDecisionTable(t)
	checked := 0
	for _, platform := range append(slices.Clone(knownPlatforms), unknownPlatforms...) {
		for _, mode := range allModes {
			for _, cp := range append(slices.Clone(allControlPlaneTopology), unknownTopology) {
				for _, infra := range allInfrastructureTopology {
					for _, standalone := range []bool{false, true} {
						for _, gate := range []bool{false, true} {
							for _, kept := range keptInputs {
								c := cluster{Platform: platform, ControlPlaneTopology: cp, InfrastructureTopology: infra,
									DefaultOnGate: gate, Deployed: kept.deployed, Policies: kept.policies}
								if standalone {
									c.ManagedBy = standaloneOperator
								}
								modeCell := string(mode)
								if mode == ModeDefault {
									modeCell = "omitted"
								}
								var want *tableRow
								for i, r := range rows {
									if matches(r.standalone, yesNo(standalone, "yes", "no")) && matches(r.mode, modeCell) &&
										matches(r.gate, yesNo(gate, "on", "off")) && matches(r.controlPlane, string(cp)) &&
										matches(r.platform, string(platform)) && matches(r.kept, yesNo(kept.deployed && kept.policies > 0, "yes", "no")) {
										want = &rows[i]
										break
									}
								}
								name := fmt.Sprintf("%s/%s/%s/%s/standalone=%v/gate=%v/deployed=%v/policies=%d",
									platform, modeCell, cp, infra, standalone, gate, kept.deployed, kept.policies)
								require.NotNil(t, want, "no table row matches %s", name)

								got := decideWithCarryOver(Config{Mode: mode}, c)
								assert.Equal(t, want.enabled, got.Enabled, name)
								assert.Equal(t, want.reason, got.Reason, name)
								// The message always names the inputs and what to do.
								assert.Contains(t, got.Message, c.platformName(), name)
								assert.Contains(t, got.Message, string(cp), name)
								assert.Contains(t, got.Message, modeName(mode), name)
								assert.Contains(t, got.Message, "oc ", name)
								// Callers read the policies only when told to; a
								// decision that does not depend on them ignores them.
								if !dependsOnPolicies(Config{Mode: mode}, decideWithCarryOver(Config{Mode: mode}, withoutPolicies(c))) {
									assert.Equal(t, decideWithCarryOver(Config{Mode: mode}, withoutPolicies(c)), got, name)
								}
								checked++
							}
						}
					}
				}
			}
		}
	}
	assert.Equal(t, (len(knownPlatforms)+2)*3*6*2*2*2*len(keptInputs), checked)
}

// standaloneOperator is what clusterstate says of the standalone operator
// it found.
const standaloneOperator = "the standalone kubernetes-nmstate operator (NMState CR nmstate)"

// ha is a highly available cluster on p with the default-on gate.
func ha(p configv1.PlatformType) cluster {
	return cluster{Platform: p, ControlPlaneTopology: configv1.HighlyAvailableTopologyMode,
		InfrastructureTopology: configv1.HighlyAvailableTopologyMode, DefaultOnGate: true}
}

func TestDecideExamples(t *testing.T) {
	hosted := ha(configv1.BareMetalPlatformType)
	hosted.ControlPlaneTopology = configv1.ExternalTopologyMode
	gateOff := ha(configv1.BareMetalPlatformType)
	gateOff.DefaultOnGate = false
	standalone := ha(configv1.BareMetalPlatformType)
	standalone.ManagedBy = standaloneOperator
	awsRunning := ha(configv1.AWSPlatformType)
	awsRunning.Deployed, awsRunning.Policies = true, 14
	gateOffRunning := gateOff
	gateOffRunning.Deployed, gateOffRunning.Policies = true, 1
	standaloneRunning := standalone
	standaloneRunning.Deployed, standaloneRunning.Policies = true, 2
	awsNoPolicies := ha(configv1.AWSPlatformType)
	awsNoPolicies.Deployed = true
	otherHandler := ha(configv1.BareMetalPlatformType)
	otherHandler.ManagedBy = "whoever deployed DaemonSet openshift-cnv/nmstate-handler"
	otherHandler.OtherHandler = "openshift-cnv/nmstate-handler"
	namedOperator := standalone
	namedOperator.ManagedBy = "the standalone kubernetes-nmstate operator (NMState CR nmstate)"
	withCR := func(spec string) cluster {
		c := ha(configv1.BareMetalPlatformType)
		c.ManagedBy = "the standalone kubernetes-nmstate operator (NMState CR nmstate)"
		c.StandaloneCR = nmstateCR(t, spec)
		return c
	}
	var manyTerms strings.Builder
	manyTerms.WriteString("affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n      nodeSelectorTerms:\n")
	for i := range 20 {
		fmt.Fprintf(&manyTerms, "      - matchExpressions:\n        - key: example.com/rack-%d\n          operator: Exists\n", i)
	}

	tests := []struct {
		name        string
		mode        Mode
		cluster     cluster
		enabled     bool
		reason      string
		messageHas  []string
		messageLack []string
	}{
		{"bare metal default", ModeDefault, ha(configv1.BareMetalPlatformType), true, ReasonPlatformDefault,
			[]string{"on by default on BareMetal", "Disabled"}, nil},
		{"vSphere default", ModeDefault, ha(configv1.VSpherePlatformType), true, ReasonPlatformDefault, nil, nil},
		{"None default", ModeDefault, ha(configv1.NonePlatformType), true, ReasonPlatformDefault, nil, nil},
		{"AWS default tells how to opt in", ModeDefault, ha(configv1.AWSPlatformType), false, ReasonPlatformNotDefault,
			[]string{"off by default on AWS", `"mode":"Enabled"`, "BareMetal, None, VSphere"}, nil},
		{"AWS opt-in", ModeEnabled, ha(configv1.AWSPlatformType), true, ReasonUserEnabled, nil, []string{"hosted"}},
		{"bare metal opt-out", ModeDisabled, ha(configv1.BareMetalPlatformType), false, ReasonUserDisabled,
			[]string{"CRDs and NodeNetworkConfigurationPolicies are kept"}, nil},
		{"hosted default off", ModeDefault, hosted, false, ReasonPlatformNotDefault, []string{"hosted (External)"}, nil},
		{"hosted opt-in says where things run", ModeEnabled, hosted, true, ReasonUserEnabled, []string{"worker nodes"}, nil},
		{"gate off", ModeDefault, gateOff, false, ReasonDefaultGateOff, []string{"KubernetesNMStateByDefault"}, nil},
		{"gate off opt-in", ModeEnabled, gateOff, true, ReasonUserEnabled, nil, nil},
		{"no platform is off by default", ModeDefault, ha(""), false, ReasonPlatformNotDefault,
			[]string{"off by default on platform not reported by infrastructures.config.openshift.io/cluster", `"mode":"Enabled"`}, nil},
		{"no platform opt-in", ModeEnabled, ha(""), true, ReasonUserEnabled, nil, nil},
		{"no platform opt-out", ModeDisabled, ha(""), false, ReasonUserDisabled, nil, nil},
		{"unknown platform is off by default", ModeDefault, ha("Metal3"), false, ReasonPlatformNotDefault,
			[]string{`off by default on platform "Metal3" (unknown to this release)`}, nil},
		{"unknown platform opt-in", ModeEnabled, ha("Metal3"), true, ReasonUserEnabled, nil, nil},
		{"a default that turns off keeps a handler with policies", ModeDefault, awsRunning, true, ReasonKeptForExistingPolicies,
			[]string{"off by default on AWS", "keeps running because 14 NodeNetworkConfigurationPolicies would otherwise no longer be enforced", `"mode":"Disabled"`},
			[]string{`"mode":"Enabled"`}},
		{"the gate turning off keeps it too", ModeDefault, gateOffRunning, true, ReasonKeptForExistingPolicies,
			[]string{"KubernetesNMStateByDefault", "1 NodeNetworkConfigurationPolicy would"}, nil},
		{"an explicit Disabled removes it", ModeDisabled, awsRunning, false, ReasonUserDisabled, nil, nil},
		{"nothing to enforce, nothing kept", ModeDefault, awsNoPolicies, false, ReasonPlatformNotDefault, nil, nil},
		{"the standalone operator still wins", ModeDefault, standaloneRunning, false, ReasonManagedElsewhere, nil, nil},
		{"standalone beats Enabled", ModeEnabled, standalone, false, ReasonManagedElsewhere,
			[]string{"managed by the standalone kubernetes-nmstate operator (NMState CR nmstate)", "oc delete nmstates --all", "kept"}, nil},
		{"another handler beats Enabled and is named", ModeEnabled, otherHandler, false, ReasonManagedElsewhere,
			[]string{"managed by whoever deployed DaemonSet openshift-cnv/nmstate-handler, so",
				"stop whoever deployed DaemonSet openshift-cnv/nmstate-handler from deploying it", "then delete the DaemonSet if it stays", "kept"},
			[]string{"is present", "uninstall the kubernetes-nmstate operator", "oc delete nmstates"}},
		{"another handler beats the platform default", ModeDefault, otherHandler, false, ReasonManagedElsewhere,
			[]string{"DaemonSet openshift-cnv/nmstate-handler"}, nil},
		{"the name wins over the bare flag", ModeDefault, namedOperator, false, ReasonManagedElsewhere,
			[]string{"managed by the standalone kubernetes-nmstate operator (NMState CR nmstate), so"}, []string{"is present"}},
		{"an NMState CR's settings are carried over first", ModeDefault, withCR("nodeSelector:\n  node-role.kubernetes.io/worker: \"\"\nlogLevel: debug\n"), false, ReasonManagedElsewhere,
			[]string{"to hand over to the Cluster Network Operator, first carry the NMState CR's settings over with: " +
				`oc patch network.operator cluster --type=merge -p '{"spec":{"kubernetesNMState":{"handlerPlacement":{"nodeSelector":{"node-role.kubernetes.io/worker":""}},"mode":"Enabled"},"logLevel":"Debug"}}'` +
				"; then remove it (the standalone operator: run `oc delete nmstates --all`"}, nil},
		{"a command too long for the message", ModeDefault, withCR(manyTerms.String()), false, ReasonManagedElsewhere,
			[]string{"first carry the NMState CR's settings over into spec.kubernetesNMState (the command, ", "bytes, is too long for this message",
				"From the NMState CR", "then remove it"}, []string{"oc patch"}},
		{"settings that cannot be carried over", ModeDefault, withCR("nodeSelector:\n  kubernetes.io/os: windows\n"), false, ReasonManagedElsewhere,
			[]string{"first set spec.kubernetesNMState yourself: the NMState CR's settings cannot be carried over as they are (NMState CR nmstate: spec.nodeSelector", "then remove it"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decideWithCarryOver(Config{Mode: tt.mode}, tt.cluster)
			assert.LessOrEqual(t, len(d.Message), maxMessage)
			assert.Equal(t, tt.enabled, d.Enabled)
			assert.Equal(t, tt.reason, d.Reason)
			for _, s := range tt.messageHas {
				assert.Contains(t, d.Message, s)
			}
			for _, s := range tt.messageLack {
				assert.NotContains(t, d.Message, s)
			}
		})
	}
}

// The command in the message is computed against the Network as it is:
// a spec.logLevel of Trace is not lowered to Debug.
func TestDecideCarriesOverAgainstTheNetwork(t *testing.T) {
	c := ha(configv1.BareMetalPlatformType)
	c.ManagedBy = "the standalone kubernetes-nmstate operator (NMState CR nmstate)"
	c.StandaloneCR = nmstateCR(t, "logLevel: debug\n")
	d := decideWithCarryOver(Config{Mode: ModeDisabled, LogLevel: operv1.Trace}, c)
	assert.Contains(t, d.Message, `-p '{"spec":{"kubernetesNMState":{"mode":"Enabled"}}}'`)
}

// A decision not to run kubernetes-nmstate restores what is kept on
// disable only where the plugin installed it, and never under another
// manager, which renders its own.
func TestDecideRestoreKept(t *testing.T) {
	installed := func(c cluster) cluster { c.Installed = true; return c }
	standalone := installed(ha(configv1.BareMetalPlatformType))
	standalone.ManagedBy = standaloneOperator
	tests := []struct {
		name    string
		mode    Mode
		cluster cluster
		want    bool
	}{
		{"disabled where it was installed", ModeDisabled, installed(ha(configv1.BareMetalPlatformType)), true},
		{"off by default where it was installed", ModeDefault, installed(ha(configv1.AWSPlatformType)), true},
		{"disabled where it never was", ModeDisabled, ha(configv1.BareMetalPlatformType), false},
		{"off by default where it never was", ModeDefault, ha(configv1.AWSPlatformType), false},
		{"another manager in charge", ModeDisabled, standalone, false},
		{"on: everything renders anyway", ModeEnabled, installed(ha(configv1.AWSPlatformType)), false},
	}
	for _, tt := range tests {
		d := decideWithCarryOver(Config{Mode: tt.mode}, tt.cluster)
		assert.Equal(t, tt.want, d.RestoreKept, tt.name)
		assert.Equal(t, d.Enabled || tt.want, d.Renders(), tt.name)
	}
}

func TestReasonValuesAreStable(t *testing.T) {
	// These strings are API: alerts and docs match on them.
	assert.Equal(t, "PlatformDefault", ReasonPlatformDefault)
	assert.Equal(t, "PlatformNotDefault", ReasonPlatformNotDefault)
	assert.Equal(t, "UserEnabled", ReasonUserEnabled)
	assert.Equal(t, "UserDisabled", ReasonUserDisabled)
	assert.Equal(t, "ManagedElsewhere", ReasonManagedElsewhere)
	assert.Equal(t, "DefaultGateOff", ReasonDefaultGateOff)
	assert.Equal(t, "InvalidConfig", ReasonInvalidConfig)
	assert.Equal(t, "KeptForExistingPolicies", ReasonKeptForExistingPolicies)
	assert.Equal(t, "Retrying", ReasonRetrying)
}
