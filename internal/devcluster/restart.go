package devcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// RestartAPIServer stops kube-apiserver as a restart of its static pod does
// (SIGTERM: it stops listening and drains the requests in flight), runs
// whileDown, and starts it again on the same address with the same
// certificates, client CA and service-account keys (see Start), so every
// client, kubeconfig and token keeps working once it is back. etcd, and
// every object in it, is untouched.
func (c *Cluster) RestartAPIServer(whileDown func()) error {
	api := c.env.ControlPlane.APIServer
	if err := api.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	whileDown()
	if err := c.withLogs(api.Start); err != nil {
		return fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	return nil
}

// RestartEtcd stops etcd as a crashed or restarting member looks to
// kube-apiserver (SIGTERM: its client port refuses connections, and the API
// server's requests fail or wait), runs whileDown, and starts it again on
// the same client address with the same data directory: no object is lost.
// kube-apiserver keeps running throughout and reconnects by itself.
func (c *Cluster) RestartEtcd(whileDown func()) error {
	etcd := c.env.ControlPlane.Etcd
	if err := etcd.Stop(); err != nil {
		return fmt.Errorf("stopping etcd: %w", err)
	}
	whileDown()
	if err := c.withLogs(etcd.Start); err != nil {
		return fmt.Errorf("starting etcd again: %w", err)
	}
	return nil
}

// EtcdURL is etcd's client address, for a test that reads its history
// directly: a watch through kube-apiserver cannot resume across the API
// server's restart.
func (c *Cluster) EtcdURL() string {
	return c.env.ControlPlane.Etcd.URL.String()
}

// withLogs runs start with etcd's and kube-apiserver's output appended to
// their logs in Dir (a started process keeps its own descriptors), then
// records what it started, also when it failed half-way: every start and
// restart of the control plane goes through here.
func (c *Cluster) withLogs(start func() error) (err error) {
	defer c.trackControlPlane()
	etcdLog, err := os.OpenFile(filepath.Join(c.Dir, "etcd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening etcd's log: %w", err)
	}
	defer func() { err = errors.Join(err, etcdLog.Close()) }()
	apiLog, err := os.OpenFile(filepath.Join(c.Dir, "kube-apiserver.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening kube-apiserver's log: %w", err)
	}
	defer func() { err = errors.Join(err, apiLog.Close()) }()
	etcd, api := c.env.ControlPlane.Etcd, c.env.ControlPlane.GetAPIServer()
	etcd.Out, etcd.Err, api.Out, api.Err = etcdLog, etcdLog, apiLog, apiLog
	return start()
}
