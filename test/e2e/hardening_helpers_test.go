package e2e

// Helpers for security_test.go and faults_test.go.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// runHost is startHostWith with a stop function, for tests that stop a host
// and start another one before the test ends.
func (k *cluster) runHost(cfg *rest.Config, opts ...hostOption) (stop func() error) {
	k.t.Helper()
	_, stop = k.launchHost(cfg, opts...)
	return stop
}

// objectKey names a rendered object in messages and maps.
func objectKey(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

// snapshot is the UID of every rendered object, to tell later whether any
// was deleted or recreated.
type snapshot struct {
	gvk  map[string]schema.GroupVersionKind
	ns   map[string]string
	name map[string]string
	uid  map[string]types.UID
}

// waitSnapshot waits until every object exists on the server and records
// its UID.
func (k *cluster) waitSnapshot(objs []*unstructured.Unstructured) snapshot {
	k.t.Helper()
	s := snapshot{gvk: map[string]schema.GroupVersionKind{}, ns: map[string]string{}, name: map[string]string{}, uid: map[string]types.UID{}}
	for _, obj := range objs {
		key := objectKey(obj.GetKind(), obj.GetNamespace(), obj.GetName())
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(obj.GroupVersionKind())
		require.True(k.t, waitUntil(func() bool {
			return k.c.Get(k.ctx(), client.ObjectKeyFromObject(obj), got) == nil
		}), "%s was never created", key)
		s.gvk[key], s.ns[key], s.name[key], s.uid[key] = obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName(), got.GetUID()
	}
	return s
}

// lost lists the snapshot's objects that are gone or were recreated (new UID).
func (k *cluster) lost(s snapshot) []string {
	k.t.Helper()
	var out []string
	for key, uid := range s.uid {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(s.gvk[key])
		err := k.c.Get(k.ctx(), client.ObjectKey{Namespace: s.ns[key], Name: s.name[key]}, got)
		switch {
		case apierrors.IsNotFound(err):
			out = append(out, key+" deleted")
		case err != nil:
			require.NoError(k.t, err, "reading %s", key)
		case got.GetUID() != uid:
			out = append(out, fmt.Sprintf("%s recreated (UID %s, was %s)", key, got.GetUID(), uid))
		case got.GetDeletionTimestamp() != nil:
			out = append(out, key+" being deleted")
		}
	}
	sort.Strings(out)
	return out
}

// accessOf are the ServiceAccounts and RBAC among objs: what the
// workloads' pods run under, kept until those pods are gone.
func accessOf(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range objs {
		switch obj.GetKind() {
		case "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding":
			out = append(out, obj)
		}
	}
	return out
}

// readManifests decodes every YAML document of a file.
func readManifests(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err, "opening %s", path)
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "decoding %s", path)
		}
		if len(obj.Object) == 0 {
			continue
		}
		out = append(out, obj)
	}
	require.NotEmpty(t, out, "%s has no objects", path)
	return out
}

// applyAsAdmin server-side applies objects with the admin client.
func (k *cluster) applyAsAdmin(objs []*unstructured.Unstructured) {
	k.t.Helper()
	for _, obj := range objs {
		require.NoError(k.t, k.c.Apply(k.ctx(), client.ApplyConfigurationFromUnstructured(obj.DeepCopy()), client.FieldOwner("e2e-admin"), client.ForceOwnership),
			"applying %s", objectKey(obj.GetKind(), obj.GetNamespace(), obj.GetName()))
	}
}

// impersonating is the admin config acting as user (its groups are the
// ones the API server gives that user, e.g. a service account's).
func (k *cluster) impersonating(user string) *rest.Config {
	cfg := rest.CopyConfig(k.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg
}

func serviceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// clientFor is an uncached client for cfg.
func (k *cluster) clientFor(cfg *rest.Config) client.Client {
	k.t.Helper()
	scheme, err := controller.NewScheme()
	require.NoError(k.t, err)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	require.NoError(k.t, err, "creating a client")
	return c
}

// waitDegraded waits for KubernetesNMStateDegraded=True with reason and a
// message containing every substring, and returns the message.
func (k *cluster) waitDegraded(reason string, substrings ...string) string {
	k.t.Helper()
	var last string
	ok := waitUntil(func() bool {
		c := k.conditions()[nmstate.ConditionDegraded]
		last = string(c.Status) + "/" + c.Reason + ": " + c.Message
		if c.Status != operv1.ConditionTrue || c.Reason != reason {
			return false
		}
		for _, s := range substrings {
			if !strings.Contains(c.Message, s) {
				return false
			}
		}
		return true
	})
	require.True(k.t, ok, "Degraded never became True/%s with %q; last: %.400s", reason, substrings, last)
	return k.conditions()[nmstate.ConditionDegraded].Message
}

// reconcileCounter counts the host's reconciles that got past applying and
// pruning: each reads Options.Now once it has (and a failing one once more
// before), so a test can wait for a reconcile that started after a change
// instead of sleeping or waiting for a condition that may already hold.
type reconcileCounter struct{ n atomic.Int64 }

func (c *reconcileCounter) option() hostOption {
	return func(o *controller.Options) {
		o.Now = func() time.Time {
			c.n.Add(1)
			return time.Now()
		}
	}
}

// after runs change, then waits until a reconcile has finished its sync
// after it. Callers make the change on a settled host (the recheck is an
// hour away), so no reconcile of an earlier event is still in flight.
func (c *reconcileCounter) after(t *testing.T, change func()) {
	t.Helper()
	before := c.n.Load()
	change()
	require.True(t, waitUntil(func() bool { return c.n.Load() > before }), "no reconcile ran after the change (%d before and since)", before)
}
