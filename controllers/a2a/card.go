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
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/propagation"
)

// Interface is one way to reach an agent: where, which binding and version,
// and its tenant.
type Interface struct {
	URL     string
	Binding Binding
	Version Version
	Tenant  string
}

// cardPath is where an agent publishes its card, under its URL or its
// origin.
const cardPath = "/.well-known/agent-card.json"

// skipCard is the way round a card that cannot be used.
const skipCard = "set spec.a2a.protocolVersion to skip the card"

// maxCardBytes bounds an agent card; a bigger one is refused unread.
const maxCardBytes = 1 << 20

// ReadCard reads the agent card of the agent at agentURL —
// <agentURL>/.well-known/agent-card.json, or, when that place answers 404
// or 410 (it has no card), /.well-known/agent-card.json at agentURL's
// origin — and returns the first interface in the card's order that the
// client speaks. Any other answer ends the read: behind a gateway that
// routes by path, the origin's card may be another agent's, and an agent
// that is down for a moment must not send its runs there. Errors are
// *CardError.
//
// hc should be the operator's egress-checked client (see NewHTTPClient):
// it bounds the time and checks the addresses dialed; redirects are never
// followed. Every URL taken from the card must be an absolute http(s) URL
// whose host allow does not refuse, as spec.a2a.url must.
func ReadCard(ctx context.Context, hc *http.Client, allow *AllowList, agentURL string) (Interface, error) {
	places, err := cardPlaces(agentURL)
	if err != nil {
		return Interface{}, &CardError{URL: agentURL, msg: err.Error()}
	}
	tried := make([]placeAnswer, 0, len(places))
	for _, place := range places {
		body, ans := fetchCard(ctx, hc, allow, place)
		if body != nil {
			return chooseInterface(place, body, allow)
		}
		tried = append(tried, ans)
		if !ans.absent {
			break
		}
	}
	return Interface{}, noCard(tried, len(places))
}

// cardPlaces are the URLs the card of the agent at agentURL is looked for
// at, in order: under agentURL, then at its origin (once if they are one).
// The origin is asked only when the place under agentURL has no card.
func cardPlaces(agentURL string) ([]string, error) {
	u, err := url.Parse(agentURL)
	if err != nil || !webURL(u) {
		return nil, fmt.Errorf("spec.a2a.url %q is not an absolute http:// or https:// URL, so no agent card can be read", agentURL)
	}
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	under := u.JoinPath(cardPath).String()
	origin := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: cardPath}).String()
	if under == origin {
		return []string{under}, nil
	}
	return []string{under, origin}, nil
}

// webURL tells whether u is an absolute http(s) URL with a host.
func webURL(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != ""
}

// placeAnswer is what one place answered when it gave no card.
type placeAnswer struct {
	url string
	// what it answered, as "(what)" after its URL: "HTTP 404", the
	// transport error.
	what string
	// retryable: it may answer otherwise later (transport, 5xx, 429).
	retryable bool
	// absent: it answered 404 or 410, it has no card; the next place may.
	absent bool
	// alone: what is the whole error, said without the place's URL
	// before it (the allow list refused the host; the card is too big).
	alone bool
}

// fetchCard GETs the card at place: its body when it answered 200 with a
// JSON object of at most maxCardBytes, else what it did answer.
func fetchCard(ctx context.Context, hc *http.Client, allow *AllowList, place string) ([]byte, placeAnswer) {
	at := placeAnswer{url: place}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, place, nil)
	if err != nil { // place is built from a URL that parsed
		at.what, at.alone = err.Error(), true
		return nil, at
	}
	if host := req.URL.Hostname(); allow.Refuses(host) {
		return nil, refusedAnswer(at, &NotAllowedError{Host: host})
	}
	req.Header.Set("Accept", "application/json")
	traceContext.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := send(hc, req)
	if err != nil {
		var refused *NotAllowedError
		if errors.As(err, &refused) {
			return nil, refusedAnswer(at, refused)
		}
		at.what, at.retryable = Sanitize(transportCause(err).Error()), ctx.Err() == nil && TLSFailureOf(err) == TLSOK
		return nil, at
	}
	defer func() { _ = resp.Body.Close() }()
	return readCardAnswer(resp, at)
}

// refusedAnswer says that the allow list refused the card's host.
func refusedAnswer(at placeAnswer, refused *NotAllowedError) placeAnswer {
	at.what, at.alone = fmt.Sprintf("the agent card at %s was not read: %s", at.url, refused.Error()), true
	return at
}

// readCardAnswer reads an answer to a card's GET.
func readCardAnswer(resp *http.Response, at placeAnswer) ([]byte, placeAnswer) {
	status := resp.StatusCode
	at.what = fmt.Sprintf("HTTP %d", status)
	switch {
	case status >= 300 && status < 400:
		if loc := clip(resp.Header.Get("Location")); loc != "" {
			at.what += ", a redirect to " + loc + ", not followed"
		}
		return nil, at
	case status == http.StatusNotFound || status == http.StatusGone:
		at.absent = true
		return nil, at
	case status != http.StatusOK:
		at.retryable = status >= 500 || status == http.StatusTooManyRequests
		return nil, at
	}
	data, tooBig, err := readBounded(resp.Body, maxCardBytes)
	switch {
	case err != nil:
		at.what, at.retryable = "HTTP 200, but reading it failed: "+Sanitize(err.Error()), true
		return nil, at
	case tooBig:
		at.what, at.alone = fmt.Sprintf("the agent card at %s is larger than %d MiB, more than the operator reads; "+skipCard, at.url, maxCardBytes>>20), true
		return nil, at
	case !jsonObject(data):
		at.what = "HTTP 200, not a JSON object"
		return nil, at
	}
	return data, at
}

// noCard is the error when none of the places asked, of the places there
// are, gave a card.
func noCard(tried []placeAnswer, places int) *CardError {
	last := tried[len(tried)-1]
	if last.alone {
		return &CardError{URL: last.url, msg: last.what}
	}
	e := &CardError{URL: tried[0].url}
	parts := make([]string, len(tried))
	for i, at := range tried {
		parts[i] = fmt.Sprintf("%s (%s)", at.url, at.what)
		e.Retryable = e.Retryable || at.retryable
	}
	e.msg = "no agent card at " + strings.Join(parts, " nor at ")
	if len(tried) < places {
		e.msg += ", and the origin's is read only when that place answers 404 or 410"
	}
	e.msg += "; publish one there, or " + skipCard
	return e
}

// CardError is an agent card that could not be read or used. Its text is
// one line a user can act on; whatever the agent chose in it went through
// Sanitize.
type CardError struct {
	// URL is the card read (or refused), or the first place looked at
	// when none was found.
	URL string
	// Retryable: a place did not answer, or answered 5xx or 429; the card
	// may be read later (IsRetryable says so too).
	Retryable bool
	msg       string
}

func (e *CardError) Error() string { return e.msg }
