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

package node

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// sender is a GitHub-like sender: each delivery on a new connection, the
// receiver's host name resolved through the node's CoreDNS, no retry.
func sender(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: coreDNSDialer().DialContext, DisableKeepAlives: true}}
}

// coreDNSDialer resolves names through the node's CoreDNS.
func coreDNSDialer() *net.Dialer {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	dialer.Resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, network, net.JoinHostPort(node.clusterDNS, "53"))
	}}
	return dialer
}

// endpoint is a GitHub endpoint's URL and secret.
type endpoint struct{ name, url, secret string }

// answer is what the sender saw of one delivery: a status, or the error
// that ended it (refused, reset, timeout...).
type answer struct {
	status int
	runID  string
	// code is a refusal's error.code (rate_limited, backlog_full...).
	code string
	err  error
	// connected and sent say how far a failed delivery got: a timeout
	// before the connection is a Pod no longer there (a stale Service
	// rule), after the request a receiver that did not answer in time.
	connected, sent bool
}

// githubRequest is a GitHub "issues" delivery to ep, signed with its secret.
func githubRequest(ctx context.Context, ep endpoint, delivery string) (*http.Request, error) {
	body := fmt.Sprintf(`{"action":"opened","issue":{"number":1,"title":"Delivery %s"},"repository":{"full_name":"hookrun/node"}}`, delivery)
	mac := hmac.New(sha256.New, []byte(ep.secret))
	mac.Write([]byte(body))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/node")
	req.Header.Set("X-GitHub-Event", "issues")
	req.Header.Set("X-GitHub-Delivery", delivery)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	return req, nil
}

// deliver sends a GitHub "issues" delivery to ep once.
func deliver(ctx context.Context, c *http.Client, ep endpoint, delivery string) answer {
	// The transport calls these on its own goroutines.
	var connected, sent atomic.Bool
	trace := &httptrace.ClientTrace{
		ConnectDone:  func(_, _ string, err error) { connected.Store(err == nil) },
		WroteRequest: func(i httptrace.WroteRequestInfo) { sent.Store(i.Err == nil) },
	}
	req, err := githubRequest(httptrace.WithClientTrace(ctx, trace), ep, delivery)
	if err != nil {
		return answer{err: err}
	}
	resp, err := c.Do(req)
	if err != nil {
		return answer{err: err, connected: connected.Load(), sent: sent.Load()}
	}
	defer func() { _ = resp.Body.Close() }()
	a := answer{status: resp.StatusCode}
	var body struct {
		RunID string `json:"runId"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{status: resp.StatusCode, err: err}
	}
	if json.Unmarshal(b, &body) == nil {
		a.runID, a.code = body.RunID, body.Error.Code
	}
	return a
}

// class names what a failed delivery saw.
func (a answer) class() string {
	switch {
	case a.err == nil && a.status == http.StatusAccepted:
		return ""
	case a.err == nil && a.code != "":
		return fmt.Sprintf("HTTP %d %s", a.status, a.code)
	case a.err == nil:
		return fmt.Sprintf("HTTP %d", a.status)
	case errors.Is(a.err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(a.err, syscall.ECONNRESET), errors.Is(a.err, io.EOF), errors.Is(a.err, io.ErrUnexpectedEOF):
		return "reset"
	case errors.Is(a.err, os.ErrDeadlineExceeded), errors.Is(a.err, context.DeadlineExceeded):
		return a.timeout()
	default:
		var ne net.Error
		if errors.As(a.err, &ne) && ne.Timeout() {
			return a.timeout()
		}
		return "other: " + a.err.Error()
	}
}

// timeout names where a delivery that timed out waited.
func (a answer) timeout() string {
	switch {
	case !a.connected:
		return "timeout connecting"
	case !a.sent:
		return "timeout sending"
	default:
		return "timeout awaiting the answer"
	}
}

// githubEndpoints creates n GitHub endpoints in ns, of the Agents agents
// in turn, and returns them once every receiver serves them.
func githubEndpoints(ctx context.Context, ns string, agents []string, n int) []endpoint {
	GinkgoHelper()
	for i := range n {
		agent := agents[i%len(agents)]
		Expect(admin.Create(ctx, &agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("github-%02d", i)},
			Spec: agentsv1alpha1.WebhookEndpointSpec{
				AgentRef: agentsv1alpha1.LocalObjectReference{Name: agent}, Prompt: "Triage this issue.",
				ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
				Sender:         &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderGitHub, Events: []string{"issues"}},
			},
		})).To(Succeed())
	}
	eps := make([]endpoint, n)
	for i := range n {
		name := fmt.Sprintf("github-%02d", i)
		Eventually(func(g Gomega) {
			ep := &agentsv1alpha1.WebhookEndpoint{}
			g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ep)).To(Succeed())
			g.Expect(ep.Status.URL).To(HavePrefix(publicBaseURL))
			g.Expect(ep.Status.SecretHash).NotTo(BeEmpty())
			secret := &corev1.Secret{}
			g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: agentsv1alpha1.GeneratedSecretName(name)}, secret)).To(Succeed())
			eps[i] = endpoint{name: name, url: ep.Status.URL, secret: string(secret.Data[agentsv1alpha1.WebhookSecretKey])}
		}).Should(Succeed())
	}
	// Every replica serves them: each receiver Pod's readiness check of
	// an endpoint ID (its health port, by the Pod's address) says so.
	for _, ep := range eps {
		id := strings.TrimSuffix(strings.TrimPrefix(ep.url, publicBaseURL+"/api/webhooks/"), "/receive")
		Eventually(func(g Gomega) {
			pods := podsOf(ctx, "receiver")
			g.Expect(pods).NotTo(BeEmpty())
			for _, p := range pods {
				resp, err := http.Get("http://" + net.JoinHostPort(p.Status.PodIP, "8081") + "/readyz/endpoint?id=" + id)
				g.Expect(err).NotTo(HaveOccurred())
				_ = resp.Body.Close()
				g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "receiver %s serves %s", p.Name, ep.name)
			}
		}).Should(Succeed())
	}
	// And a GitHub ping through the Service is answered.
	Expect(ping(ctx, sender(10*time.Second), eps[0])).To(Equal(http.StatusOK))
	return eps
}

// ping sends GitHub's ping event.
func ping(ctx context.Context, c *http.Client, ep endpoint) int {
	body := `{"zen":"Keep it logically awesome."}`
	mac := hmac.New(sha256.New, []byte(ep.secret))
	mac.Write([]byte(body))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.url, strings.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("X-GitHub-Event", "ping")
	req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("ping-%d", time.Now().UnixNano()))
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// loadFigures is what a steady load saw, and what became of the runs it
// started.
type loadFigures struct {
	sent, accepted int
	failed         map[string]int
	runIDs         []string
}

// steadyLoad sends rate deliveries a second, round robin over eps, until
// disrupt has returned and settle has passed after it (at least minimum in
// all). Each delivery is sent once, on a new connection, and never retried.
// disrupt is handed a channel closed once settle's worth of deliveries
// have been answered: what the disruption meets is a steady load.
func steadyLoad(ctx context.Context, eps []endpoint, rate int, minimum, settle time.Duration, disrupt func(steady <-chan struct{})) loadFigures {
	GinkgoHelper()
	c := sender(10 * time.Second)
	var (
		mu      sync.Mutex
		figures = loadFigures{failed: map[string]int{}}
		wg      sync.WaitGroup
	)
	done, steady := make(chan struct{}), make(chan struct{})
	steadyAt := rate * int(settle/time.Second)
	go func() {
		defer GinkgoRecover()
		defer close(done)
		disrupt(steady)
	}()
	start := time.Now()
	deadline := start.Add(minimum)
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	prefix := fmt.Sprintf("load-%d", start.UnixNano())
	disrupted := false
	for i := 0; ; i++ {
		select {
		case <-done:
			if !disrupted {
				disrupted = true
				if after := time.Now().Add(settle); after.After(deadline) {
					deadline = after
				}
			}
		default:
		}
		if disrupted && time.Now().After(deadline) {
			break
		}
		<-tick.C
		ep := eps[i%len(eps)]
		wg.Add(1)
		go func(delivery string) {
			defer wg.Done()
			a := deliver(ctx, c, ep, delivery)
			mu.Lock()
			defer mu.Unlock()
			figures.sent++
			if figures.sent == steadyAt {
				close(steady)
			}
			if cl := a.class(); cl != "" {
				figures.failed[cl]++
				fmt.Fprintf(GinkgoWriter, "%s %s: %s (%v)\n", time.Now().Format("15:04:05.000"), delivery, cl, a.err)
				return
			}
			figures.accepted++
			figures.runIDs = append(figures.runIDs, a.runID)
		}(fmt.Sprintf("%s-%05d", prefix, i))
	}
	wg.Wait()
	return figures
}

// outcome waits until every run the load started has finished and returns
// how many are missing (accepted, never recorded) and how many did not end
// in success, by state.
func outcome(ctx context.Context, ns string, runIDs []string) (lost int, notSuccess map[string]int) {
	GinkgoHelper()
	notSuccess = map[string]int{}
	Eventually(func(g Gomega) {
		runs := &agentsv1alpha1.AgentRunList{}
		g.Expect(admin.List(ctx, runs, client.InNamespace(ns))).To(Succeed())
		byName := map[string]agentsv1alpha1.RunState{}
		for _, r := range runs.Items {
			byName[r.Name] = r.Status.State
		}
		lost = 0
		clear(notSuccess)
		unfinished := 0
		for _, id := range runIDs {
			state, ok := byName[id]
			switch {
			case !ok:
				lost++
			case !state.IsFinished():
				unfinished++
			case state != agentsv1alpha1.RunSuccess:
				notSuccess[string(state)]++
			}
		}
		g.Expect(unfinished).To(BeZero(), "runs still going")
	}).WithTimeout(10 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	return lost, notSuccess
}

// describe prints a map of counts in a stable order.
func describe(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
