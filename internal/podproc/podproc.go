// Package podproc stands in for a node's kubelet for the pods a test picks:
// it runs a pod's container as a local process of this machine, from the pod
// the workload controllers created, with the container's command, args and
// environment (fieldRef values resolved as the kubelet resolves them), a
// token of the pod's service account bound to the pod (a TokenRequest, as
// the kubelet's projected token), and its secret and hostPath volumes laid
// out in a directory of its own.
//
// What a container runtime would isolate cannot be here, and this is the one
// place that maps it:
//   - the process reaches the API server through KUBECONFIG (a kubeconfig
//     with the token), not through the in-cluster service address;
//   - the container's /tmp is the pod's own directory (TMPDIR), and a volume
//     mounted under /tmp is laid out inside it;
//   - any other volume is a directory of the pod's, and an environment value
//     naming a path inside a volume's mountPath is rewritten to that
//     directory (e.g. the handler's lock file);
//   - PATH starts with the directories the test gives, where it puts what
//     needs a real node (nmstatectl);
//   - a path the binary hard-codes outside any volume (upstream's handler
//     touches /tmp/healthy) is this machine's.
package podproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// Runner starts pods' containers as processes.
type Runner struct {
	// Config is an administrator's: it reads the pods' secrets and requests
	// their service accounts' tokens, as a kubelet does with its own rights.
	Config *rest.Config
	// Binaries maps a container's command[0] to the local binary to run.
	Binaries map[string]string
	// PathDirs come first in the process's PATH.
	PathDirs []string
	// Dir holds one directory per pod.
	Dir string
}

// Process is a running container, or any program Run started.
type Process struct {
	// Name is the pod's namespace/name, or the program's name.
	Name string
	// LogPath holds the process's output.
	LogPath string
	cmd     *exec.Cmd
	done    chan error
}

// Start runs the named container of pod, which must be bound to a node.
func (r *Runner) Start(ctx context.Context, pod *corev1.Pod, container string) (*Process, error) {
	if pod.Spec.NodeName == "" {
		return nil, fmt.Errorf("pod %s/%s is not bound to a node yet", pod.Namespace, pod.Name)
	}
	var ctr *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == container {
			ctr = &pod.Spec.Containers[i]
		}
	}
	if ctr == nil {
		return nil, fmt.Errorf("pod %s/%s has no container %q", pod.Namespace, pod.Name, container)
	}
	if len(ctr.Command) == 0 {
		return nil, fmt.Errorf("container %q of pod %s/%s has no command; the image's entrypoint is unknown here", container, pod.Namespace, pod.Name)
	}
	bin, ok := r.Binaries[ctr.Command[0]]
	if !ok {
		return nil, fmt.Errorf("no local binary for command %q of pod %s/%s", ctr.Command[0], pod.Namespace, pod.Name)
	}
	cs, err := kubernetes.NewForConfig(r.Config)
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	dir := filepath.Join(r.Dir, pod.Namespace+"_"+pod.Name)
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("creating the pod's directory: %w", err)
	}
	mounts, err := layOutVolumes(ctx, cs, pod, ctr, dir, tmp)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := r.writeKubeconfig(ctx, cs, pod, kubeconfig); err != nil {
		return nil, err
	}
	env, err := environment(pod, ctr, mounts)
	if err != nil {
		return nil, err
	}
	env = append(env, "KUBECONFIG="+kubeconfig, "TMPDIR="+tmp, "HOME="+dir,
		"PATH="+strings.Join(append(append([]string{}, r.PathDirs...), "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"), ":"))

	cmd := exec.Command(bin, append(append([]string{}, ctr.Command[1:]...), ctr.Args...)...)
	cmd.Env, cmd.Dir = env, dir
	return Run(pod.Namespace+"/"+pod.Name, cmd, filepath.Join(dir, container+".log"))
}

// Run starts cmd with its output in logPath, in a process group of its own
// (a stop reaches nothing else) that is killed if this process dies.
func Run(name string, cmd *exec.Cmd, logPath string) (*Process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating %s's log: %w", name, err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, cmd.Path, err)
	}
	_, _ = Track(name, cmd.Process.Pid)
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); log.Close() }()
	return p, nil
}

// Stop ends the process group (SIGTERM, then SIGKILL after 10s); a second
// call returns at once.
func (p *Process) Stop() error {
	if exited, _ := p.Exited(); exited {
		return nil
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		return nil
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		err := <-p.done
		p.done <- err
		return fmt.Errorf("%s did not stop within 10s of SIGTERM", p.Name)
	}
}

// Exited says whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case err := <-p.done:
		p.done <- err
		return true, err
	default:
		return false, nil
	}
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Log is what the process printed so far.
func (p *Process) Log() string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", p.LogPath, err)
	}
	return string(b)
}

// mount is where a volume's mountPath is laid out here.
type mount struct{ path, dir string }

func layOutVolumes(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, ctr *corev1.Container, dir, tmp string) ([]mount, error) {
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	var mounts []mount
	for _, vm := range ctr.VolumeMounts {
		v, ok := volumes[vm.Name]
		if !ok {
			return nil, fmt.Errorf("pod %s/%s mounts volume %q, which it does not define", pod.Namespace, pod.Name, vm.Name)
		}
		target := filepath.Join(dir, "volumes", vm.Name)
		if rel, err := filepath.Rel("/tmp", vm.MountPath); err == nil && !strings.HasPrefix(rel, "..") {
			target = filepath.Join(tmp, rel)
		}
		switch {
		case v.Secret != nil:
			if err := writeSecret(ctx, cs, pod.Namespace, v.Secret.SecretName, target); err != nil {
				return nil, err
			}
		case v.HostPath != nil:
			// A socket (D-Bus, Open vSwitch) is the node's daemon: absent here.
			if v.HostPath.Type != nil && *v.HostPath.Type == corev1.HostPathSocket {
				continue
			}
			if err := os.MkdirAll(target, 0o700); err != nil {
				return nil, fmt.Errorf("laying out volume %q: %w", vm.Name, err)
			}
		default:
			// Projected service-account tokens: KUBECONFIG carries the token.
			continue
		}
		mounts = append(mounts, mount{path: filepath.Clean(vm.MountPath), dir: target})
	}
	return mounts, nil
}

func writeSecret(ctx context.Context, cs kubernetes.Interface, namespace, name, dir string) error {
	s, err := cs.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading secret %s/%s for a volume: %w", namespace, name, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("laying out secret %s: %w", name, err)
	}
	for k, v := range s.Data {
		if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
			return fmt.Errorf("writing key %s of secret %s: %w", k, name, err)
		}
	}
	return nil
}

// writeKubeconfig requests a token of the pod's service account bound to the
// pod, as the kubelet does, and writes a kubeconfig that uses it.
func (r *Runner) writeKubeconfig(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, path string) error {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	tr, err := cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To[int64](3600),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("requesting a token of service account %s/%s: %w", pod.Namespace, sa, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: r.Config.Host, CertificateAuthorityData: r.Config.CAData}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["sa"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "sa", Namespace: pod.Namespace}
	cfg.CurrentContext = "sa"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing the pod's kubeconfig: %w", err)
	}
	return nil
}

// environment resolves the container's env as the kubelet does, then maps
// paths inside volumes to where they are laid out here.
func environment(pod *corev1.Pod, ctr *corev1.Container, mounts []mount) ([]string, error) {
	var env []string
	for _, e := range ctr.Env {
		value := e.Value
		if e.ValueFrom != nil {
			if e.ValueFrom.FieldRef == nil {
				return nil, fmt.Errorf("env %s of pod %s/%s: only value and fieldRef are supported here", e.Name, pod.Namespace, pod.Name)
			}
			v, err := fieldValue(pod, e.ValueFrom.FieldRef.FieldPath)
			if err != nil {
				return nil, fmt.Errorf("env %s of pod %s/%s: %w", e.Name, pod.Namespace, pod.Name, err)
			}
			value = v
		}
		for _, m := range mounts {
			if value == m.path || strings.HasPrefix(value, m.path+"/") {
				value = m.dir + strings.TrimPrefix(value, m.path)
			}
		}
		env = append(env, e.Name+"="+value)
	}
	return env, nil
}

var errUnsupportedField = errors.New("unsupported fieldPath")

func fieldValue(pod *corev1.Pod, path string) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		return pod.Status.PodIP, nil
	case "status.hostIP":
		return pod.Status.HostIP, nil
	}
	return "", fmt.Errorf("%w %q", errUnsupportedField, path)
}
