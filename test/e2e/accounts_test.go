package e2e

import (
	"path/filepath"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// TestRecreatedAccountRollsPods: upstream's handler runs on worker-0 from
// its pod, under a token bound to the pod as a kubelet requests it. The
// install rolled nothing: the DaemonSet is at generation 1, unstamped, as
// its account is no newer than it. The handler's ServiceAccount deleted by
// hand is recreated by the host at once with a new UID, and the running
// handler's token is refused from then on (a TokenReview says so, once the
// API server's 10-second cache of it ends). The next
// sync stamps the new UID on the pod template (nmstate.AccountUIDAnnotation):
// the DaemonSet rolls, Progressing says RollingOut, and the new pod's
// handler, under a token the API server accepts, enacts a policy. Before, nothing changed the template: the pod kept its refused
// token until the kubelet would refresh it, about 48 minutes later.
func TestRecreatedAccountRollsPods(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes()})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	k.startHost()
	k.waitOperandsSettled(6, 2)
	o := k.startOperands()
	webhook := o.run(nmstate.WebhookDeployment, "")
	k.waitWebhookServing()
	requireRunning(t, webhook)
	running := o.run(nmstate.HandlerDaemonSet, "worker-0")
	k.waitUnstructured("nmstate.io/v1beta1", "NodeNetworkState", "worker-0")
	old := o.pod(nmstate.HandlerDaemonSet, "worker-0")
	oldToken := o.token(old)
	require.True(t, k.authenticated(oldToken), "the running handler's token is refused before anything happened")
	ds := &appsv1.DaemonSet{}
	require.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	assert.EqualValues(t, 1, ds.Generation, "the install rolled the handler")
	assert.NotContains(t, ds.Spec.Template.Annotations, nmstate.AccountUIDAnnotation, "an account no newer than the DaemonSet needs no stamp")

	history := k.recordEvents(networkList())
	account := &corev1.ServiceAccount{}
	require.True(t, k.exists(account, nmstate.Namespace, "nmstate-handler"))
	require.NoError(t, k.c.Delete(k.ctx(), account))
	deleted := time.Now()
	recreated := &corev1.ServiceAccount{}
	require.True(t, waitUntil(func() bool {
		return k.exists(recreated, nmstate.Namespace, "nmstate-handler") && recreated.UID != account.UID
	}), "the host never recreated the handler's ServiceAccount")
	// The API server caches a token's authentication for 10 seconds.
	require.True(t, waitUntil(func() bool { return !k.authenticated(oldToken) }), "a token of the deleted account is still accepted")

	require.True(t, waitUntil(func() bool {
		return k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet) &&
			ds.Spec.Template.Annotations[nmstate.AccountUIDAnnotation] == string(recreated.UID)
	}), "the handler's pod template was never stamped with the recreated account's UID: %v", ds.Spec.Template.Annotations)
	var fresh *corev1.Pod
	require.True(t, waitUntil(func() bool {
		fresh = o.pod(nmstate.HandlerDaemonSet, "worker-0")
		return fresh.UID != old.UID
	}), "the handler pod on worker-0 was never replaced")
	// As the kubelet would: the replaced pod's process ends, the new one's
	// starts.
	require.NoError(t, running.Stop())
	handler := o.run(nmstate.HandlerDaemonSet, "worker-0")
	require.True(t, k.authenticated(o.token(fresh)), "the new pod's token is refused")
	t.Logf("from the account's deletion to a new handler pod with an accepted token: %s", time.Since(deleted).Round(time.Millisecond))
	// The new handler works: it enacts a policy on worker-0.
	out, err := k.kubectlApply(realPolicy)
	require.NoError(t, err, out)
	k.waitPolicyCondition("worker-0-dummy", "Available", "True")
	requireRunning(t, handler)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)

	reasons := conditionReasons(t, history.stop(), nmstate.ConditionProgressing)
	assert.Contains(t, reasons, nmstate.ReasonRollingOut, "Progressing never showed the rollout: %v", reasons)
}

// token is the service account token the pod's process runs with.
func (o *operands) token(pod *corev1.Pod) string {
	o.k.t.Helper()
	cfg, err := clientcmd.LoadFromFile(filepath.Join(o.Runner.Dir, pod.Namespace+"_"+pod.Name, "kubeconfig"))
	require.NoError(o.k.t, err)
	require.Contains(o.k.t, cfg.AuthInfos, "sa")
	return cfg.AuthInfos["sa"].Token
}

// authenticated asks the API server, as a TokenReview, whether it accepts
// token.
func (k *cluster) authenticated(token string) bool {
	k.t.Helper()
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	require.NoError(k.t, k.c.Create(k.ctx(), review))
	return review.Status.Authenticated
}
