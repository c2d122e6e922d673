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
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestParseRetryAfter: delta-seconds and the three HTTP date formats, cut
// to [MinRetryAfter, MaxRetryAfter]; anything else is no answer.
func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"30", 30 * time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{"0", MinRetryAfter, true},
		{"300", 5 * time.Minute, true},
		{"301", MaxRetryAfter, true},
		{"99999999999999999999999", MaxRetryAfter, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(2 * time.Minute).Format(time.RFC850), 2 * time.Minute, true},
		{now.Add(45 * time.Second).Format(time.ANSIC), 45 * time.Second, true},
		{now.Add(time.Hour).Format(http.TimeFormat), MaxRetryAfter, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), MinRetryAfter, true},
		{"", 0, false},
		{"-5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{now.Add(time.Minute).Format(time.RFC3339), 0, false},
	}
	for _, tc := range cases {
		got, ok := ParseRetryAfter(tc.value, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tc.value, got, ok, tc.want, tc.ok)
		}
	}
}

// TestRetryAfterCarried: the Retry-After of a 429 or 503 reaches the
// caller's error over both bindings; that of another status does not
// count, and a header too long to be a delay or a date is dropped.
func TestRetryAfterCarried(t *testing.T) {
	now := time.Now()
	cases := []struct {
		status int
		header string
		want   time.Duration
		ok     bool
	}{
		{http.StatusTooManyRequests, "30", 30 * time.Second, true},
		{http.StatusServiceUnavailable, "12", 12 * time.Second, true},
		{http.StatusServiceUnavailable, "", 0, false},
		{http.StatusBadGateway, "30", 0, false},
		{http.StatusTooManyRequests, strings.Repeat("9", 65), 0, false},
	}
	for _, binding := range []Binding{BindingJSONRPC, BindingHTTPJSON} {
		for _, tc := range cases {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if tc.header != "" {
					w.Header().Set("Retry-After", tc.header)
				}
				http.Error(w, "later", tc.status)
			}))
			_, err := (&Client{URL: srv.URL, Version: V10, Binding: binding}).SendMessage(t.Context(), Message{MessageID: "m", Text: "hi"})
			srv.Close()
			got, ok := RetryAfter(err, now)
			if got != tc.want || ok != tc.ok || !IsRetryable(err) {
				t.Errorf("%s, %d with Retry-After %q: %v, %v (err %v); want %v, %v", binding, tc.status, tc.header, got, ok, err, tc.want, tc.ok)
			}
		}
	}
}
