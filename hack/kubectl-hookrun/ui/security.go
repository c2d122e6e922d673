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

package ui

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"
)

// contentSecurityPolicy allows the page's own script, styles and requests
// only: no inline script or style, no frames, no other origin.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// cookieName is the token's cookie. Cookies are not kept apart by port, so
// the name carries the address: two UIs on one host do not overwrite each
// other's.
func (s *Server) cookieName() string {
	r := strings.NewReplacer(".", "_", ":", "_", "[", "", "]", "")
	return "hookrun-ui-" + r.Replace(s.addr)
}

// secure puts the checks in front of h, in this order: the Host (else
// 403), the token, from the address once or from the cookie (else 401), the
// Origin of a state change (else 403). Every answer carries the
// Content-Security-Policy and is never cached.
func (s *Server) secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", contentSecurityPolicy)
		hd.Set("X-Content-Type-Options", "nosniff")
		// Not no-referrer: with it, browsers send "Origin: null" on a form
		// POST, and the Origin check would refuse the UI's own forms.
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Cache-Control", "no-store")
		if r.Host != s.addr {
			// DNS rebinding: a page of another site whose name now
			// resolves to loopback names its own host.
			http.Error(w, "This UI answers only at "+s.addr+".", http.StatusForbidden)
			return
		}
		if t, ok := r.URL.Query()["token"]; ok {
			if len(t) != 1 || !s.validToken(t[0]) {
				http.Error(w, "The token in the address is not this UI's: open the address kubectl hookrun ui printed.", http.StatusUnauthorized)
				return
			}
			http.SetCookie(w, &http.Cookie{
				Name: s.cookieName(), Value: s.token, Path: "/",
				HttpOnly: true, SameSite: http.SameSiteStrictMode,
			})
			// The same address without the token, so that it is in no
			// history, bookmark or Referer.
			q := r.URL.Query()
			q.Del("token")
			// A path of this server only: "//host" would send the
			// browser to another site with the cookie just set.
			path := "/" + strings.TrimLeft(r.URL.Path, "/")
			clean := url.URL{Path: path, RawQuery: q.Encode()}
			http.Redirect(w, r, clean.String(), http.StatusSeeOther)
			return
		}
		if c, err := r.Cookie(s.cookieName()); err != nil || !s.validToken(c.Value) {
			http.Error(w, "Not signed in: open the address kubectl hookrun ui printed.", http.StatusUnauthorized)
			return
		}
		if !safeMethod(r.Method) && r.Header.Get("Origin") != "http://"+s.addr {
			http.Error(w, "A change must come from this UI's own pages.", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) validToken(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead
}
