package loopdns

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resolver dials srv the way upstream's DNS probe dials a node's server:
// a Go resolver whose Dial ignores the configured servers.
func resolver(network, addr string) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
}

func start(t *testing.T) *Server {
	t.Helper()
	srv, err := Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Close()) })
	return srv
}

func TestResolve(t *testing.T) {
	for _, network := range []string{"udp", "tcp"} {
		t.Run(network, func(t *testing.T) {
			srv := start(t)
			r := resolver(network, srv.Addr())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()

			ns, err := r.LookupNS(ctx, "root-servers.net")
			require.NoError(t, err)
			require.Len(t, ns, 1)
			assert.Equal(t, "a.root-servers.net.", ns[0].Host)
			after := srv.Queries()
			assert.GreaterOrEqual(t, after, 1)
			assert.True(t, srv.Asked("root-servers.net."))
			assert.False(t, srv.Asked("example.com."), "not asked yet")

			addrs, err := r.LookupHost(ctx, "example.com") // A and AAAA
			require.NoError(t, err)
			assert.Equal(t, []string{"127.0.0.1"}, addrs)
			assert.GreaterOrEqual(t, srv.Queries(), after+2)
			assert.True(t, srv.Asked("example.com."))
		})
	}
}

func TestCloseWithIdleClient(t *testing.T) {
	srv, err := Start("127.0.0.1:0")
	require.NoError(t, err)
	c, err := net.Dial("tcp", srv.Addr())
	require.NoError(t, err)
	defer c.Close()
	done := make(chan error)
	go func() { done <- srv.Close() }()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(2 * time.Second):
		t.Fatal("Close waited for an idle TCP client")
	}
}

func TestRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"10.0.0.1:53", "0.0.0.0:53", "[::]:0", "localhost:53", "example.com:53", "127.0.0.1"} {
		t.Run(addr, func(t *testing.T) {
			srv, err := Start(addr)
			if srv != nil {
				srv.Close()
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), addr)
		})
	}
}

func TestCloseStopsServing(t *testing.T) {
	srv, err := Start("127.0.0.1:0")
	require.NoError(t, err)
	addr := srv.Addr()
	require.NoError(t, srv.Close())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = resolver("tcp", addr).LookupNS(ctx, "root-servers.net")
	assert.Error(t, err)
}
