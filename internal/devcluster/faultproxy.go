package devcluster

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// FaultProxy is an HTTP proxy on loopback in front of the API server, for
// one client process that is not this one (CNO): it is given a kubeconfig
// for the proxy (plain HTTP, no credentials), and the proxy forwards each
// request with the administrator's credentials, unless Fault answers it
// instead. It also records what the client asked.
type FaultProxy struct {
	URL string
	srv *http.Server

	mu       sync.Mutex
	fault    func(*http.Request) int
	requests []ProxiedRequest
}

// ProxiedRequest is one request the client made and how it was answered.
type ProxiedRequest struct {
	Method, Path, Query string
	// Injected is the status code of an injected fault, 0 when forwarded.
	Injected int
	// Bytes is the size of the response body the client read, once the
	// response has ended (a watch's when it closes).
	Bytes int64
}

// countingWriter counts the body bytes written through it; Unwrap lets the
// reverse proxy flush a watch's stream through it.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// StartFaultProxy serves on a free loopback port until Close.
func StartFaultProxy(cfg *rest.Config) (*FaultProxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("parsing the API server's address: %w", err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the proxy's transport: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the fault proxy: %w", err)
	}
	p := &FaultProxy{URL: "http://" + l.Addr().String()}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1 // watches stream
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p.mu.Lock()
		code := 0
		if p.fault != nil {
			code = p.fault(req)
		}
		i := len(p.requests)
		p.requests = append(p.requests, ProxiedRequest{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery, Injected: code})
		p.mu.Unlock()
		cw := &countingWriter{ResponseWriter: w}
		if code != 0 {
			writeStatus(cw, code)
		} else {
			rp.ServeHTTP(cw, req)
		}
		p.mu.Lock()
		p.requests[i].Bytes = cw.n
		p.mu.Unlock()
	})}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

func writeStatus(w http.ResponseWriter, code int) {
	body, _ := json.Marshal(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Code: int32(code), Reason: metav1.StatusReasonInternalError, Message: "injected fault"})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// SetFault makes the proxy answer every request for which fault returns a
// status code with that code instead of forwarding it; nil ends the faults.
func (p *FaultProxy) SetFault(fault func(*http.Request) int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = fault
}

// Requests returns what the client asked so far.
func (p *FaultProxy) Requests() []ProxiedRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ProxiedRequest{}, p.requests...)
}

// WriteKubeconfig writes a kubeconfig for the proxy.
func (p *FaultProxy) WriteKubeconfig(path string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: p.URL}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	cfg.CurrentContext = "proxy"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing the proxy's kubeconfig: %w", err)
	}
	return os.Chmod(path, 0o600)
}

// Close stops serving.
func (p *FaultProxy) Close() error { return p.srv.Close() }

// IsList reports whether req lists or watches resource (the plural) of group
// ("" for the core group).
func IsList(req *http.Request, group, resource string) bool {
	if req.Method != http.MethodGet {
		return false
	}
	prefix := "/api/"
	if group != "" {
		prefix = "/apis/" + group + "/"
	}
	if !strings.HasPrefix(req.URL.Path, prefix) {
		return false
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	return parts[len(parts)-1] == resource
}

// IsDiscovery reports whether path is a discovery request: /api, /apis,
// /api/<version> or /apis/<group>/<version>, and nothing below them. A REST
// mapper that reloads makes these.
func IsDiscovery(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch parts[0] {
	case "api":
		return len(parts) <= 2
	case "apis":
		return len(parts) <= 3
	}
	return false
}
