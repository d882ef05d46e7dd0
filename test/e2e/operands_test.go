package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const realPolicy = `apiVersion: nmstate.io/v1
kind: NodeNetworkConfigurationPolicy
metadata:
  name: worker-0-dummy
spec:
  nodeSelector:
    kubernetes.io/hostname: worker-0
  desiredState:
    interfaces:
    - name: dummy0
      type: dummy
      state: up
`

// TestOperandsEnactPolicy: on the sample bare-metal cluster, upstream's
// binary runs as the webhook and as worker-0's handler from the rendered
// pods under the rendered service accounts. The handler reports worker-0's
// NodeNetworkState; a policy created with kubectl is stamped by the real
// webhook (the API server calls it through the rendered
// MutatingWebhookConfiguration), refused a spec edit until the handler has
// reported on it (the rendered ValidatingAdmissionPolicy, upstream's rule),
// enacted by the handler (enactment and policy conditions written), and
// then open to an edit, which the handler applies too.
func TestOperandsEnactPolicy(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes(), auditLog: true})
	k.createInfrastructure(configv1.BareMetalPlatformType, configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableTopologyMode)
	k.createNetwork(nil)
	k.startHost()
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	o := k.startOperands()

	webhook := o.run(nmstate.WebhookDeployment, "")
	k.waitWebhookServing()
	requireRunning(t, webhook)

	out, err := k.kubectlApply(realPolicy)
	require.NoError(t, err, out)
	policy := k.nncpObject("worker-0-dummy")
	if !assert.NotEmpty(t, policy.GetAnnotations()["nmstate.io/webhook-mutating-timestamp"], "the real webhook stamps the policy on admission") {
		b, _ := exec.Command("sh", "-c", "grep -i webhook "+k.dc.Dir+"/kube-apiserver.log | tail -5; "+filepath.Join(assetsDir(t), "kubectl")+" --kubeconfig "+k.kubeconfig+" get endpointslices,endpoints,pods -o wide -n openshift-nmstate").CombinedOutput()
		t.Log(string(b))
	}

	// No handler has reported on it: upstream refuses a spec change. The API
	// server enforces an admission policy a moment after it is stored, so
	// wait for that with server-side dry runs, which change nothing.
	edit := []string{"patch", "nncp", "worker-0-dummy", "--type=merge", "-p", `{"spec":{"desiredState":{"interfaces":[{"name":"dummy0","type":"dummy","state":"down"}]}}}`}
	require.True(t, waitUntil(func() bool {
		out, err = k.kubectl(append(edit, "--dry-run=server")...)
		return err != nil && strings.Contains(out, "is still in progress")
	}), "the admission policy never refused a dry-run spec edit: %s", out)
	out, err = k.kubectl(edit...)
	require.Error(t, err, "a spec edit before any handler reported must be refused: %s", out)
	assert.Contains(t, out, "is still in progress")

	handler := o.run(nmstate.HandlerDaemonSet, "worker-0")
	k.waitUnstructured("nmstate.io/v1beta1", "NodeNetworkState", "worker-0")
	requireRunning(t, handler)

	k.waitPolicyCondition("worker-0-dummy", "Available", "True")
	enactment := k.waitUnstructured("nmstate.io/v1beta1", "NodeNetworkConfigurationEnactment", "worker-0.worker-0-dummy")
	assert.True(t, hasCondition(enactment, "Available", "True"), "the handler reports the enactment available: %v", enactment.Object["status"])
	applied, err := os.ReadFile(filepath.Join(o.NodeDir, "applied.log"))
	require.NoError(t, err)
	assert.Contains(t, string(applied), `"name":"dummy0"`, "the handler handed the desired state to nmstatectl")
	assert.Contains(t, string(applied), "commit", "and committed it after its probes passed")
	assert.Positive(t, o.DNS.Queries(), "the DNS probe asked the loopback server")

	out, err = k.kubectl("patch", "nncp", "worker-0-dummy", "--type=merge", "-p", `{"spec":{"desiredState":{"interfaces":[{"name":"dummy0","type":"dummy","state":"down"}]}}}`)
	require.NoError(t, err, "once the policy is Available its spec may change: %s", out)
	require.True(t, waitUntil(func() bool { return o.applied(`"state":"down"`) }), "the handler never applied the edited policy; applied:\n%s", o.appliedLog())
	k.waitPolicyCondition("worker-0-dummy", "Available", "True")
	requireRunning(t, handler)
	requireRunning(t, webhook)

	// worker-0 no longer matches: its handler removes its enactment.
	out, err = k.kubectl("patch", "nncp", "worker-0-dummy", "--type=merge", "-p", `{"spec":{"nodeSelector":{"kubernetes.io/hostname":"worker-1"}}}`)
	require.NoError(t, err, out)
	k.waitGone(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "nmstate.io/v1beta1", "kind": "NodeNetworkConfigurationEnactment"}}, "", "worker-0.worker-0-dummy")
	requireRunning(t, handler)

	k.requireOperandRBACFromAudit(nmstate.HandlerDaemonSet, nmstate.WebhookDeployment)
}

// waitWebhookServing waits until the service CA stand-in has injected the
// caBundle into the rendered MutatingWebhookConfiguration.
func (k *cluster) waitWebhookServing() {
	k.t.Helper()
	require.True(k.t, waitUntil(func() bool {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("admissionregistration.k8s.io/v1")
		obj.SetKind("MutatingWebhookConfiguration")
		if err := k.c.Get(k.ctx(), client.ObjectKey{Name: "nmstate"}, obj); err != nil {
			return false
		}
		hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		for _, h := range hooks {
			if b, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "caBundle"); b == "" {
				return false
			}
		}
		return len(hooks) > 0
	}), "the webhook configuration never got its caBundle")
}

func (k *cluster) nncpObject(name string) *unstructured.Unstructured {
	k.t.Helper()
	return k.waitUnstructured("nmstate.io/v1", "NodeNetworkConfigurationPolicy", name)
}

// waitUnstructured waits for a cluster-scoped object and returns it.
func (k *cluster) waitUnstructured(apiVersion, kind, name string) *unstructured.Unstructured {
	k.t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	require.True(k.t, waitUntil(func() bool { return k.c.Get(k.ctx(), client.ObjectKey{Name: name}, obj) == nil }),
		"%s %s never appeared", kind, name)
	return obj
}

// waitPolicyCondition waits for the policy's condition, as
// `oc wait nncp --for=condition=...` would.
func (k *cluster) waitPolicyCondition(name, typ, status string) {
	k.t.Helper()
	var obj *unstructured.Unstructured
	require.True(k.t, waitUntil(func() bool {
		obj = k.nncpObject(name)
		return hasCondition(obj, typ, status)
	}), "policy %s never had %s=%s; status: %v", name, typ, status, obj.Object["status"])
}

func hasCondition(obj *unstructured.Unstructured, typ, status string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == typ && m["status"] == status {
			return true
		}
	}
	return false
}
