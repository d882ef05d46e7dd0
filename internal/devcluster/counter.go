package devcluster

import (
	"net/http"
	"strings"
	"sync"
)

// RequestCounter counts the requests a client sends, by method and path: the
// measure of what a controller costs the API server.
type RequestCounter struct {
	mu       sync.Mutex
	total    int
	mutating int
	paths    map[string]int
}

// Wrap is a rest.Config WrapTransport.
func (c *RequestCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		c.mu.Lock()
		if c.paths == nil {
			c.paths = map[string]int{}
		}
		c.paths[req.Method+" "+req.URL.Path]++
		c.total++
		switch req.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			c.mutating++
		}
		c.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// Mutating is the number of POST, PUT, PATCH and DELETE requests so far.
func (c *RequestCounter) Mutating() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mutating
}

// Total is the number of requests so far.
func (c *RequestCounter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Matching returns the "METHOD path" keys whose path contains any of parts.
func (c *RequestCounter) Matching(parts ...string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for key := range c.paths {
		for _, p := range parts {
			if strings.Contains(key, p) {
				out = append(out, key)
				break
			}
		}
	}
	return out
}

// Reset forgets everything counted so far.
func (c *RequestCounter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total, c.mutating = 0, 0
	c.paths = nil
}

// RoundTripperFunc is a function as an http.RoundTripper, for wrapping a
// client's transport.
type RoundTripperFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f RoundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
