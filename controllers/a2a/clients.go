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
	"crypto/tls"
	"net/http"
	"sync"
	"time"
)

// Clients are the HTTP clients the operator calls agents with: one shared
// by every agent without TLS settings of its own, and one per namespace and
// TLS material (an Agent's spec.a2a.tls) for the others, each with the
// allow list and timeout of NewHTTPClient. A client is kept while it is
// used: a namespace keeps at most NamespaceTLSClients, the operator
// MaxTLSClients; past that the least recently used goes, and its idle
// connections with it. One namespace's Agents, however many and however
// often their certificates change, push out only that namespace's clients.
type Clients struct {
	allow   *AllowList
	timeout time.Duration
	plain   *http.Client

	mu   sync.Mutex
	tick uint64
	byNS map[string]map[string]*tlsClient
	n    int
}

// Bounds of the TLS clients kept.
const (
	NamespaceTLSClients = 16
	MaxTLSClients       = 1024
)

type tlsClient struct {
	hc   *http.Client
	used uint64
}

// NewClients makes the operator's clients for agents.
func NewClients(allow *AllowList, timeout time.Duration) *Clients {
	return &Clients{allow: allow, timeout: timeout, plain: NewHTTPClient(allow, timeout), byNS: map[string]map[string]*tlsClient{}}
}

// Plain is the client for agents without TLS settings of their own.
func (c *Clients) Plain() *http.Client { return c.plain }

// For is the client for the TLS material id of namespace; config makes its
// settings, called only when no client for id is kept (and its error
// returned).
func (c *Clients) For(namespace, id string, config func() (*tls.Config, error)) (*http.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	if e, ok := c.byNS[namespace][id]; ok {
		e.used = c.tick
		return e.hc, nil
	}
	conf, err := config()
	if err != nil {
		return nil, err
	}
	hc := NewHTTPClient(c.allow, c.timeout)
	if t, ok := hc.Transport.(*http.Transport); ok {
		t.TLSClientConfig = conf
	}
	if len(c.byNS[namespace]) >= NamespaceTLSClients {
		c.evict(namespace)
	}
	if c.n >= MaxTLSClients {
		c.evict("")
	}
	ns := c.byNS[namespace]
	if ns == nil {
		ns = map[string]*tlsClient{}
		c.byNS[namespace] = ns
	}
	ns[id] = &tlsClient{hc: hc, used: c.tick}
	c.n++
	return hc, nil
}

// evict drops the least recently used client of namespace, or of all when
// namespace is empty.
func (c *Clients) evict(namespace string) {
	var oldNS, oldID string
	var oldest *tlsClient
	for ns, clients := range c.byNS {
		if namespace != "" && ns != namespace {
			continue
		}
		for id, e := range clients {
			if oldest == nil || e.used < oldest.used {
				oldNS, oldID, oldest = ns, id, e
			}
		}
	}
	if oldest == nil {
		return
	}
	oldest.hc.CloseIdleConnections()
	delete(c.byNS[oldNS], oldID)
	if len(c.byNS[oldNS]) == 0 {
		delete(c.byNS, oldNS)
	}
	c.n--
}

// Kept counts the TLS clients kept for namespace.
func (c *Clients) Kept(namespace string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byNS[namespace])
}
