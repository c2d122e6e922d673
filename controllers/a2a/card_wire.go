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

	"github.com/go-json-experiment/json/jsontext"
)

// maxCardInterfaces is how many entries of each interface list of a card
// are read. The rest are counted and skipped, not decoded: a card of 1 MiB
// of "{}," would otherwise cost an allocation per entry, tens of MiB.
const maxCardInterfaces = 64

// wireCard is what an agent card says of its interfaces, in 1.0's shape
// (supportedInterfaces) or 0.3's (url, preferredTransport,
// additionalInterfaces). Everything else in a card is left unread.
type wireCard struct {
	SupportedInterfaces  firstEntries[wireInterface]   `json:"supportedInterfaces"`
	URL                  string                        `json:"url"`
	PreferredTransport   string                        `json:"preferredTransport"`
	AdditionalInterfaces firstEntries[wireInterface03] `json:"additionalInterfaces"`
}

// wireInterface is an entry of a 1.0 card's supportedInterfaces.
type wireInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
	Tenant          string `json:"tenant"`
}

// wireInterface03 is an entry of a 0.3 card's additionalInterfaces.
type wireInterface03 struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
}

// firstEntries is a JSON array of which the first maxCardInterfaces
// entries are kept; unread counts the others.
type firstEntries[T any] struct {
	kept   []T
	unread int
}

// UnmarshalJSON keeps the first entries of the array data and skips the
// rest without decoding them. data is valid JSON (encoding/json checked the
// whole card); anything but an array is left to encoding/json, which
// clears the list for null and names the field otherwise.
func (l *firstEntries[T]) UnmarshalJSON(data []byte) error {
	// The options accept what encoding/json does.
	dec := jsontext.NewDecoder(bytes.NewBuffer(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if dec.PeekKind() != '[' {
		return json.Unmarshal(data, &l.kept)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	l.kept, l.unread = nil, 0
	for dec.PeekKind() != ']' {
		if len(l.kept) == maxCardInterfaces {
			if err := dec.SkipValue(); err != nil {
				return err
			}
			l.unread++
			continue
		}
		entry, err := dec.ReadValue()
		if err != nil {
			return err
		}
		var v T
		if err := json.Unmarshal(entry, &v); err != nil {
			return err
		}
		l.kept = append(l.kept, v)
	}
	return nil
}

// offer is one interface as a card lists it, unchecked.
type offer struct{ url, binding, version, tenant string }

// offers are the card's interfaces in its order, and how many more it
// lists unread. A card without supportedInterfaces is a 0.3 card: its url
// speaks its preferredTransport (JSON-RPC when it names none), then come
// its additionalInterfaces, all of version 0.3.
func (c *wireCard) offers() (kept []offer, unread int) {
	for _, si := range c.SupportedInterfaces.kept {
		kept = append(kept, offer{url: si.URL, binding: si.ProtocolBinding, version: si.ProtocolVersion, tenant: si.Tenant})
	}
	if len(kept) > 0 {
		return kept, c.SupportedInterfaces.unread
	}
	if c.URL != "" {
		binding := c.PreferredTransport
		if binding == "" {
			binding = string(BindingJSONRPC)
		}
		kept = append(kept, offer{url: c.URL, binding: binding, version: string(V03)})
	}
	for _, ai := range c.AdditionalInterfaces.kept {
		kept = append(kept, offer{url: ai.URL, binding: ai.Transport, version: string(V03)})
	}
	return kept, c.AdditionalInterfaces.unread
}
