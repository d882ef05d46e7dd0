package nmstate

import (
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Input is everything Render reads: it reads nothing else, from the
// cluster or the environment.
type Input struct {
	// Network is network.operator.openshift.io/cluster: its
	// spec.kubernetesNMState is the user's config, and its status
	// conditions say what the plugin last decided.
	Network *unstructured.Unstructured
	// Infrastructure is the platform and the topologies.
	Infrastructure Infrastructure
	// State is what pkg/clusterstate's Read found.
	State State
	// DefaultOnGate is whether feature gate KubernetesNMStateByDefault is
	// enabled: while it is not, an omitted mode means off on every platform.
	DefaultOnGate bool
	Images        Images
	// ManifestDir is the bindata root holding network/kubernetes-nmstate.
	ManifestDir string
}

// Result is what Render decided and rendered.
type Result struct {
	Decision Decision
	// Objects are what to apply: nil when the decision renders nothing.
	Objects []*unstructured.Unstructured
	// Err stopped the plugin before it rendered anything: a bad
	// spec.kubernetesNMState (an *InputError), a failed read of State, a
	// missing image. What it deployed before stays as it is, unpruned,
	// until it renders again.
	Err error
	// WorkloadsRemain: the decision does not run the workloads, but they or
	// their pods remain (State.WorkloadsRemain), so their service accounts
	// and RBAC are not pruned yet; a consumer passes it to DecidePrune
	// (Unrendered.WorkloadsRemain). While on, no account is held: one a
	// release no longer renders is no current pod's.
	WorkloadsRemain bool
	// RecheckAfter is RemovalRecheck while the plugin's own workloads are
	// removed and their last pods end (State.Pods): their ending changes
	// nothing a consumer watches, and their accounts and RBAC go only once
	// it looks again. It is AccountRecheck while a workload's account is
	// missing: the apply creates it, and the next sync stamps its UID on the
	// workload (stampAccounts). Zero otherwise.
	RecheckAfter time.Duration
}

// Render decides whether kubernetes-nmstate runs and renders it with CNO's
// renderer: the one call CNO's Render, the host and `cno-nmstate render`
// make. It never panics and never fails the caller's own work:
// kubernetes-nmstate is optional, so its problems go into Result.Err and
// from there into the KubernetesNMState* conditions only.
func Render(in Input) Result {
	cfg, err := ConfigFromNetwork(in.Network)
	if err != nil {
		return Result{Err: err}
	}
	if in.State.Err != nil {
		return Result{Err: in.State.Err}
	}
	c := newCluster(in)
	d := decideWithCarryOver(cfg, c)
	objs, err := renderObjects(d, newRenderParams(cfg, c, in.Images), in.ManifestDir)
	held := d.Enabled && stampAccounts(objs, in.State.Accounts)
	res := Result{Decision: d, Objects: objs, Err: err, WorkloadsRemain: !d.Enabled && in.State.WorkloadsRemain()}
	switch {
	case res.WorkloadsRemain && in.State.removing():
		res.RecheckAfter = RemovalRecheck
	case held:
		res.RecheckAfter = AccountRecheck
	}
	return res
}

// newCluster gathers what the decision reads of in: the topologies with
// their defaults, whoever else manages kubernetes-nmstate, whether the
// plugin runs it (its own handler exists, or the policies CRD says it last
// decided so), how many policies it would leave unenforced, and whether it
// was installed.
func newCluster(in Input) cluster {
	infra, state := in.Infrastructure, in.State
	c := cluster{
		Platform:               infra.Platform,
		ControlPlaneTopology:   infra.ControlPlaneTopology,
		InfrastructureTopology: infra.InfrastructureTopology,
		NoInfrastructure:       infra.Missing,
		ManagedBy:              state.Other.ManagedBy,
		StandaloneCR:           state.Other.StandaloneCR,
		OtherHandler:           state.Other.HandlerName,
		DefaultOnGate:          in.DefaultOnGate,
		Deployed:               (state.Handler != nil && OwnHandler(state.Handler)) || state.HandlerOn,
		Policies:               state.Policies,
		Installed:              state.Installed,
	}
	if c.ControlPlaneTopology == "" {
		c.ControlPlaneTopology = configv1.HighlyAvailableTopologyMode
	}
	if c.InfrastructureTopology == "" {
		c.InfrastructureTopology = configv1.HighlyAvailableTopologyMode
	}
	return c
}

// decideWithCarryOver is decide with the first step of a handover from an
// NMState CR filled in for the message: the command the migration code
// makes of the CR's settings.
func decideWithCarryOver(cfg Config, c cluster) Decision {
	if c.StandaloneCR != nil {
		m, err := MigrationFrom(c.StandaloneCR, cfg)
		c.CarryOver = carryOver{Command: m.Command, Err: err}
	}
	return decide(cfg, c)
}

// NetworkConditions are the conditions on network's status; those that do
// not parse are left out.
func NetworkConditions(network *unstructured.Unstructured) []operv1.OperatorCondition {
	if network == nil {
		return nil
	}
	raw, _, _ := unstructured.NestedSlice(network.Object, "status", "conditions")
	var out []operv1.OperatorCondition
	for _, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		var c operv1.OperatorCondition
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			out = append(out, c)
		}
	}
	return out
}
