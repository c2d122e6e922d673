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
// must be an absolute http(s) URL without user info whose host the allow
// list does not refuse, as spec.a2a.url must (the dialer checks the
// addresses). Its URL and tenant go to the Agent's status as they are, so
// they must be plain: no character that Sanitize would replace (a
// right-to-left override would otherwise reach kubectl's output).
func (o offer) unusable(allow *AllowList) string {
	switch {
	case len(o.url) > maxInterfaceURLBytes:
		return fmt.Sprintf("a URL longer than %d bytes", maxInterfaceURLBytes)
	case len(o.tenant) > maxTenantBytes:
		return fmt.Sprintf("a tenant longer than %d bytes", maxTenantBytes)
	case !plain(o.url):
		return "a URL with white space, a control or format character, or invalid UTF-8"
	case !plain(o.tenant):
		return "a tenant with white space, a control or format character, or invalid UTF-8"
	}
	u, err := url.Parse(o.url)
	if err != nil || !webURL(u) {
		return "not an absolute http(s) URL"
	}
	if u.User != nil {
		return "a URL with user info (user:password@); a card is public, put no credentials in it"
	}
	if allow.Refuses(u.Hostname()) {
		return "its host is not on the operator's agent allow-list"
	}
	return ""
}

// String is o as an error lists it, its text clipped and any user info in
// its URL masked.
func (o offer) String() string {
	binding, version, at := clip(o.binding), clip(o.version), clip(maskUserInfo(o.url))
	if binding == "" {
		binding = "(no binding)"
	}
	if version == "" {
		version = "(no version)"
	}
	if at == "" {
		at = "(no URL)"
	}
	return fmt.Sprintf("%s %s at %s", binding, version, at)
}

// maskUserInfo is raw with the user info of the URL it is, if any,
// replaced by "xxxxx": a card's credentials stay out of the Agent's status.
func maskUserInfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = url.User("xxxxx")
	return u.String()
}

// chooseInterface is the first interface of the card read at place that
// the client speaks and may call.
func chooseInterface(place string, body []byte, allow *AllowList) (Interface, error) {
	var card wireCard
	if err := json.Unmarshal(body, &card); err != nil {
		return Interface{}, &CardError{URL: place, msg: fmt.Sprintf("the agent card at %s is not an agent card: %s; %s", place, Sanitize(err.Error()), skipCard)}
	}
	offers, unread := card.offers()
	var passed passedOver
	for _, o := range offers {
		binding, version, spoken := o.spoken()
		why := ""
		if spoken {
			if why = o.unusable(allow); why == "" {
				return Interface{URL: o.url, Binding: binding, Version: version, Tenant: o.tenant}, nil
			}
		}
		passed.add(o, why)
	}
	passed.unread = unread
	return Interface{}, &CardError{URL: place, msg: passed.message(place)}
}

// passedOver is what a card lists that the client did not take: the first
// few interfaces as an error shows them, and how many more.
type passedOver struct {
	shown []string
	// more were passed over (or left unread) beyond shown.
	more int
	// unread are the entries of a list beyond maxCardInterfaces.
	unread int
	// blocked: a spoken interface was passed over for its URL or tenant.
	blocked bool
}

// add records o, passed over for why ("" when it is not spoken). Only the
// first maxListedOffers are formatted: a card may list thousands.
func (p *passedOver) add(o offer, why string) {
	p.blocked = p.blocked || why != ""
	if len(p.shown) == maxListedOffers {
		p.more++
		return
	}
	s := o.String()
	if why != "" {
		s += " (" + why + ")"
	}
	p.shown = append(p.shown, s)
}

// message is the error of a card at place none of whose interfaces the
// client may use.
func (p *passedOver) message(place string) string {
	if len(p.shown) == 0 {
		return fmt.Sprintf("the agent card at %s lists no interfaces (1.0's supportedInterfaces, or 0.3's url); %s", place, skipCard)
	}
	what := "no interface the operator speaks"
	if p.blocked {
		what = "no interface the operator speaks at a URL it may use"
	}
	list := strings.Join(p.shown, ", ")
	if more := p.more + p.unread; more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	if p.unread > 0 {
		list += fmt.Sprintf(" (only the first %d of a list are read)", maxCardInterfaces)
	}
	return fmt.Sprintf("the agent card at %s lists %s (A2A 1.0 JSONRPC or HTTP+JSON, or 0.3 JSONRPC); it lists: %s; %s", place, what, list, skipCard)
}

// jsonObject tells whether data is one JSON object.
func jsonObject(data []byte) bool {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(data)
}
