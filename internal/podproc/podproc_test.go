package podproc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "nmstate-handler-abcde", Namespace: "openshift-nmstate", UID: "u-1"},
		Spec: corev1.PodSpec{
			NodeName: "worker-0", ServiceAccountName: "nmstate-handler",
			Volumes: []corev1.Volume{
				{Name: "lock", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/k8s_nmstate", Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}},
				{Name: "dbus", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/run/dbus/system_bus_socket", Type: ptr.To(corev1.HostPathSocket)}}},
				{Name: "certs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "serving"}}},
			},
			Containers: []corev1.Container{{
				Name: "c", Command: []string{"manager"},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "lock", MountPath: "/var/k8s_nmstate"},
					{Name: "dbus", MountPath: "/run/dbus/system_bus_socket"},
					{Name: "certs", MountPath: "/tmp/k8s-webhook-server/serving-certs/"},
				},
			}},
		},
		Status: corev1.PodStatus{PodIP: "127.100.0.7", HostIP: "127.0.0.1"},
	}
}

func TestEnvironment(t *testing.T) {
	mounts := []mount{{path: "/var/k8s_nmstate", dir: "/pods/x/volumes/lock"}}
	tests := []struct {
		name    string
		env     corev1.EnvVar
		want    string
		wantErr string
	}{
		{"plain value", corev1.EnvVar{Name: "A", Value: "x"}, "A=x", ""},
		{"empty value", corev1.EnvVar{Name: "RUN_WEBHOOK_SERVER"}, "RUN_WEBHOOK_SERVER=", ""},
		{"pod name", fieldRef("POD_NAME", "metadata.name"), "POD_NAME=nmstate-handler-abcde", ""},
		{"namespace", fieldRef("POD_NAMESPACE", "metadata.namespace"), "POD_NAMESPACE=openshift-nmstate", ""},
		{"node", fieldRef("NODE_NAME", "spec.nodeName"), "NODE_NAME=worker-0", ""},
		{"pod IP", fieldRef("IP", "status.podIP"), "IP=127.100.0.7", ""},
		{"path in a volume is mapped", corev1.EnvVar{Name: "LOCK", Value: "/var/k8s_nmstate/handler_lock"}, "LOCK=/pods/x/volumes/lock/handler_lock", ""},
		{"the mount path itself", corev1.EnvVar{Name: "D", Value: "/var/k8s_nmstate"}, "D=/pods/x/volumes/lock", ""},
		{"a sibling path is not", corev1.EnvVar{Name: "D", Value: "/var/k8s_nmstate2/x"}, "D=/var/k8s_nmstate2/x", ""},
		{"unknown field", fieldRef("X", "metadata.labels['a']"), "", `unsupported fieldPath "metadata.labels['a']"`},
		{"secret ref", corev1.EnvVar{Name: "S", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}}, "", "only value and fieldRef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod()
			pod.Spec.Containers[0].Env = []corev1.EnvVar{tt.env}
			got, err := environment(pod, &pod.Spec.Containers[0], mounts)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []string{tt.want}, got)
		})
	}
}

func fieldRef(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

func TestLayOutVolumes(t *testing.T) {
	cs := fake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "serving", Namespace: "openshift-nmstate"},
		Data:       map[string][]byte{"tls.crt": []byte("CRT"), "tls.key": []byte("KEY")},
	})
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	pod := testPod()
	mounts, err := layOutVolumes(context.Background(), cs, pod, &pod.Spec.Containers[0], dir, tmp)
	require.NoError(t, err)
	assert.Equal(t, []mount{
		{path: "/var/k8s_nmstate", dir: filepath.Join(dir, "volumes", "lock")},
		{path: "/tmp/k8s-webhook-server/serving-certs", dir: filepath.Join(tmp, "k8s-webhook-server", "serving-certs")},
	}, mounts, "the socket is the node's daemon and stays absent; a mount under /tmp lands in the pod's /tmp")
	crt, err := os.ReadFile(filepath.Join(tmp, "k8s-webhook-server", "serving-certs", "tls.crt"))
	require.NoError(t, err)
	assert.Equal(t, "CRT", string(crt))
	assert.DirExists(t, filepath.Join(dir, "volumes", "lock"))
	assert.NoDirExists(t, filepath.Join(dir, "volumes", "dbus"))

	_, err = layOutVolumes(context.Background(), fake.NewClientset(), pod, &pod.Spec.Containers[0], t.TempDir(), tmp)
	require.ErrorContains(t, err, "reading secret openshift-nmstate/serving", "a missing secret is an error the caller retries, as a kubelet waits")
}

func TestStartRefuses(t *testing.T) {
	r := &Runner{Binaries: map[string]string{"manager": "/bin/true"}, Dir: t.TempDir()}
	unbound := testPod()
	unbound.Spec.NodeName = ""
	noCommand := testPod()
	noCommand.Spec.Containers[0].Command = nil
	otherCommand := testPod()
	otherCommand.Spec.Containers[0].Command = []string{"operator"}
	tests := []struct {
		name      string
		pod       *corev1.Pod
		container string
		want      string
	}{
		{"unbound pod", unbound, "c", "is not bound to a node yet"},
		{"unknown container", testPod(), "d", `has no container "d"`},
		{"no command", noCommand, "c", "has no command"},
		{"no binary for the command", otherCommand, "c", `no local binary for command "operator"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Start(context.Background(), tt.pod, tt.container)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// TestRunStop: Stop ends the process group, and a second Stop returns at
// once instead of signalling a group that may no longer be this one.
func TestRunStop(t *testing.T) {
	p, err := Run("sleeper", exec.Command("sleep", "30"), filepath.Join(t.TempDir(), "sleeper.log"))
	require.NoError(t, err)
	exited, _ := p.Exited()
	require.False(t, exited)
	require.NoError(t, p.Stop())
	exited, err = p.Exited()
	assert.True(t, exited)
	assert.Error(t, err, "ended by SIGTERM")
	require.NoError(t, p.Stop())
}
