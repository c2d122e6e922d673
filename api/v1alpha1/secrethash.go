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

package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// SecretHashPrefix starts every value of status.secretHash.
const SecretHashPrefix = "sha256:"

// SecretHash returns the form stored in status.secretHash for a secret:
// "sha256:" followed by the lower-case hex SHA-256 of the secret's bytes. The
// receiver hashes the X-Service-Webhook-Secret header value the same way.
func SecretHash(secret []byte) string {
	sum := sha256.Sum256(secret)
	return SecretHashPrefix + hex.EncodeToString(sum[:])
}

// ParseSecretHash returns the digest of a status.secretHash value. It fails
// for anything SecretHash could not have produced.
func ParseSecretHash(hash string) ([sha256.Size]byte, error) {
	var digest [sha256.Size]byte
	hexPart, ok := strings.CutPrefix(hash, SecretHashPrefix)
	if !ok {
		return digest, fmt.Errorf("secret hash must start with %q", SecretHashPrefix)
	}
	if len(hexPart) != hex.EncodedLen(sha256.Size) || strings.ToLower(hexPart) != hexPart {
		return digest, fmt.Errorf("secret hash must have %d lower-case hex digits after %q", hex.EncodedLen(sha256.Size), SecretHashPrefix)
	}
	if _, err := hex.Decode(digest[:], []byte(hexPart)); err != nil {
		return digest, fmt.Errorf("secret hash: %w", err)
	}
	return digest, nil
}
