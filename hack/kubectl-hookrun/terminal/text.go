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

package terminal

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Values in tables and on cards, as kubectl prints them.

// Age is how long ago t was, as kubectl prints ages ("-" for never).
func Age(t *metav1.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t.Time)) + " ago"
}

func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func OrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// OneLine is s on one line, printable, cut to n characters.
func OneLine(s string, n int) string {
	s = PrintableLine(strings.Join(strings.Fields(s), " "))
	if s == "" {
		return "-"
	}
	return Cut(s, n)
}

func Cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
