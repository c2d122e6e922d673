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

package devcluster

import (
	"net"
	"strconv"
	"testing"
)

// The processes' ports must stay out of the ephemeral range, where outgoing
// connections take their local ports.
func TestFreeAddressesBelowTheEphemeralRange(t *testing.T) {
	addrs, err := FreeAddresses(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := strconv.Atoi(port)
		if host != "127.0.0.1" || p < minPort || p > maxPort || seen[a] {
			t.Errorf("address %s: want a distinct 127.0.0.1 port in %d-%d", a, minPort, maxPort)
		}
		seen[a] = true
		l, err := net.Listen("tcp", a)
		if err != nil {
			t.Errorf("%s is not free: %v", a, err)
			continue
		}
		_ = l.Close()
	}
}
