package devcluster

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClusterReaderRole is OpenShift's read-everything role.
const ClusterReaderRole = "cluster-reader"

// clusterReader stands in for OpenShift's bootstrap RBAC, which kube-apiserver
// creates on OpenShift and upstream kube-apiserver does not: the
// cluster-reader ClusterRole, with the aggregation rule of openshift/origin's
// bootstrap policy (pkg/cmd/server/bootstrappolicy/policy.go) and no rules of
// its own. The rules are what the real kube-controller-manager's
// clusterrole-aggregation controller copies in from every ClusterRole with a
// selected label (on OpenShift, system:openshift:aggregate-to-cluster-reader
// among them, which this cluster does not have). Nothing else of OpenShift's
// RBAC is stood in for.
func clusterReader() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterReaderRole},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-cluster-reader": "true"}},
			{MatchLabels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
		}},
	}
}

// createClusterReader creates the stand-in. Its rules stay empty on a
// cluster without nodes, where no kube-controller-manager runs.
func createClusterReader(ctx context.Context, c client.Client) error {
	if err := c.Create(ctx, clusterReader()); err != nil {
		return fmt.Errorf("creating OpenShift's %s ClusterRole (stand-in): %w", ClusterReaderRole, err)
	}
	return nil
}
