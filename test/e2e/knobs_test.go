package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// knobsSpec sets every knob that replaces a field of the standalone
// operator's NMState CR, with values the sample bare-metal cluster can
// satisfy: the handler kept off worker-2 by affinity, the webhook on
// workers only (the control plane's taint no longer tolerated) and one per
// node, and a DNS probe target only the node's DNS server knows.
var knobsSpec = map[string]any{
	"mode": "Enabled",
	"handlerPlacement": map[string]any{"affinity": map[string]any{"nodeAffinity": map[string]any{
		"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{map[string]any{
			"matchExpressions": []any{map[string]any{"key": "kubernetes.io/hostname", "operator": "NotIn", "values": []any{"worker-2"}}}}}}}}},
	"infraPlacement": map[string]any{
		"nodeSelector": map[string]any{"node-role.kubernetes.io/worker": ""},
		"tolerations":  []any{map[string]any{"key": "node-role.kubernetes.io/infra", "operator": "Exists", "effect": "NoSchedule"}},
		"affinity": map[string]any{"podAntiAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
			"topologyKey": "kubernetes.io/hostname", "labelSelector": map[string]any{"matchLabels": map[string]any{"name": nmstate.WebhookDeployment}}}}}},
	},
	"probes": map[string]any{"dnsHost": "dns.lab.example"},
}

// developmentLine is a line of controller-runtime's development logger
// (console encoding, debug level), which upstream's --v debug turns on; its
// production logger writes JSON.
var developmentLine = regexp.MustCompile(`(?m)^\S+\t(DEBUG|INFO)\t`)

// TestKnobsReachOperands: the Network's knobs, set through the API server
// (its CRD schema validating them), reach the real parts that act on them:
// the kube-scheduler and the DaemonSet controller place the pods by the
// rendered placement, and upstream's binary, run as worker-0's handler,
// resolves the configured DNS probe target and runs nmstatectl verbosely
// with spec.logLevel Debug.
func TestKnobsReachOperands(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(knobsSpec)
	k.patchNetwork(`{"spec":{"logLevel":"Debug"}}`)
	k.startHost()
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonUserEnabled)

	// Placement, by the real controllers.
	ds := &appsv1.DaemonSet{}
	require.True(t, waitUntil(func() bool {
		return k.c.Get(k.ctx(), client.ObjectKey{Namespace: nmstate.Namespace, Name: nmstate.HandlerDaemonSet}, ds) == nil &&
			ds.Status.ObservedGeneration == ds.Generation && ds.Status.DesiredNumberScheduled > 0
	}), "the DaemonSet controller never scheduled the handler; last seen: generation %d, status %+v", ds.Generation, ds.Status)
	assert.EqualValues(t, 5, ds.Status.DesiredNumberScheduled, "every Linux node but worker-2, which the affinity excludes")
	webhookNodes := map[string]bool{}
	require.True(t, waitUntil(func() bool {
		pods := &corev1.PodList{}
		if err := k.c.List(k.ctx(), pods, client.InNamespace(nmstate.Namespace), client.MatchingLabels{"name": nmstate.WebhookDeployment}); err != nil {
			return false
		}
		webhookNodes = map[string]bool{}
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				webhookNodes[p.Spec.NodeName] = true
			}
		}
		return len(webhookNodes) == 2
	}), "the scheduler never bound both webhook replicas to two nodes: %v", webhookNodes)
	for node := range webhookNodes {
		assert.Regexp(t, `^worker-\d$`, node, "infraPlacement keeps the webhook off the control plane")
	}
	handlerPods := &corev1.PodList{}
	require.NoError(t, k.c.List(k.ctx(), handlerPods, client.InNamespace(nmstate.Namespace), client.MatchingLabels{"name": nmstate.HandlerDaemonSet}))
	for _, p := range handlerPods.Items {
		assert.NotEqual(t, "worker-2", p.Spec.NodeName, "handlerPlacement.affinity excludes worker-2")
	}

	// The probe target and the log level, by upstream's handler.
	o := k.startOperands()
	webhook := o.run(nmstate.WebhookDeployment, "")
	k.waitWebhookServing()
	handler := o.run(nmstate.HandlerDaemonSet, "worker-0")
	out, err := k.kubectlApply(realPolicy)
	require.NoError(t, err, out)
	k.waitPolicyCondition("worker-0-dummy", "Available", "True")
	requireRunning(t, handler)
	requireRunning(t, webhook)

	assert.True(t, o.DNS.Asked("dns.lab.example."), "the handler's DNS probe resolves probes.dnsHost")
	assert.False(t, o.DNS.Asked("root-servers.net."), "and not the default")
	calls, err := os.ReadFile(filepath.Join(o.NodeDir, "calls.log"))
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^apply -vv `, string(calls), "spec.logLevel Debug makes nmstatectl verbose")
	assert.Regexp(t, developmentLine, handler.Log(), "and the handler log with its development (debug-level) logger")
	assert.NotRegexp(t, developmentLine, webhook.Log(), "the webhook, which has no debug level of its own, logs JSON")
}
