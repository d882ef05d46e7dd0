package e2e

// One writer: `cno-nmstate run` hosts elect a leader with a Lease, and only
// the leader writes.

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/internal/devcluster"
	"github.com/cno-nmstate/cno-nmstate/internal/podproc"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

const (
	// leaseNamespace and leaseName are `cno-nmstate run`'s defaults.
	leaseNamespace = "openshift-network-operator"
	leaseName      = "cno-nmstate-lock"
	// standbyAttempts is how many times the second host must have tried to
	// take the Lease while two hosts are watched side by side: some 60 s at
	// one try per retry period, longer on a loaded machine.
	standbyAttempts = 30
	// leaseRetryPeriod is controller-runtime's default: the leader renews
	// its Lease this often, which bounds the writes of leader election.
	leaseRetryPeriod = 2 * time.Second
)

var leases = resource{"coordination.k8s.io", "v1", "leases", "Lease", ""}

// applyHostRBAC applies the host's RBAC manifest after CNO's namespace,
// which holds its leader Role (on OpenShift, CNO's own manifests create it
// earlier).
func (k *cluster) applyHostRBAC() {
	k.t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}}
	require.NoError(k.t, client.IgnoreAlreadyExists(k.c.Create(k.ctx(), ns)))
	k.applyAsAdmin(readManifests(k.t, hostRBACManifest))
}

// TestRunOneWriter runs two `cno-nmstate run` processes with different
// environments (handler images) against one cluster, both as CNO's service
// account with only the host RBAC manifest. From the second one's start
// until it has tried to take the Lease 30 times, the second writes nothing
// at all; the first, the leader, renews its Lease at most once per retry
// period and writes no condition; no condition
// changes, nor the DaemonSet's or Deployment's spec. Then the first stops
// and the second takes over with its own image, which shows it was able to
// write all along.
func TestRunOneWriter(t *testing.T) {
	k := startCluster(t, clusterOption{nodes: devcluster.BareMetalNodes(), auditLog: true})
	k.applyHostRBAC()
	require.True(t, waitUntil(func() bool {
		return k.allowed(hostUser, "update", leases, leaseNamespace, leaseName)
	}), "the leader Role never took effect: %s may still not update Lease %s/%s", hostUser, leaseNamespace, leaseName)
	t.Run("the Lease RBAC", func(t *testing.T) {
		for _, a := range []access{
			allow(hostUser, "create", leases, leaseNamespace, ""),
			allow(hostUser, "get", leases, leaseNamespace, leaseName),
			allow(hostUser, "update", leases, leaseNamespace, leaseName),
			deny(hostUser, "update", leases, leaseNamespace, "network-operator-lock"),
			deny(hostUser, "delete", leases, leaseNamespace, leaseName),
			deny(hostUser, "create", leases, "kube-system", ""),
		} {
			t.Run(a.String(), func(t *testing.T) { k.checkAccess(t, a) })
		}
	})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	bin := buildCommand(t)
	const imageA, imageB = handlerImage, handlerImage + "-other"

	hostA := k.startRun(bin, "e2e:host-a", imageA)
	k.waitOperandsSettled(6, 2)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionTrue, nmstate.ReasonPlatformDefault)
	k.waitCondition(nmstate.ConditionProgressing, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	conditions, generations := k.conditions(), k.operandGenerations()

	start := time.Now()
	hostB := k.startRun(bin, "e2e:host-b", imageB)
	require.True(t, waitUntil(func() bool { return len(k.hostRequests("e2e:host-b", start, time.Now())) > 0 }),
		"the second host never reached the API server; its log:\n%s", hostB.Log())
	// The window is counted in the standby's tries, not in seconds: a
	// standby that never tried would prove nothing.
	var tries int
	require.True(t, waitFor(5*time.Minute, func() bool {
		tries = len(matching(k.hostRequests("e2e:host-b", start, time.Now()), "leases", "get"))
		return tries >= standbyAttempts
	}), "the second host tried to take the Lease %d times, not %d; its log:\n%s", tries, standbyAttempts, hostB.Log())
	end := time.Now()

	leader, standby := k.hostRequests("e2e:host-a", start, end), k.hostRequests("e2e:host-b", start, end)
	t.Logf("writes in %s with two hosts: leader %v, standby %v", end.Sub(start).Round(time.Second), writeCounts(leader), writeCounts(standby))
	assert.Empty(t, matching(standby, "", writeVerbs...), "the host without the Lease wrote")
	assert.Empty(t, matching(leader, "networks/status", writeVerbs...), "the leader wrote conditions with nothing to change")
	assert.LessOrEqual(t, len(matching(leader, "leases", writeVerbs...)), int(end.Sub(start)/leaseRetryPeriod)+1,
		"Lease writes beyond one renewal per retry period")
	// The leader re-applies an object whose status a controller changed
	// (a new resourceVersion); such an apply changes no spec.
	assert.Equal(t, generations, k.operandGenerations(), "the DaemonSet's or Deployment's spec changed")
	assert.Equal(t, conditions, k.conditions(), "a condition changed")
	assert.Equal(t, imageA, k.handlerImage())

	require.NoError(t, hostA.Stop())
	exited, err := hostA.Exited()
	require.True(t, exited)
	require.NoError(t, err, "the leader's exit on SIGTERM:\n%s", hostA.Log())
	require.True(t, waitUntil(func() bool { return k.handlerImage() == imageB }),
		"the second host never took over; its log:\n%s", hostB.Log())
	var sinceEnd []hostRequest
	assert.True(t, waitUntil(func() bool {
		sinceEnd = k.hostRequests("e2e:host-b", end, time.Now())
		return len(matching(sinceEnd, "networks/status", "patch")) > 0
	}), "the new leader never wrote the conditions of its rollout; its %d requests since: %v", len(sinceEnd), sinceEnd)

	for _, h := range []*podproc.Process{hostA, hostB} {
		assert.Empty(t, errorLines(h.Log()), "%s logged errors", h.Name)
		for _, r := range k.hostRequests(h.Name, time.Time{}, time.Now()) {
			assert.NotEqual(t, 403, r.code, "%s was refused %s %s %s", h.Name, r.verb, r.resource, r.object)
		}
	}
}

// buildCommand builds cmd/cno-nmstate, as `make build` does.
func buildCommand(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cno-nmstate")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/cno-nmstate/cno-nmstate/cmd/cno-nmstate").CombinedOutput()
	require.NoError(t, err, "building cno-nmstate: %s", out)
	return bin
}

// startRun starts `cno-nmstate run` as CNO's service account, with a group of
// its own that tells its requests apart in the audit log, the handler image
// in its environment, and no other kubeconfig to find than its flag's.
func (k *cluster) startRun(bin, group, image string, args ...string) *podproc.Process {
	t := k.t
	t.Helper()
	dir := t.TempDir()
	cfg, err := clientcmd.Load(k.dc.Kubeconfig)
	require.NoError(t, err)
	for _, user := range cfg.AuthInfos {
		user.Impersonate = hostUser
		user.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + leaseNamespace, group}
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, kubeconfig))
	cmd := exec.Command(bin, append([]string{"run", "--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = []string{"HOME=" + dir, nmstate.EnvHandlerImage + "=" + image, nmstate.EnvReleaseVersion + "=4.99.0-e2e"}
	p, err := podproc.Run(group, cmd, filepath.Join(dir, "run.log"))
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = p.Stop()
		if t.Failed() {
			t.Logf("--- %s's output:\n%s", group, p.Log())
		}
	})
	return p
}

// hostRequest is one request of a `run` host, as the audit log has it.
type hostRequest struct {
	verb, resource, object string // resource with its subresource: "networks/status"
	code                   int
}

// hostRequests are the completed requests of the host whose kubeconfig
// carries group, received in [from, to).
func (k *cluster) hostRequests(group string, from, to time.Time) []hostRequest {
	k.t.Helper()
	events, err := readAudit(k.dc.AuditLog)
	require.NoError(k.t, err)
	var out []hostRequest
	for _, e := range events {
		if e.Stage != "ResponseComplete" || e.ImpersonatedUser == nil || e.ImpersonatedUser.Username != hostUser ||
			!slices.Contains(e.ImpersonatedUser.Groups, group) || e.ObjectRef == nil ||
			e.RequestReceivedTimestamp.Before(from) || !e.RequestReceivedTimestamp.Before(to) {
			continue
		}
		r := hostRequest{verb: e.Verb, resource: e.ObjectRef.Resource, object: e.ObjectRef.Namespace + "/" + e.ObjectRef.Name}
		if e.ObjectRef.Subresource != "" {
			r.resource += "/" + e.ObjectRef.Subresource
		}
		if e.ResponseStatus != nil {
			r.code = e.ResponseStatus.Code
		}
		out = append(out, r)
	}
	return out
}

// matching keeps the requests with one of verbs on resource ("" for any).
func matching(requests []hostRequest, resource string, verbs ...string) []hostRequest {
	var out []hostRequest
	for _, r := range requests {
		if slices.Contains(verbs, r.verb) && (resource == "" || r.resource == resource) {
			out = append(out, r)
		}
	}
	return out
}

// writeVerbs are the verbs that change something.
var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// writeCounts counts requests by verb and resource.
func writeCounts(requests []hostRequest) map[string]int {
	out := map[string]int{}
	for _, r := range matching(requests, "", writeVerbs...) {
		out[r.verb+" "+r.resource]++
	}
	return out
}

// operandGenerations are the handler DaemonSet's and webhook Deployment's
// generations: each change of their spec bumps them.
func (k *cluster) operandGenerations() [2]int64 {
	k.t.Helper()
	ds, dep := &appsv1.DaemonSet{}, &appsv1.Deployment{}
	require.True(k.t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	require.True(k.t, k.exists(dep, nmstate.Namespace, nmstate.WebhookDeployment))
	return [2]int64{ds.Generation, dep.Generation}
}

func (k *cluster) handlerImage() string {
	k.t.Helper()
	ds := &appsv1.DaemonSet{}
	require.True(k.t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet))
	return ds.Spec.Template.Spec.Containers[0].Image
}

// errorLines are the error-level entries of a host's JSON log.
func errorLines(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"level":"error"`) {
			out = append(out, line)
		}
	}
	return out
}

// allowed asks the API server whether user may do verb on r.
func (k *cluster) allowed(user, verb string, r resource, namespace, name string) bool {
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: verb, Group: r.group, Resource: r.plural, Name: name}}}
	return k.clientFor(k.impersonating(user)).Create(k.ctx(), review) == nil && review.Status.Allowed
}
