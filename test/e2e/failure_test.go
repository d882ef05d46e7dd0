package e2e

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/rest"

	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// failApplies answers every PATCH outside the status subresource with a 500
// while on is set.
type failApplies struct {
	on   atomic.Bool
	next http.RoundTripper
}

func (f *failApplies) RoundTrip(req *http.Request) (*http.Response, error) {
	if f.on.Load() && req.Method == http.MethodPatch && !strings.HasSuffix(req.URL.Path, "/status") {
		return &http.Response{StatusCode: http.StatusInternalServerError, Request: req, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected","reason":"InternalError","code":500}`))}, nil
	}
	return f.next.RoundTrip(req)
}

// An API error that persists past the grace period is reported as Degraded
// and clears once the server recovers; nothing is torn down meanwhile.
func TestPersistentAPIErrorsAreDegraded(t *testing.T) {
	k := startCluster(t, clusterOption{})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	faults := &failApplies{}
	cfg := rest.CopyConfig(k.cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { faults.next = rt; return faults }
	k.startHostWith(cfg, func(o *controller.Options) { o.FailureGrace = time.Second })
	ds := &appsv1.DaemonSet{}
	k.waitExists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)

	faults.on.Store(true)
	k.patchNetwork(`{"spec":{"kubernetesNMState":{"handlerPlacement":{"nodeSelector":{"node-role.kubernetes.io/worker":""}}}}}`)
	c := k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionTrue, nmstate.ReasonFailed)
	assert.Contains(t, c.Message, "injected")
	assert.True(t, k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet), "a failing apply deletes nothing")

	faults.on.Store(false)
	k.waitCondition(nmstate.ConditionDegraded, operv1.ConditionFalse, nmstate.ReasonAsExpected)
	k.exists(ds, nmstate.Namespace, nmstate.HandlerDaemonSet)
	assert.Equal(t, "", ds.Spec.Template.Spec.NodeSelector["node-role.kubernetes.io/worker"])
	assert.Contains(t, ds.Spec.Template.Spec.NodeSelector, "node-role.kubernetes.io/worker")
}
