package devcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/cno-nmstate/cno-nmstate/internal/podproc"
)

// OperatorBinary is upstream's standalone operator (cmd/operator) as
// `make tools` builds it into the assets directory.
const OperatorBinary = "kubernetes-nmstate-operator"

// operatorBindata is where upstream's operator image puts its templates
// (build/Dockerfile.operator of v0.86.0): the operator reads them from
// ./bindata. The console plugin's templates are left out: the console API
// is not served here, and the operator renders them only when they exist.
var operatorBindata = map[string]string{
	"deploy/crds/nmstate.io_nodenetworkconfigurationenactments.yaml": "crds/",
	"deploy/crds/nmstate.io_nodenetworkconfigurationpolicies.yaml":   "crds/",
	"deploy/crds/nmstate.io_nodenetworkstates.yaml":                  "crds/",
	"deploy/handler/namespace.yaml":                                  "namespace/",
	"deploy/handler/operator.yaml":                                   "handler/handler.yaml",
	"deploy/handler/service_account.yaml":                            "rbac/",
	"deploy/handler/role.yaml":                                       "rbac/",
	"deploy/handler/role_binding.yaml":                               "rbac/",
	"deploy/handler/cluster_role.yaml":                               "rbac/",
	"deploy/handler/network_policy.yaml":                             "netpol/handler.yaml",
}

// LayOutOperatorImage writes, under dir, the templates upstream's operator
// image carries, from the module version hack/build-nmstate.sh builds; the
// operator runs with dir as its working directory.
func LayOutOperatorImage(dir, version string) error {
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/nmstate/kubernetes-nmstate@"+version).Output()
	if err != nil {
		return fmt.Errorf("downloading kubernetes-nmstate %s: %w", version, err)
	}
	module := ""
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), `"Dir": "`); ok {
			module = strings.TrimSuffix(v, `",`)
		}
	}
	if module == "" {
		return fmt.Errorf("no directory for kubernetes-nmstate %s in: %s", version, out)
	}
	for src, dst := range operatorBindata {
		target := filepath.Join(dir, "bindata", "kubernetes-nmstate", dst)
		if strings.HasSuffix(dst, "/") {
			target = filepath.Join(target, filepath.Base(src))
		}
		b, err := os.ReadFile(filepath.Join(module, src))
		if err != nil {
			return fmt.Errorf("reading the operator's template %s: %w", src, err)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fmt.Errorf("laying out the operator's templates: %w", err)
		}
		if err := os.WriteFile(target, b, 0o644); err != nil {
			return fmt.Errorf("laying out the operator's templates: %w", err)
		}
	}
	return nil
}

// OperatorHandlerImage is the handler image the operator is told to deploy:
// upstream's, so that its DaemonSet is told apart from the plugin's.
const OperatorHandlerImage = "quay.io/nmstate/kubernetes-nmstate-handler:v0.86.0"

// StartOperator starts upstream's operator (cmd/operator v0.86.0, OperatorBinary
// in assets) as a process, with the templates its image carries laid out in
// dir, its working directory, and the environment its CSV sets, its handler
// and operator namespace set to namespace. It runs with kubeconfig: it
// stands for what OLM installs with its own RBAC, which is not what is under
// test. Its metrics server is off in its code (BindAddress "0"); its health
// probes bind :8081, which no flag moves, inside the caller's network
// namespace.
func StartOperator(assets, dir, kubeconfig, namespace string) (*podproc.Process, error) {
	if err := LayOutOperatorImage(dir, "v0.86.0"); err != nil {
		return nil, err
	}
	op := exec.Command(filepath.Join(assets, OperatorBinary))
	op.Dir = dir
	op.Env = []string{"KUBECONFIG=" + kubeconfig, "PATH=/usr/bin:/bin",
		"HANDLER_NAMESPACE=" + namespace, "OPERATOR_NAMESPACE=" + namespace, "HANDLER_PREFIX=",
		"RELATED_IMAGE_HANDLER_IMAGE=" + OperatorHandlerImage, "HANDLER_IMAGE_PULL_POLICY=IfNotPresent",
		"MONITORING_NAMESPACE=openshift-monitoring", "KUBE_RBAC_PROXY_IMAGE=quay.io/openshift/origin-kube-rbac-proxy:latest"}
	p, err := podproc.Run(OperatorBinary, op, filepath.Join(dir, "operator.log"))
	if err != nil {
		return nil, fmt.Errorf("starting the standalone operator: %w", err)
	}
	return p, nil
}

// OperatorDeployment is the Deployment OLM creates for the standalone
// operator in namespace, with replicas, as the plugin finds it: by its label
// app=kubernetes-nmstate-operator. It stands for OLM, another operator: on a
// cluster with nodes the workload controllers and kwok make its pod Ready,
// which is all the plugin reads of it; no process runs in that pod, and
// StartOperator runs the operator itself.
func OperatorDeployment(namespace string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "kubernetes-nmstate-operator"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "nmstate-operator", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nmstate-operator", Image: "quay.io/nmstate/kubernetes-nmstate-operator:v0.86.0"}}},
			},
		},
	}
}
