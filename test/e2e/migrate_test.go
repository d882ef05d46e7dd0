package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

// everyFieldCR sets every field of v0.86.0's NMStateSpec, none to its
// default, with placements the sample bare-metal cluster satisfies: the
// handler on workers but worker-2 (its affinity), with no kubernetes.io/os
// in its node selector, so the operator's reaches windows-0 too; the
// webhook on the tainted control plane.
const everyFieldCR = `apiVersion: nmstate.io/v1
kind: NMState
metadata:
  name: nmstate
spec:
  nodeSelector:
    node-role.kubernetes.io/worker: ""
  tolerations:
  - key: example.com/dedicated
    operator: Equal
    value: nmstate
    effect: NoExecute
    tolerationSeconds: 300
  - key: node.kubernetes.io/unreachable
    operator: Exists
    effect: NoExecute
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: kubernetes.io/hostname
            operator: NotIn
            values: [worker-2]
  infraNodeSelector:
    node-role.kubernetes.io/master: ""
  infraTolerations:
  - key: node-role.kubernetes.io/master
    operator: Exists
    effect: NoSchedule
  infraAffinity:
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              app: kubernetes-nmstate
  selfSignConfiguration:
    caRotateInterval: 4380h0m0s
    caOverlapInterval: 12h0m0s
    certRotateInterval: 2190h0m0s
    certOverlapInterval: 12h0m0s
  probeConfiguration:
    dns:
      host: dns.lab.example
  metricsConfiguration:
    bindAddress: ":9090"
  logLevel: debug
`

// deployedSettings is what an NMState CR's settings become in the objects
// deployed, on either side of the handover.
type deployedSettings struct {
	HandlerNodeSelector map[string]string
	HandlerTolerations  []corev1.Toleration
	HandlerAffinity     *corev1.Affinity
	HandlerArgs         []string
	HandlerLiveness     []string
	ProbeDNSHost        string
	MetricsBindAddress  string
	// Deployments are the placements of the Deployments by name: the
	// webhook's and any other infra Deployment's.
	Deployments map[string]placement
}

type placement struct {
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
	Affinity     *corev1.Affinity
}

// TestMigrateFromRealOperator: upstream's operator (v0.86.0, as
// TestHandoverFromRealOperatorNamespaces runs it) deploys an NMState CR
// that sets every field; `cno-nmstate migrate`, built here, prints the
// command, which runs through sh -c with kubectl for oc, as a user would
// paste it; the CR is deleted and the operator stopped as the user guide
// says; the host then deploys what the operator had, field by field, but
// for the differences listed below, each documented.
func TestMigrateFromRealOperator(t *testing.T) {
	bin := buildCommand(t)
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes(), extraCRDs: []string{nmstatesCRD}})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(nil)

	op := k.runRealOperator(nmstate.Namespace)
	out, err := k.kubectlApply(everyFieldCR)
	require.NoError(t, err, out)
	var ds appsv1.DaemonSet
	require.True(t, waitFor(3*time.Minute, func() bool {
		return k.exists(&ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && ds.Status.ObservedGeneration == ds.Generation &&
			ds.Status.DesiredNumberScheduled == 3 && ds.Status.NumberReady == 3
	}), "the operator's handler never rolled out on worker-0, worker-1 and windows-0: %+v", ds.Status)
	for _, name := range []string{nmstate.WebhookDeployment, "nmstate-metrics"} {
		var dep appsv1.Deployment
		require.True(t, waitUntil(func() bool {
			return k.exists(&dep, nmstate.Namespace, name) && dep.Status.ObservedGeneration == dep.Generation
		}), "the operator never deployed %s", name)
	}
	operator := k.deployedSettings(k.deploymentNames(func(d *appsv1.Deployment) bool {
		return len(d.OwnerReferences) > 0 && d.OwnerReferences[0].Kind == "NMState"
	}))
	t.Logf("the operator deployed: %s", asJSON(t, operator))
	var certManager appsv1.Deployment
	assert.False(t, k.exists(&certManager, nmstate.Namespace, "nmstate-cert-manager"),
		"on OpenShift the operator deploys no cert-manager: selfSignConfiguration is unused there too")

	// The host defers to the CR, and says how to carry it over.
	k.runHost(k.cfg)
	avail := k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonManagedElsewhere)

	migrate := exec.Command(bin, "migrate", "-kubeconfig", k.kubeconfig)
	migrate.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	var stdout, stderr bytes.Buffer
	migrate.Stdout, migrate.Stderr = &stdout, &stderr
	require.NoError(t, migrate.Run(), "cno-nmstate migrate: %s", stderr.String())
	command := strings.TrimSuffix(stdout.String(), "\n")
	t.Logf("cno-nmstate migrate printed: %s\n%s", command, stderr.String())
	require.NotContains(t, command, "\n", "one line on stdout: the command")
	require.True(t, strings.HasPrefix(command, "oc patch network.operator cluster --type=merge -p '"), command)
	for _, field := range []string{"metricsConfiguration.bindAddress", "selfSignConfiguration.caRotateInterval", "selfSignConfiguration.caOverlapInterval",
		"selfSignConfiguration.certRotateInterval", "selfSignConfiguration.certOverlapInterval"} {
		assert.Contains(t, stderr.String(), "  - "+field+" ", "listed as not carried over")
	}
	// The condition is bounded: this CR's command is too long for it, and
	// it says so with the command's length.
	assert.Contains(t, avail.Message, "(the command, "+strconv.Itoa(len(command))+" bytes, is too long for this message", avail.Message)

	kubectl := filepath.Join(assetsDir(t), "kubectl")
	patch := exec.Command("sh", "-c", "'"+kubectl+"'"+strings.TrimPrefix(command, "oc"))
	// kubectl keeps its discovery cache under $HOME.
	patch.Env = []string{"PATH=/usr/bin:/bin", "KUBECONFIG=" + k.kubeconfig, "HOME=" + t.TempDir()}
	out2, err := patch.CombinedOutput()
	require.NoError(t, err, "%s: %s", command, out2)

	// The handover, as docs/user-guide.md says: delete the CR, then
	// uninstall the operator.
	out, err = k.kubectl("delete", "nmstate", "nmstate", "--wait=true")
	require.NoError(t, err, out)
	op.stop()
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonUserEnabled)
	// The operator's objects outlive the CR until the garbage collector
	// takes them (the host's apply may land on them first): wait for the
	// host's own handler and webhook, which no CR owns.
	var webhook appsv1.Deployment
	require.True(t, waitFor(time.Minute, func() bool {
		return k.exists(&ds, nmstate.Namespace, nmstate.HandlerDaemonSet) && len(ds.OwnerReferences) == 0 &&
			ds.Spec.Template.Spec.Containers[0].Image == handlerImage &&
			k.exists(&webhook, nmstate.Namespace, nmstate.WebhookDeployment) && len(webhook.OwnerReferences) == 0
	}), "the host's own DaemonSet and webhook, not the operator's: owners %v and %v", ds.OwnerReferences, webhook.OwnerReferences)
	// The linux selector is not just text: the operator's handler ran on
	// windows-0 too, the host's runs on worker-0 and worker-1.
	k.waitOperandsSettled(2, 2)
	host := k.deployedSettings(k.deploymentNames(func(d *appsv1.Deployment) bool {
		_, owned := d.Labels[nmstate.OwnerLabel]
		return owned
	}))
	t.Logf("the host deployed: %s", asJSON(t, host))

	// What the operator deployed, with the differences the user guide
	// documents and nothing else.
	want := operator
	// CNO always adds kubernetes.io/os: linux (the images are Linux
	// images); the operator adds it only when the CR sets no selector.
	want.HandlerNodeSelector = withLinux(operator.HandlerNodeSelector)
	// metricsConfiguration.bindAddress has no equivalent: CNO's handler
	// serves no metrics on the host network.
	want.MetricsBindAddress = "0"
	// CNO's liveness probe asks nmstatectl about lo only, verbose or not.
	require.Len(t, operator.HandlerLiveness, 3)
	want.HandlerLiveness = []string{"bash", "-c", strings.Replace(operator.HandlerLiveness[2], " 2>&1", " lo 2>&1", 1)}
	// Each Deployment both deploy (the webhook, and the metrics manager
	// once CNO renders one) is compared; the others are listed.
	want.Deployments = map[string]placement{}
	for name, p := range operator.Deployments {
		if _, ok := host.Deployments[name]; !ok {
			t.Logf("the operator deployed %s, the host does not render it: not compared", name)
			continue
		}
		p.NodeSelector = withLinux(p.NodeSelector)
		want.Deployments[name] = p
	}
	for name := range host.Deployments {
		if _, ok := operator.Deployments[name]; !ok {
			t.Logf("the host renders %s, the operator did not deploy it: not compared", name)
			delete(host.Deployments, name)
		}
	}
	require.Contains(t, want.Deployments, nmstate.WebhookDeployment)
	assert.Equal(t, want, host)
}

// deploymentNames are the names of the Deployments in the namespace that
// match.
func (k *cluster) deploymentNames(match func(*appsv1.Deployment) bool) []string {
	k.t.Helper()
	deps := &appsv1.DeploymentList{}
	require.NoError(k.t, k.c.List(k.ctx(), deps, client.InNamespace(nmstate.Namespace)))
	var names []string
	for i := range deps.Items {
		if match(&deps.Items[i]) {
			names = append(names, deps.Items[i].Name)
		}
	}
	return names
}

// deployedSettings reads the handler DaemonSet and the named Deployments.
func (k *cluster) deployedSettings(deployments []string) deployedSettings {
	k.t.Helper()
	var ds appsv1.DaemonSet
	require.True(k.t, k.exists(&ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	pod := ds.Spec.Template.Spec
	require.NotEmpty(k.t, pod.Containers)
	c := pod.Containers[0]
	s := deployedSettings{HandlerNodeSelector: pod.NodeSelector, HandlerTolerations: pod.Tolerations, HandlerAffinity: pod.Affinity,
		HandlerArgs: c.Args, Deployments: map[string]placement{}}
	if c.LivenessProbe != nil && c.LivenessProbe.Exec != nil {
		s.HandlerLiveness = c.LivenessProbe.Exec.Command
	}
	for _, e := range c.Env {
		switch e.Name {
		case "PROBE_DNS_HOST":
			s.ProbeDNSHost = e.Value
		case "METRICS_BIND_ADDRESS":
			s.MetricsBindAddress = e.Value
		}
	}
	for _, name := range deployments {
		var dep appsv1.Deployment
		require.True(k.t, k.exists(&dep, nmstate.Namespace, name), "Deployment %s", name)
		p := dep.Spec.Template.Spec
		s.Deployments[name] = placement{NodeSelector: p.NodeSelector, Tolerations: p.Tolerations, Affinity: p.Affinity}
	}
	return s
}

func asJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func withLinux(selector map[string]string) map[string]string {
	out := map[string]string{"kubernetes.io/os": "linux"}
	for k, v := range selector {
		out[k] = v
	}
	return out
}
