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

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/devcluster"
)

// What a rolling upgrade does to a receiver pod: kubelet sends SIGTERM while
// the Service may still route new connections to it for a few seconds.
var _ = Describe("a receiver stopped with SIGTERM", func() {
	It("fails /readyz at once, answers new calls for --shutdown-delay, finishes the call in flight, then refuses connections", func(ctx SpecContext) {
		ep := newEndpoint(ctx, developer(), "drained")
		target, err := url.Parse(ep.URL)
		Expect(err).NotTo(HaveOccurred())
		Expect(readyzStatus()).To(Equal(http.StatusOK))

		// A call in flight: its headers and half its body are sent before
		// SIGTERM, the rest once the receiver has stopped accepting.
		inFlight := startCall(target, ep.Secret, `{"drain":"the call in flight"}`)
		DeferCleanup(inFlight.conn.Close)

		pid := cluster.PID(devcluster.Receiver)
		Expect(pid).NotTo(BeZero())
		sigterm := time.Now()
		Expect(syscall.Kill(pid, syscall.SIGTERM)).To(Succeed())
		// Answered, and failing: the probe server outlives the drain.
		Eventually(readyzStatus).WithTimeout(time.Second).WithPolling(20*time.Millisecond).
			Should(Equal(http.StatusInternalServerError), "/readyz does not fail after SIGTERM")
		unready := time.Since(sigterm)

		// A new connection during the delay is served, and closed after its answer.
		opened := time.Since(sigterm)
		Expect(opened).To(BeNumerically("<", shutdownDelay/2), "the new call would come too late to tell")
		fresh, closed := newConnectionCall(ctx, ep.URL, ep.Secret, `{"drain":"a new call"}`)
		Expect(fresh.Status).To(Equal(http.StatusAccepted), fresh.Body)
		Expect(closed).To(BeTrue(), "the answer during the delay did not close its connection")

		// Then the port refuses, while the call in flight is still open.
		Eventually(func() error {
			conn, err := net.DialTimeout("tcp", target.Host, time.Second)
			if err == nil {
				_ = conn.Close()
			}
			return err
		}).WithTimeout(shutdownDelay + 10*time.Second).WithPolling(20 * time.Millisecond).Should(HaveOccurred())
		refused := time.Since(sigterm)
		Expect(refused).To(BeNumerically(">=", shutdownDelay), "the receiver stopped accepting before --shutdown-delay")
		GinkgoWriter.Printf("after SIGTERM: /readyz failed within %s, a new connection opened at %s was answered 202, connections were refused from %s\n",
			unready.Round(time.Millisecond), opened.Round(time.Millisecond), refused.Round(time.Millisecond))

		last := inFlight.finish()
		Expect(last.Status).To(Equal(http.StatusAccepted), last.Body)
		Eventually(func() int { return cluster.PID(devcluster.Receiver) }).Should(BeZero())
		Expect(cluster.Exited()).To(MatchError(ContainSubstring(devcluster.Receiver + " exited: exit status 0")))

		// Back as the next pod would be; both calls' runs reach the agent.
		Expect(cluster.Start(ctx, devcluster.Receiver)).To(Succeed())
		succeeds(ctx, fresh.RunID)
		succeeds(ctx, last.RunID)
	}, SpecTimeout(3*time.Minute))
})

// readyzStatus is the status of the receiver's /readyz, 0 when it did not answer.
func readyzStatus() int {
	resp, err := http.Get(cluster.ReceiverReadyz())
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// newConnectionCall POSTs body to url with the secret header on a
// connection of its own, as a sender that keeps none open does. closed
// tells whether the answer said it closes the connection.
func newConnectionCall(ctx context.Context, url, secret, body string) (a answer, closed bool) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(agentsv1alpha1.SecretHeader, secret)
	// A transport of its own has no connection to reuse; it would keep
	// this one, unless the answer says it closes.
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	Expect(err).NotTo(HaveOccurred())
	return readAnswer(resp), resp.Close
}

// callInFlight is a call whose headers and the first half of its body were sent.
type callInFlight struct {
	conn net.Conn
	req  *http.Request
	rest string
}

// startCall sends the headers and half the body of a call to target.
func startCall(target *url.URL, secret, body string) *callInFlight {
	GinkgoHelper()
	conn, err := net.DialTimeout("tcp", target.Host, 5*time.Second)
	Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequest(http.MethodPost, target.String(), nil)
	Expect(err).NotTo(HaveOccurred())
	half := len(body) / 2
	_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%s: %s\r\nContent-Length: %d\r\n\r\n%s",
		target.RequestURI(), target.Host, agentsv1alpha1.SecretHeader, secret, len(body), body[:half])
	Expect(err).NotTo(HaveOccurred())
	return &callInFlight{conn: conn, req: req, rest: body[half:]}
}

// finish sends the rest of the body and reads the answer.
func (c *callInFlight) finish() answer {
	GinkgoHelper()
	_, err := io.WriteString(c.conn, c.rest)
	Expect(err).NotTo(HaveOccurred())
	Expect(c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))).To(Succeed())
	resp, err := http.ReadResponse(bufio.NewReader(c.conn), c.req)
	Expect(err).NotTo(HaveOccurred(), "the call in flight got no answer")
	return readAnswer(resp)
}

// readAnswer reads and closes resp.
func readAnswer(resp *http.Response) answer {
	GinkgoHelper()
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	var parsed struct {
		RunID string `json:"runId"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &parsed)
	return answer{Status: resp.StatusCode, Header: resp.Header, Body: string(b), RunID: parsed.RunID, Code: parsed.Error.Code}
}
