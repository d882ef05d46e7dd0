package nmstate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The cluster-reader role reads the three nmstate kinds and nothing else,
// in every topology; test/e2e/readers_test.go shows OpenShift's aggregation
// and the server's authorization doing the rest.
func TestRenderClusterReader(t *testing.T) {
	for name, c := range map[string]cluster{"ha": haCluster, "sno": snoCluster, "hosted": hostedCluster} {
		t.Run(name, func(t *testing.T) {
			objs := mustRender(t, Config{Mode: ModeEnabled}, c)
			role := typed[rbacv1.ClusterRole](t, objs, "ClusterRole", "", ClusterReaderRole)
			assert.Equal(t, []rbacv1.PolicyRule{{
				APIGroups: []string{"nmstate.io"},
				Resources: []string{"nodenetworkconfigurationpolicies", "nodenetworkconfigurationenactments", "nodenetworkstates"},
				Verbs:     []string{"get", "list", "watch"},
			}}, role.Rules, "read-only, no status subresources, no nonResourceURLs (upstream's /metrics)")
			assert.Equal(t, "true", role.Labels["rbac.authorization.k8s.io/aggregate-to-cluster-reader"])
			for label := range role.Labels {
				if strings.HasPrefix(label, "rbac.authorization.k8s.io/aggregate-to-") {
					assert.Equal(t, "rbac.authorization.k8s.io/aggregate-to-cluster-reader", label,
						"cluster-scoped kinds have no place in the namespace roles view, edit and admin")
				}
			}
			assert.Nil(t, role.AggregationRule)
			for _, o := range objs {
				if o.GetKind() == "ClusterRoleBinding" || o.GetKind() == "RoleBinding" {
					roleRef, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
					assert.NotEqual(t, ClusterReaderRole, roleRef, "%s %s: the role is bound through cluster-reader, never directly", o.GetKind(), o.GetName())
				}
			}
		})
	}
}
