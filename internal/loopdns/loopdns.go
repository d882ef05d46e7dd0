// Package loopdns stands in for the node's DNS server so upstream
// kubernetes-nmstate's DNS probe (which dials each server of the node's
// dns-resolver at port 53 and looks up NS root-servers.net) stays on
// loopback. It answers every NS query with a.root-servers.net., every A
// query with 127.0.0.1 and everything else with an empty NOERROR, over UDP
// and TCP, and it refuses to listen anywhere but a loopback address.
package loopdns

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"golang.org/x/net/dns/dnsmessage"
)

// Server is a running loopback DNS server.
type Server struct {
	udp     net.PacketConn
	tcp     net.Listener
	queries atomic.Int64
	wg      sync.WaitGroup

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]bool // open TCP connections, closed by Close
	names  map[string]bool   // every name asked about, as asked
}

// Start listens on addr ("host:port"; port 0 picks a free one) over UDP and
// TCP (the same port) and serves until Close. The host must be a loopback IP.
func Start(addr string) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("loopdns: address %q: %w", addr, err)
	}
	// A name could resolve off the machine, so only a literal loopback IP will do.
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Unmap().IsLoopback() {
		return nil, fmt.Errorf("loopdns: address %q is not a loopback IP; test DNS traffic must stay on loopback", addr)
	}
	udp, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("loopdns: listen udp %s: %w", addr, err)
	}
	// TCP on the port UDP got, so a resolver retrying over TCP finds us.
	tcp, err := net.Listen("tcp", udp.LocalAddr().String())
	if err != nil {
		udp.Close()
		return nil, fmt.Errorf("loopdns: listen tcp %s: %w", udp.LocalAddr(), err)
	}
	s := &Server{udp: udp, tcp: tcp, conns: map[net.Conn]bool{}, names: map[string]bool{}}
	s.wg.Add(2)
	go s.serveUDP()
	go s.serveTCP()
	return s, nil
}

// Addr is the UDP (and TCP) address served, e.g. "127.0.0.1:40123".
func (s *Server) Addr() string { return s.udp.LocalAddr().String() }

// Queries is how many queries have been answered, to prove a client reached
// this server.
func (s *Server) Queries() int { return int(s.queries.Load()) }

// Asked says whether a query for name ("example.com.") was answered: the
// proof of which name a client looked up.
func (s *Server) Asked(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names[name]
}

// Close stops serving and waits for the serving goroutines to end.
func (s *Server) Close() error {
	err := errors.Join(s.udp.Close(), s.tcp.Close())
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close() // an idle client must not hold Close up
	}
	s.mu.Unlock()
	s.wg.Wait()
	if err != nil {
		return fmt.Errorf("loopdns: close: %w", err)
	}
	return nil
}

func (s *Server) serveUDP() {
	defer s.wg.Done()
	buf := make([]byte, 65535)
	for {
		n, from, err := s.udp.ReadFrom(buf)
		if err != nil {
			return // closed
		}
		if resp, ok := s.answer(buf[:n]); ok {
			_, _ = s.udp.WriteTo(resp, from) // a lost reply is the client's retry
		}
	}
}

func (s *Server) serveTCP() {
	defer s.wg.Done()
	for {
		c, err := s.tcp.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed { // accepted as Close ran: it would never see this one
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			for {
				var size [2]byte
				if _, err := io.ReadFull(c, size[:]); err != nil {
					return
				}
				req := make([]byte, binary.BigEndian.Uint16(size[:]))
				if _, err := io.ReadFull(c, req); err != nil {
					return
				}
				resp, ok := s.answer(req)
				if !ok {
					return
				}
				if _, err := c.Write(binary.BigEndian.AppendUint16(nil, uint16(len(resp)))); err != nil {
					return
				}
				if _, err := c.Write(resp); err != nil {
					return
				}
			}
		}()
	}
}

var (
	rootNS   = dnsmessage.MustNewName("a.root-servers.net.")
	loopback = [4]byte{127, 0, 0, 1}
)

// answer builds the reply to one query; ok is false for a packet that is not
// a query, which is dropped.
func (s *Server) answer(req []byte) (resp []byte, ok bool) {
	var p dnsmessage.Parser
	h, err := p.Start(req)
	if err != nil || h.Response {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	// Authoritative and RecursionAvailable, or Go's resolver takes an empty
	// answer for a lame referral.
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{
		ID: h.ID, Response: true, Authoritative: true,
		RecursionDesired: h.RecursionDesired, RecursionAvailable: true,
	})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, false
	}
	if err := b.Question(q); err != nil {
		return nil, false
	}
	if err := b.StartAnswers(); err != nil {
		return nil, false
	}
	rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
	switch q.Type {
	case dnsmessage.TypeNS:
		err = b.NSResource(rh, dnsmessage.NSResource{NS: rootNS})
	case dnsmessage.TypeA:
		err = b.AResource(rh, dnsmessage.AResource{A: loopback})
	}
	if err != nil {
		return nil, false
	}
	out, err := b.Finish()
	if err != nil {
		return nil, false
	}
	s.queries.Add(1)
	s.mu.Lock()
	s.names[q.Name.String()] = true
	s.mu.Unlock()
	return out, true
}
