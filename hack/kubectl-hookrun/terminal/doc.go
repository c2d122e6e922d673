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

// Package terminal is how the plugin prints (DESIGN section 10): every
// value a user or a sender controls (names, owner, prefix, messages,
// outputs, answers, the API server's errors that quote them) reaches the
// terminal escaped. Each command escapes the values it prints (Printable,
// PrintableLine, and the -o json|yaml of PrintData and the curl of
// ShellQuote, forms that stay valid), and the plugin's output streams pass
// everything through Printable once more (Writer), so a value a command
// forgot is still inert. It also holds the small forms of values in tables
// and on cards (Age, OneLine, OrDash, OrNone, Cut).
//
// It imports libraries only; every other package of the plugin may import
// it.
package terminal
