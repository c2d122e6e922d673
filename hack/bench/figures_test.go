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

package main

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/hack/loadgen"
)

func TestScaleRows(t *testing.T) {
	f := scaleFigures{
		endpoints: 10000, receiverMiB: 96.04, created: 61400 * time.Millisecond, allReady: 217 * time.Second,
		cpuUsed:             []string{"kube-apiserver 175 s", "operator 38 s", "receiver 9 s"},
		requestsPerEndpoint: []string{"GET 200 1.00", "PATCH 200 1.00"},
	}
	want := []row{
		{"10000 endpoints: receiver resident memory", "< 150 MiB", "96.0 MiB", true},
		{"10000 endpoints: operator brings all to Ready", "< 2 min",
			"3m37s from the first create (creating them took 1m1s; CPU time meanwhile: kube-apiserver 175 s, operator 38 s, receiver 9 s; " +
				"the operator's API requests per endpoint: GET 200 1.00, PATCH 200 1.00)", false},
	}
	if got := f.rows(); !slices.Equal(got, want) {
		t.Errorf("rows:\n%+v\nwant:\n%+v", got, want)
	}
	f.receiverMiB, f.allReady = 150, 119*time.Second
	if got := f.rows(); got[0].ok || !got[1].ok {
		t.Errorf("150 MiB must miss its goal and 1m59s meet its own: %v", got)
	}
}

func TestCountReady(t *testing.T) {
	endpoint := func(ready metav1.ConditionStatus, hash string) agentsv1alpha1.WebhookEndpoint {
		ep := agentsv1alpha1.WebhookEndpoint{}
		ep.Status.SecretHash = hash
		if ready != "" {
			ep.Status.Conditions = []metav1.Condition{{Type: agentsv1alpha1.ConditionSecretReady, Status: metav1.ConditionTrue},
				{Type: agentsv1alpha1.ConditionReady, Status: ready}}
		}
		return ep
	}
	eps := []agentsv1alpha1.WebhookEndpoint{
		endpoint(metav1.ConditionTrue, "sha256:x"),
		endpoint(metav1.ConditionTrue, ""), // no secret yet
		endpoint(metav1.ConditionFalse, "sha256:x"),
		endpoint("", "sha256:x"), // not reconciled
		endpoint(metav1.ConditionTrue, "sha256:y"),
	}
	if got := countReady(eps); got != 2 {
		t.Errorf("countReady = %d, want 2", got)
	}
}

func TestCPUUsed(t *testing.T) {
	before := map[string]float64{devcluster.KubeAPIServer: 10, devcluster.Operator: 2.4, devcluster.Receiver: 1}
	after := map[string]float64{devcluster.KubeAPIServer: 185.2, devcluster.Operator: 40.6, devcluster.Receiver: 10}
	want := []string{devcluster.KubeAPIServer + " 175 s", devcluster.Operator + " 38 s", devcluster.Receiver + " 9 s"}
	if got := cpuUsed(before, after); !slices.Equal(got, want) {
		t.Errorf("cpuUsed = %q, want %q", got, want)
	}
}

func TestRequestsPerEndpoint(t *testing.T) {
	before := map[string]float64{"GET 200": 100, "PATCH 200": 5}
	after := map[string]float64{"POST 201": 20000, "GET 200": 10100, "PATCH 200": 10005, "GET 404": 40, "PUT 200": 50}
	// Sorted; GET 404 (0.004) and PUT 200 (0.005 is kept) at the edge.
	want := []string{"GET 200 1.00", "PATCH 200 1.00", "POST 201 2.00", "PUT 200 0.01"}
	if got := requestsPerEndpoint(before, after, 10000); !slices.Equal(got, want) {
		t.Errorf("requestsPerEndpoint = %q, want %q", got, want)
	}
}

func TestParseRequests(t *testing.T) {
	metrics := `# HELP rest_client_requests_total Number of HTTP requests, partitioned by status code, method, and host.
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 12
rest_client_requests_total{code="200",host="[::1]:6443",method="GET"} 3
rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 1e+04
rest_client_request_duration_seconds_count{host="127.0.0.1:6443",verb="GET"} 15
`
	got := parseRequests([]byte(metrics))
	if len(got) != 2 || got["GET 200"] != 15 || got["POST 201"] != 10000 {
		t.Errorf("parseRequests = %v, want GET 200: 15, POST 201: 10000", got)
	}
}

func TestParseCPUSeconds(t *testing.T) {
	// utime 1234 and stime 566 ticks; the command name holds spaces and a ")".
	stat := "4242 (kube apiserver) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 566 0 0 20 0 12 0 100 0 0\n"
	if got, ok := parseCPUSeconds([]byte(stat)); !ok || got != 18 {
		t.Errorf("parseCPUSeconds = %v, %v; want 18, true", got, ok)
	}
	if _, ok := parseCPUSeconds([]byte("4242 (short) S 1 2")); ok {
		t.Error("parseCPUSeconds read a stat line of too few fields")
	}
}

func TestParseResidentMiB(t *testing.T) {
	got, err := parseResidentMiB([]byte("Name:\thookrun\nVmPeak:\t  999999 kB\nVmRSS:\t   98304 kB\nThreads:\t12\n"))
	if err != nil || got != 96 {
		t.Errorf("parseResidentMiB = %v, %v; want 96", got, err)
	}
	if _, err := parseResidentMiB([]byte("Name:\tzombie\n")); err == nil {
		t.Error("parseResidentMiB read a status without VmRSS")
	}
}

// result is a load run of n requests in a second, every answer status.
func result(n, status int) loadgen.Result {
	return loadgen.Result{Requests: n, Statuses: map[int]int{status: n}, Elapsed: time.Second}
}

func TestRejectionRow(t *testing.T) {
	base := result(10000, http.StatusAccepted)
	for _, tc := range []struct {
		name      string
		r         loadgen.Result
		announced bool
		figure    string
		ok        bool
	}{
		{"at 0.8", result(8000, http.StatusForbidden), false, "0.80 (", true},
		{"under 0.8", result(7900, http.StatusForbidden), false, "0.79 (", false},
		{"fast but some other answer", loadgen.Result{Requests: 9000, Statuses: map[int]int{http.StatusForbidden: 8999, 0: 1}, Elapsed: time.Second}, false, "0.90 (", false},
		{"announced body", result(900, http.StatusForbidden), true, "0.90 (", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmp := base
			if tc.announced {
				cmp = result(1000, http.StatusAccepted) // the bare server given the same request
			}
			got := rejectionRow("wrong secret (403)", "baseline", tc.r, cmp, base, http.StatusForbidden, tc.announced)
			if got.what != "rejection: wrong secret (403)" || got.goal != ">= 0.8 of baseline" || !strings.HasPrefix(got.figure, tc.figure) || got.ok != tc.ok {
				t.Errorf("rejectionRow = %+v, want figure %q..., ok %v", got, tc.figure, tc.ok)
			}
			if keepAlive := strings.Contains(got.figure, "; 0.09 of the keep-alive baseline)"); keepAlive != tc.announced {
				t.Errorf("figure %q: the keep-alive ratio is given only for an announced body", got.figure)
			}
		})
	}
}

func TestAcceptedRows(t *testing.T) {
	direct := result(1000, http.StatusCreated)
	rows := acceptedRows(result(700, http.StatusAccepted), direct)
	if len(rows) != 2 || rows[0].goal != "" || rows[0].figure != direct.String() {
		t.Fatalf("acceptedRows: the baseline's row first, no goal: %+v", rows)
	}
	if !strings.HasPrefix(rows[1].figure, "0.70 (") || !rows[1].ok {
		t.Errorf("0.7 of the baseline meets the goal: %+v", rows[1])
	}
	if got := acceptedRows(result(690, http.StatusAccepted), direct)[1]; got.ok || !strings.HasPrefix(got.figure, "0.69 (") {
		t.Errorf("0.69 of the baseline misses it: %+v", got)
	}
	if got := acceptedRows(result(900, http.StatusTooManyRequests), direct)[1]; got.ok {
		t.Errorf("calls not answered 202 miss it: %+v", got)
	}
}

func TestParseOnly(t *testing.T) {
	if got, err := parseOnly(""); err != nil || got != nil {
		t.Errorf("parseOnly(\"\") = %v, %v; want all (nil)", got, err)
	}
	got, err := parseOnly("scale, filters")
	if err != nil || len(got) != 2 || !got["scale"] || !got["filters"] {
		t.Errorf("parseOnly = %v, %v", got, err)
	}
	if _, err := parseOnly("scale,sclae"); err == nil || !strings.Contains(err.Error(), `"sclae"`) {
		t.Errorf("parseOnly of an unknown name: %v", err)
	}
}

func TestNeedsCluster(t *testing.T) {
	for only, want := range map[string]bool{"": true, "filters": false, "filters,fields": false, "fields,scale": true, "rejections": true} {
		set, err := parseOnly(only)
		if err != nil {
			t.Fatal(err)
		}
		if got := (options{only: set}).needsCluster(); got != want {
			t.Errorf("--only %q: needsCluster = %v, want %v", only, got, want)
		}
	}
}

func TestProcessArgs(t *testing.T) {
	receiver, operator := processArgs(false, "127.0.0.1:1", "127.0.0.1:2")
	if !slices.Contains(receiver, "--unauthenticated-rate-limit=1") || !slices.Equal(operator, []string{"--zap-log-level=error"}) {
		t.Errorf("processArgs = %q, %q", receiver, operator)
	}
	receiver, operator = processArgs(true, "127.0.0.1:1", "127.0.0.1:2")
	if !slices.Contains(operator, "--pprof-bind-address=127.0.0.1:1") || !slices.Contains(receiver, "--pprof-bind-address=127.0.0.1:2") {
		t.Errorf("processArgs with pprof = %q, %q", receiver, operator)
	}
}

func TestUnknownEndpointURL(t *testing.T) {
	got := unknownEndpointURL("http://127.0.0.1:8080/hooks/api/webhooks/l1q6abc/receive", "other")
	if want := "http://127.0.0.1:8080/hooks/api/webhooks/other/receive"; got != want {
		t.Errorf("unknownEndpointURL = %q, want %q", got, want)
	}
}

func TestPost(t *testing.T) {
	for _, tc := range []struct {
		name, secret string
		length       int64
		expect       string
	}{
		{"small, with secret", "s3cret", 7, ""},
		{"small, open endpoint", "", 7, ""},
		{"announced over the limit", "s3cret", agentsv1alpha1.MaxPayloadBytes + 1, "100-continue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := post("http://127.0.0.1:1/api/webhooks/x/receive", tc.secret, small, tc.length)(context.Background(), 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(req.Body)
			if req.Method != http.MethodPost || req.ContentLength != tc.length || string(body) != `{"a":1}` ||
				req.Header.Get("Content-Type") != "application/json" || req.Header.Get("Expect") != tc.expect ||
				req.Header.Get(agentsv1alpha1.SecretHeader) != tc.secret {
				t.Errorf("request %s %d %q, headers %v", req.Method, req.ContentLength, body, req.Header)
			}
		})
	}
}
