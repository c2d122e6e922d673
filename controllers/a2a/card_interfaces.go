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
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Bounds on what a card may give: a URL as long as spec.a2a.url may be, a
// tenant as long as a name. An interface beyond them is not used.
const (
	maxInterfaceURLBytes = 2048
	maxTenantBytes       = 256
)

// maxListedOffers is how many of a card's interfaces an error lists.
const maxListedOffers = 5

// wireCard is what an agent card says of its interfaces, in 1.0's shape
// (supportedInterfaces) or 0.3's (url, preferredTransport,
// additionalInterfaces). Everything else in a card is left unread.
type wireCard struct {
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
		Tenant          string `json:"tenant"`
	} `json:"supportedInterfaces"`
	URL                  string `json:"url"`
	PreferredTransport   string `json:"preferredTransport"`
	AdditionalInterfaces []struct {
		URL       string `json:"url"`
		Transport string `json:"transport"`
	} `json:"additionalInterfaces"`
}

// offer is one interface as a card lists it, unchecked.
type offer struct{ url, binding, version, tenant string }

// offers are the card's interfaces in its order. A card without
// supportedInterfaces is a 0.3 card: its url speaks its preferredTransport
// (JSON-RPC when it names none), then come its additionalInterfaces, all
// of version 0.3.
func (c *wireCard) offers() []offer {
	var out []offer
	for _, si := range c.SupportedInterfaces {
		out = append(out, offer{url: si.URL, binding: si.ProtocolBinding, version: si.ProtocolVersion, tenant: si.Tenant})
	}
	if len(out) > 0 {
		return out
	}
	if c.URL != "" {
		binding := c.PreferredTransport
		if binding == "" {
			binding = string(BindingJSONRPC)
		}
		out = append(out, offer{url: c.URL, binding: binding, version: string(V03)})
	}
	for _, ai := range c.AdditionalInterfaces {
		out = append(out, offer{url: ai.URL, binding: ai.Transport, version: string(V03)})
	}
	return out
}

// spoken is the binding and version the client speaks o with: JSON-RPC at
// 1.0 or 0.3, HTTP+JSON at 1.0 (and their patch versions, "1.0.2").
func (o offer) spoken() (Binding, Version, bool) {
	var v Version
	switch {
	case o.version == string(V10) || strings.HasPrefix(o.version, string(V10)+"."):
		v = V10
	case o.version == string(V03) || strings.HasPrefix(o.version, string(V03)+"."):
		v = V03
	default:
		return "", "", false
	}
	switch {
	case strings.EqualFold(o.binding, string(BindingJSONRPC)):
		return BindingJSONRPC, v, true
	case strings.EqualFold(o.binding, string(BindingHTTPJSON)) && v == V10:
		return BindingHTTPJSON, v, true
	}
	return "", "", false
}

// unusable says why the client may not call o, or "" when it may: its URL
// must be an absolute http(s) URL whose host the allow list does not refuse,
// as spec.a2a.url must (the dialer checks the addresses).
func (o offer) unusable(allow *AllowList) string {
	if len(o.url) > maxInterfaceURLBytes {
		return fmt.Sprintf("a URL longer than %d bytes", maxInterfaceURLBytes)
	}
	if len(o.tenant) > maxTenantBytes {
		return fmt.Sprintf("a tenant longer than %d bytes", maxTenantBytes)
	}
	u, err := url.Parse(o.url)
	if err != nil || !webURL(u) {
		return "not an absolute http(s) URL"
	}
	if allow.Refuses(u.Hostname()) {
		return "its host is not on the operator's agent allow-list"
	}
	return ""
}

// String is o as an error lists it, its text clipped.
func (o offer) String() string {
	binding, version := clip(o.binding), clip(o.version)
	if binding == "" {
		binding = "(no binding)"
	}
	if version == "" {
		version = "(no version)"
	}
	return fmt.Sprintf("%s %s at %s", binding, version, clip(o.url))
}

// chooseInterface is the first interface of the card read at place that
// the client speaks and may call.
func chooseInterface(place string, body []byte, allow *AllowList) (Interface, error) {
	var card wireCard
	if err := json.Unmarshal(body, &card); err != nil {
		return Interface{}, &CardError{URL: place, msg: fmt.Sprintf("the agent card at %s is not an agent card: %s; %s", place, Sanitize(err.Error()), skipCard)}
	}
	offers := card.offers()
	listed := make([]string, len(offers))
	blocked := false // a spoken interface was passed over for its URL
	for i, o := range offers {
		binding, version, ok := o.spoken()
		if !ok {
			listed[i] = o.String()
			continue
		}
		why := o.unusable(allow)
		if why == "" {
			return Interface{URL: o.url, Binding: binding, Version: version, Tenant: o.tenant}, nil
		}
		listed[i], blocked = o.String()+" ("+why+")", true
	}
	return Interface{}, &CardError{URL: place, msg: nothingUsable(place, listed, blocked)}
}

// nothingUsable is the error of a card none of whose interfaces, listed,
// the client may use.
func nothingUsable(place string, listed []string, blocked bool) string {
	if len(listed) == 0 {
		return fmt.Sprintf("the agent card at %s lists no interfaces (1.0's supportedInterfaces, or 0.3's url); %s", place, skipCard)
	}
	what := "no interface the operator speaks"
	if blocked {
		what = "no interface the operator speaks at a URL it may use"
	}
	shown := listed[:min(len(listed), maxListedOffers)]
	list := strings.Join(shown, ", ")
	if more := len(listed) - len(shown); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return fmt.Sprintf("the agent card at %s lists %s (A2A 1.0 JSONRPC or HTTP+JSON, or 0.3 JSONRPC); it lists: %s; %s", place, what, list, skipCard)
}

// jsonObject tells whether data is one JSON object.
func jsonObject(data []byte) bool {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(data)
}
