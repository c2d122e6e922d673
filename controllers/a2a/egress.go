/*
Copyright 2026 The hookrun Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package a2a

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// AllowList names the agents the operator may connect to: hosts by name
// (exact, or every subdomain of a "*.example.com" entry) and addresses by
// CIDR. A host that matches a name is connected to at whatever address it
// resolves to (the name is trusted); any other host only at an address in a
// CIDR, checked on the address actually dialed, so a name that resolves to
// an allowed address once and to another one later (DNS rebinding) gets
// nowhere. A nil or empty AllowList allows every agent.
type AllowList struct {
	hosts    map[string]bool // exact names, lower case, without a trailing dot
	suffixes []string        // ".example.com" for the entry "*.example.com"
	prefixes []netip.Prefix
}

// NewAllowList parses host names (exact or "*.example.com") and CIDRs (a
// bare IP address stands for itself alone). It returns nil when both are
// empty.
func NewAllowList(hosts, cidrs []string) (*AllowList, error) {
	if len(hosts) == 0 && len(cidrs) == 0 {
		return nil, nil
	}
	a := &AllowList{hosts: map[string]bool{}}
	var errs []error
	for _, h := range hosts {
		name := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
		wildcard := strings.HasPrefix(name, "*.")
		if wildcard {
			name = strings.TrimPrefix(name, "*.")
		}
		switch {
		case isIPLiteral(name):
			errs = append(errs, fmt.Errorf("host %q is an IP address: list addresses as CIDRs", h))
		case !validHostName(name):
			errs = append(errs, fmt.Errorf("host %q is not a host name (letters, digits, '-', '_' and dots; a leading \"*.\" for every subdomain)", h))
		case wildcard:
			a.suffixes = append(a.suffixes, "."+name)
		default:
			a.hosts[name] = true
		}
	}
	for _, c := range cidrs {
		c = strings.TrimSpace(c)
		p, err := netip.ParsePrefix(c)
		if err != nil {
			addr, aerr := netip.ParseAddr(c)
			if aerr != nil || addr.Zone() != "" {
				errs = append(errs, fmt.Errorf("%q is not a CIDR such as 10.0.0.0/8 or an IP address", c))
				continue
			}
			p = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
		}
		a.prefixes = append(a.prefixes, p.Masked())
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return a, nil
}

func isIPLiteral(s string) bool {
	_, err := netip.ParseAddr(strings.Trim(s, "[]"))
	return err == nil
}

// validHostName accepts dot-separated labels of letters, digits, '-' and '_'.
func validHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !hostNameRune(r) {
				return false
			}
		}
	}
	return true
}

func hostNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_'
}

// Empty tells whether the list allows every agent.
func (a *AllowList) Empty() bool {
	return a == nil || len(a.hosts) == 0 && len(a.suffixes) == 0 && len(a.prefixes) == 0
}

// AllowsHost tells whether host (a name from an agent's URL) is allowed by
// name. An IP address never is: addresses are allowed by CIDR.
func (a *AllowList) AllowsHost(host string) bool {
	if a.Empty() {
		return true
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if a.hosts[host] {
		return true
	}
	for _, s := range a.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// Refuses tells whether no connection to host can be allowed: it is not an
// allowed name, and it is an address outside the CIDRs, or a name while no
// CIDR is listed. A name that may resolve into a CIDR is not refused here;
// the dialer checks the address it connects to.
func (a *AllowList) Refuses(host string) bool {
	if a.AllowsHost(host) {
		return false
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return !a.AllowsAddr(ip)
	}
	return len(a.prefixes) == 0
}

// AllowsAddr tells whether an address is in one of the CIDRs.
func (a *AllowList) AllowsAddr(ip netip.Addr) bool {
	if a.Empty() {
		return true
	}
	ip = ip.Unmap().WithZone("")
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// NotAllowedError is a connection the allow-list refused; no request was sent.
type NotAllowedError struct {
	// Host is the host of the agent's URL; Addr the address it was to be
	// dialed at, empty when it was refused by name before any lookup.
	Host, Addr string
}

func (e *NotAllowedError) Error() string {
	where := fmt.Sprintf("agent host %q", e.Host)
	if e.Addr != "" && e.Addr != e.Host {
		where += " at " + e.Addr
	}
	return "the operator may not connect to " + where +
		": it is not on the operator's agent allow-list (--agent-allowed-hosts, --agent-allowed-cidrs)"
}

// DialContext wraps d so that it connects only where the list allows: a
// host allowed by name is dialed as is; any other host is dialed only at
// addresses in the CIDRs, checked by d's Control on each address tried.
func (a *AllowList) DialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if a.Empty() {
		return d.DialContext
	}
	checked := *d
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if a.AllowsHost(host) {
			return d.DialContext(ctx, network, addr)
		}
		if len(a.prefixes) == 0 {
			return nil, &NotAllowedError{Host: host} // no address could be allowed: do not even look it up
		}
		dialer := checked
		dialer.ControlContext = nil
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !a.AllowsAddr(ap.Addr()) {
				return &NotAllowedError{Host: host, Addr: strings.Trim(hostOf(address), "[]")}
			}
			return nil
		}
		return dialer.DialContext(ctx, network, addr)
	}
}

func hostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// NewHTTPClient is the HTTP client to call agents with: timeout bounds each
// call, redirects are never followed (a 3xx is an error, see Client), and a
// non-empty allow list limits where it connects. With an allow list it uses
// no proxy: the list is checked on the address dialed, which must be the
// agent's own.
func NewHTTPClient(allow *AllowList, timeout time.Duration) *http.Client {
	var t *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		t = dt.Clone()
	} else {
		t = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
	}
	if !allow.Empty() {
		t.Proxy = nil
		t.DialContext = allow.DialContext(&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second})
	}
	return &http.Client{Timeout: timeout, Transport: t, CheckRedirect: refuseRedirect}
}

// refuseRedirect makes an http.Client hand back a redirect as the answer.
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
