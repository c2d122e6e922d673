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
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/hookrun/hookrun/hack/devcluster"
)

// operatorRequests sums the operator's API requests so far by method and
// answer (rest_client_requests_total).
func operatorRequests(ctx context.Context, c *devcluster.Cluster) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.MetricsURL(devcluster.Operator), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return parseRequests(b), nil
}

// parseRequests sums rest_client_requests_total of a metrics page by
// method and answer ("GET 200"), over every host.
func parseRequests(metrics []byte) map[string]float64 {
	out := map[string]float64{}
	re := regexp.MustCompile(`(?m)^rest_client_requests_total\{code="(\d+)",host="[^"]*",method="(\w+)"\} (\S+)$`)
	for _, m := range re.FindAllSubmatch(metrics, -1) {
		v, _ := strconv.ParseFloat(string(m[3]), 64)
		out[string(m[2])+" "+string(m[1])] += v
	}
	return out
}

// cpuSeconds is the CPU time (user and system) each of the API server,
// operator and receiver processes has used so far.
func cpuSeconds(c *devcluster.Cluster) map[string]float64 {
	out := map[string]float64{}
	for _, name := range []string{devcluster.KubeAPIServer, devcluster.Operator, devcluster.Receiver} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.PID(name)))
		if err != nil {
			continue
		}
		if s, ok := parseCPUSeconds(b); ok {
			out[name] = s
		}
	}
	return out
}

// parseCPUSeconds is the CPU time (user and system) in a /proc/PID/stat.
func parseCPUSeconds(stat []byte) (float64, bool) {
	// Fields after "(comm)": state is the 1st, utime the 12th, stime the 13th.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 13 {
		return 0, false
	}
	user, _ := strconv.ParseFloat(f[11], 64)
	sys, _ := strconv.ParseFloat(f[12], 64)
	return (user + sys) / 100, true // USER_HZ
}

// residentMiB is the resident memory (VmRSS) of process pid in MiB.
func residentMiB(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseResidentMiB(b)
}

// parseResidentMiB is VmRSS of a /proc/PID/status in MiB.
func parseResidentMiB(status []byte) (float64, error) {
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(status)
	if m == nil {
		return 0, errors.New("no VmRSS")
	}
	kb, err := strconv.ParseFloat(string(m[1]), 64)
	return kb / 1024, err
}
