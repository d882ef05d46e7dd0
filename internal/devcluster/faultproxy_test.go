package devcluster

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

// The proxy records each request with the bytes its client read, forwarded
// or answered with an injected fault.
func TestFaultProxyRecordsBytes(t *testing.T) {
	body := `{"kind":"APIGroupList","groups":[]}`
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, body) }))
	defer api.Close()
	p, err := StartFaultProxy(&rest.Config{Host: api.URL})
	require.NoError(t, err)
	defer p.Close()
	get := func(path string) int {
		resp, err := http.Get(p.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, get("/apis"))
	p.SetFault(func(*http.Request) int { return http.StatusServiceUnavailable })
	assert.Equal(t, http.StatusServiceUnavailable, get("/apis/apps/v1/daemonsets?limit=2"))

	got := p.Requests()
	require.Len(t, got, 2)
	assert.Equal(t, ProxiedRequest{Method: "GET", Path: "/apis", Bytes: int64(len(body))}, got[0])
	assert.Equal(t, "limit=2", got[1].Query)
	assert.Equal(t, http.StatusServiceUnavailable, got[1].Injected)
	assert.NotZero(t, got[1].Bytes, "the injected Status is read too")
}

func TestIsDiscovery(t *testing.T) {
	for path, want := range map[string]bool{
		"/api": true, "/apis": true, "/api/v1": true, "/apis/apps/v1": true, "/apis/nmstate.io": true,
		"/api/v1/namespaces": false, "/apis/apps/v1/daemonsets": false, "/apis/nmstate.io/v1/nmstates": false,
		"/healthz": false, "/": false,
	} {
		assert.Equal(t, want, IsDiscovery(path), path)
	}
}
