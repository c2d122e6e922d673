# hookrun Makefile. Tools are pinned and installed into ./bin on first use, so
# a fresh machine needs only Go and access to the Go module proxy.

## Versions
K8S_VERSION ?= v1.37.0
ETCD_VERSION ?= v3.6.6
CONTROLLER_TOOLS_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION ?= v2.15.0
# helm, kustomize and promtool are tools of the module: go.mod pins them (its
# tool directive, `go get -tool PACKAGE@VERSION` to change one), and they are
# built with the module's dependencies (go-build-tool below). promtool, for the
# chart's alert tests, is Prometheus 3.15 (module version v0.315.1): v0.316.0
# raises k8s.io/* to v0.37.1, and v0.315.1 builds only with client_golang
# v1.24.1 (so the e2e suite's Alertmanager oracle is v0.34.2); it raises zap
# and x/exp. docs/testing.md says what each costs.
HELM_VERSION := $(or $(shell go list -m -f '{{.Version}}' helm.sh/helm/v3),$(error cannot read helm's version from go.mod))
KUSTOMIZE_VERSION := $(or $(shell go list -m -f '{{.Version}}' sigs.k8s.io/kustomize/kustomize/v5),$(error cannot read kustomize's version from go.mod))
PROMTOOL_VERSION := $(or $(shell go list -m -f '{{.Version}}' github.com/prometheus/prometheus),$(error cannot read promtool's version from go.mod))
# krew, for the kubectl plugin's krew test (the Go module proxy refuses v0.4.5: 403).
KREW_VERSION ?= v0.4.4
# Release tools (make release, make test-release; actionlint in make lint).
KO_VERSION ?= v0.19.1
COSIGN_VERSION ?= v2.6.5
# crane, of go-containerregistry.
CRANE_VERSION ?= v0.22.1
ACTIONLINT_VERSION ?= v1.7.12
# CoreDNS of make test-node's node (hack/node/build-coredns.sh).
COREDNS_VERSION ?= v1.15.0

## Locations
LOCALBIN ?= $(shell pwd)/bin
K8S_BIN ?= $(LOCALBIN)/k8s/$(K8S_VERSION)
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
HELM ?= $(LOCALBIN)/helm-$(HELM_VERSION)
# The helm make test runs: the same, built with -race (go-build-tool).
TEST_HELM ?= $(LOCALBIN)/helm-$(HELM_VERSION)-race
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
PROMTOOL ?= $(LOCALBIN)/promtool-$(PROMTOOL_VERSION)
KREW ?= $(LOCALBIN)/krew-$(KREW_VERSION)
VALIDATE_KREW_MANIFEST ?= $(LOCALBIN)/validate-krew-manifest-$(KREW_VERSION)
KO ?= $(LOCALBIN)/ko-$(KO_VERSION)
COSIGN ?= $(LOCALBIN)/cosign-$(COSIGN_VERSION)
CRANE ?= $(LOCALBIN)/crane-$(CRANE_VERSION)
ACTIONLINT ?= $(LOCALBIN)/actionlint-$(ACTIONLINT_VERSION)
COREDNS ?= $(LOCALBIN)/node/coredns-$(COREDNS_VERSION)

# envtest (controller-runtime) finds etcd and kube-apiserver here.
export KUBEBUILDER_ASSETS := $(K8S_BIN)
export GOTOOLCHAIN := local

GO_TEST_FLAGS ?=
# Per test binary. go test's default (10m) would end the end-to-end suite,
# whose start waits on progress on a loaded machine (hack/devcluster), before
# Ginkgo's own timeouts could report what it waited for.
GO_TEST_TIMEOUT ?= 30m
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Write deepcopy code for the API types.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: manifests
manifests: $(CONTROLLER_GEN) $(HELM) ## Write CRDs (config/crd/bases), the operator's and receiver's RBAC (config/rbac), the chart's generated parts and the values table of its README.
	$(CONTROLLER_GEN) crd paths="./api/..." output:crd:artifacts:config=config/crd/bases
	hack/gen-rbac.sh "$(CONTROLLER_GEN)"
	hack/gen-chart.sh "$(HELM)" "$(K8S_VERSION)"
	go run ./hack/gen-chart-readme -chart charts/hookrun

.PHONY: fmt
fmt: ## go fmt.
	go fmt ./...

.PHONY: vet
vet: ## go vet.
	go vet ./...

# The go directive go.mod keeps: tidy never raises it (nor the toolchain line),
# and fails instead when a requirement needs a newer Go.
GO_DIRECTIVE := $(or $(shell go list -m -f '{{.GoVersion}}'),$(error cannot read the go directive from go.mod))

.PHONY: tidy
tidy: ## go mod tidy, keeping go.mod's go directive and toolchain line.
	go mod tidy -go=$(GO_DIRECTIVE)

# First, before the generators, which need a go.sum that holds every module.
.PHONY: verify-tidy
verify-tidy:
	@go mod tidy -diff -go=$(GO_DIRECTIVE) || { echo "go.mod or go.sum is not tidy (the diff above); run 'make tidy' and commit"; exit 1; }

.PHONY: verify
verify: verify-tidy generate manifests ## Fail if go mod tidy would change go.mod or go.sum; regenerate everything and fail if the tree changed (generated files are never edited by hand).
	@if [ -n "$$(git status --porcelain -- api config charts)" ]; then \
		echo "generated files are out of date; run 'make generate manifests' and commit:"; \
		git status --porcelain -- api config charts; git --no-pager diff --stat -- api config charts; exit 1; \
	fi
	@echo "generated files are up to date"

.PHONY: lint
lint: $(GOLANGCI_LINT) $(ACTIONLINT) ## Run golangci-lint (configuration in .golangci.yml; again with the race build tag over the packages with race-only files) and actionlint over .github/workflows.
	$(GOLANGCI_LINT) run ./...
	$(GOLANGCI_LINT) run --build-tags race ./controllers/filter/... ./hack/devcluster/...
	$(ACTIONLINT)

# make fuzz: each fuzz target mutated for FUZZ_TIME executions (hack/fuzz.sh).
FUZZ_TIME ?= 30000x

# make test runs every package once, under the race detector (as cluster-api
# does), fuzz targets' seed corpora included (hack/test.sh: its phases, and
# why the tools build in the background). The suites that start processes
# of their own beside a control plane (the end-to-end suite and the short
# chaos run) run one at a time after the other packages, on the binaries
# built once for them into bin/test, with -race as well (a race in the
# operator or the receiver stops the process, and the suite sees it die).
PROCESS_SUITES := test/e2e test/e2e/chaos
# The packages that run the tools (helm, kustomize, promtool, krew).
TOOL_PACKAGES := test/chart hack/kubectl-hookrun/release
# Run once more without -race: the filter's allocation bounds hold for the
# receiver as built, and -race turns off the copy-free conversions they count
# on (the package skips them under -race). Small: cel-go, no Kubernetes.
NO_RACE_PACKAGES := ./controllers/filter/
TEST_BIN := $(LOCALBIN)/test
TEST_ENV = HELM=$(TEST_HELM) KUSTOMIZE=$(KUSTOMIZE) PROMTOOL=$(PROMTOOL) KREW=$(KREW) VALIDATE_KREW_MANIFEST=$(VALIDATE_KREW_MANIFEST) HOOKRUN_TEST_BIN=$(TEST_BIN)

.PHONY: test
test: control-plane ## Run all tests once, under the race detector: unit tests and envtest suites against a real kube-apiserver, fuzz seeds, the end-to-end suite and a short chaos run, and beside them the chart, its alerts and krew with the tools built meanwhile.
	$(TEST_ENV) TOOL_PACKAGES="$(TOOL_PACKAGES)" PROCESS_SUITES="$(PROCESS_SUITES)" NO_RACE_PACKAGES="$(NO_RACE_PACKAGES)" \
		GO_TEST_TIMEOUT=$(GO_TEST_TIMEOUT) GO_TEST_FLAGS="$(GO_TEST_FLAGS)" hack/test.sh

.PHONY: test-tools
test-tools: test-tools-alone test-tools-shared ## Install the tools the chart's and the krew tests run (make test builds them in the background).

# The tools built with dependencies of their own (krew), and those that share
# make test's compiled packages (helm, kustomize, promtool): make test starts
# the first at once, at the lowest priority, and the second once the
# binaries of make test-binaries are built.
.PHONY: test-tools-alone test-tools-shared
test-tools-alone: $(KREW) $(VALIDATE_KREW_MANIFEST)
test-tools-shared: $(TEST_HELM) $(KUSTOMIZE) $(PROMTOOL)

.PHONY: test-binaries
test-binaries: ## Build, with -race, the binaries the process suites run (hookrun, the demo agent, the kubectl plugin) into bin/test.
	go build -race -ldflags="-s -w" -o $(TEST_BIN)/ . ./hack/demo-agent ./hack/kubectl-hookrun

.PHONY: fuzz
fuzz: ## Mutate every fuzz target for FUZZ_TIME executions each (not part of make test, which runs their seeds).
	FUZZ_TIME=$(FUZZ_TIME) hack/fuzz.sh

# The tests make test-k8s runs: the envtest suites (api, controllers,
# receiver), and the tests of test/chart, the plugin and main that start an
# API server.
K8S_TESTS_CHART ?= ^(TestChartInstallsAccessControl|TestChartUpgradesCRDs|TestChartHTTPRoute)$$
K8S_TESTS_OTHER ?= ^(TestSubcommandsServeProbes|TestCommandsEscapeWhatUsersAndSendersWrote)$$

.PHONY: test-k8s
test-k8s: control-plane $(HELM) $(KUSTOMIZE) ## Run the envtest suites on the control plane of K8S_VERSION (make test-k8s K8S_VERSION=v1.33.13 builds it first), with the admission policies in the mode that version needs (not part of make test; docs/operations.md lists the versions tested).
	@echo "make test-k8s: Kubernetes $(K8S_VERSION), started $$(date -u +%FT%TZ)"
	HELM=$(HELM) KUSTOMIZE=$(KUSTOMIZE) go test -count=1 -timeout $(GO_TEST_TIMEOUT) $(GO_TEST_FLAGS) ./api/v1alpha1 ./controllers/... ./receiver
	HELM=$(HELM) KUSTOMIZE=$(KUSTOMIZE) go test -count=1 -timeout $(GO_TEST_TIMEOUT) $(GO_TEST_FLAGS) -run '$(K8S_TESTS_CHART)' ./test/chart
	go test -count=1 -timeout $(GO_TEST_TIMEOUT) $(GO_TEST_FLAGS) -run '$(K8S_TESTS_OTHER)' . ./hack/kubectl-hookrun
	@echo "make test-k8s: Kubernetes $(K8S_VERSION) passed, ended $$(date -u +%FT%TZ)"

.PHONY: test-release
test-release: control-plane $(KO) $(COSIGN) $(CRANE) $(HELM) ## Run make release against a registry on loopback with a throwaway key, then verify every artifact (test/release). Not part of make test: it cross-compiles.
	KO=$(KO) COSIGN=$(COSIGN) CRANE=$(CRANE) HELM=$(HELM) K8S_VERSION=$(K8S_VERSION) hack/test-release.sh

.PHONY: test-node
test-node: control-plane node-binaries $(KO) $(COSIGN) $(CRANE) $(HELM) ## Start one real node (kubelet, containerd, kube-proxy, CoreDNS; needs root and hack/node/install-runtime.sh), install make release on it with helm and run test/node. Not part of make test.
	KO=$(KO) COSIGN=$(COSIGN) CRANE=$(CRANE) HELM=$(HELM) K8S_VERSION=$(K8S_VERSION) K8S_BIN=$(K8S_BIN) COREDNS=$(COREDNS) hack/test-node.sh

.PHONY: node-binaries
node-binaries: ## Build kube-scheduler, kubelet and kube-proxy into bin/k8s/$(K8S_VERSION), and CoreDNS into bin/node (cached), for make test-node.
	K8S_VERSION=$(K8S_VERSION) hack/build-control-plane.sh --node "$(K8S_BIN)"
	COREDNS_VERSION=$(COREDNS_VERSION) hack/node/build-coredns.sh "$(COREDNS)"

.PHONY: control-plane
control-plane: ## Build etcd, kube-apiserver, kube-controller-manager and kubectl into bin/k8s/$(K8S_VERSION) (cached).
	K8S_VERSION=$(K8S_VERSION) ETCD_VERSION=$(ETCD_VERSION) hack/build-control-plane.sh "$(K8S_BIN)"

.PHONY: dev
dev: control-plane build ## Run hookrun locally: control plane, operator, receiver and demo agent; prints a ready curl command. Ctrl-C stops it.
	bin/hookrun-dev --assets bin/k8s/$(K8S_VERSION)

.PHONY: bench
bench: control-plane build ## Benchmarks against baselines (not part of make test): prints a table and writes docs/benchmarks.md.
	CGO_ENABLED=0 go build -trimpath -o $(LOCALBIN)/hookrun-bench ./hack/bench
	$(LOCALBIN)/hookrun-bench --assets bin/k8s/$(K8S_VERSION) $(BENCH_FLAGS)

.PHONY: chaos
chaos: control-plane build ## Reliability suite (short form runs in make test): kill -9 the operator, receiver and kube-apiserver under load; no accepted run may be lost. Writes its counts into docs/benchmarks.md.
	CGO_ENABLED=0 go build -trimpath -o $(LOCALBIN)/hookrun-chaos ./hack/chaos/cmd
	$(LOCALBIN)/hookrun-chaos --assets bin/k8s/$(K8S_VERSION) $(CHAOS_FLAGS)

##@ Build

.PHONY: build
build: ## Build bin/hookrun, the kubectl plugin bin/kubectl-hookrun, the demo agent bin/demo-agent and bin/hookrun-dev (make dev).
	CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=$(VERSION)" -o $(LOCALBIN)/hookrun .
	CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=$(VERSION)" -o $(LOCALBIN)/kubectl-hookrun ./hack/kubectl-hookrun
	install -m 0755 hack/kubectl-hookrun/kubectl_complete-hookrun $(LOCALBIN)/kubectl_complete-hookrun
	CGO_ENABLED=0 go build -trimpath -o $(LOCALBIN)/demo-agent ./hack/demo-agent
	CGO_ENABLED=0 go build -trimpath -o $(LOCALBIN)/hookrun-dev ./hack/dev

.PHONY: plugin-release
plugin-release: ## Build the kubectl plugin's krew archives (linux, darwin: amd64, arm64; windows: amd64) and its krew manifest hookrun.yaml into bin/plugin-release, for VERSION=vX.Y.Z.
	go run ./hack/kubectl-hookrun/release -version "$(VERSION)" -out $(LOCALBIN)/plugin-release

##@ Release

# make release: the registry the images (REGISTRY/hookrun and
# REGISTRY/hookrun-demo-agent) and the chart (oci://REGISTRY/charts/hookrun) go to, where the artifacts are written, and
# how they are signed: with the key file COSIGN_KEY (its password in
# COSIGN_PASSWORD) if set, else keyless (Sigstore's OIDC flow; in GitHub
# Actions, the workflow's identity). COSIGN_TLOG_UPLOAD=false keeps a
# key-signed release out of the public transparency log (make test-release).
REGISTRY ?=
DIST ?= dist
COSIGN_KEY ?=
COSIGN_TLOG_UPLOAD ?= true

# What the caller gives (the tag, the registry) reaches hack/release.sh in
# its environment, never pasted into a recipe's shell line: a git tag may
# hold $(...) and quotes, and the release job may push packages and mint
# OIDC tokens. release.sh checks VERSION is a semantic version first.
release: export VERSION := $(VERSION)
release: export REGISTRY := $(REGISTRY)
release: export DIST := $(DIST)
release: export COSIGN_KEY := $(COSIGN_KEY)
release: export COSIGN_TLOG_UPLOAD := $(COSIGN_TLOG_UPLOAD)

.PHONY: release
release: $(KO) $(COSIGN) $(CRANE) $(HELM) ## Build, publish and sign a release (VERSION=vX.Y.Z REGISTRY=host/path): hookrun's and the demo agent's images with SBOMs, provenance and SBOM attestations, the OCI chart, dist/install.yaml, crds.yaml and demo-agent.yaml, the plugin's krew archives, dist/checksums.txt.
	@[ -n "$$REGISTRY" ] || { echo "make release needs REGISTRY, e.g. REGISTRY=ghcr.io/hookrun"; exit 1; }
	KO="$(KO)" COSIGN="$(COSIGN)" CRANE="$(CRANE)" HELM="$(HELM)" K8S_VERSION="$(K8S_VERSION)" hack/release.sh

# make release-login: log ko, cosign, crane and helm in to REGISTRY's host as
# REGISTRY_USERNAME with the password or token in REGISTRY_PASSWORD (the
# release workflow: ghcr.io with its GITHUB_TOKEN).
.PHONY: release-login
release-login: $(CRANE) $(HELM) ## Log the release tools in to REGISTRY's host (REGISTRY_USERNAME, REGISTRY_PASSWORD from the environment).
	@[ -n "$(REGISTRY)" ] && [ -n "$$REGISTRY_USERNAME" ] && [ -n "$$REGISTRY_PASSWORD" ] || { echo "make release-login needs REGISTRY and, in the environment, REGISTRY_USERNAME and REGISTRY_PASSWORD"; exit 1; }
	@host=$$(echo "$(REGISTRY)" | cut -d/ -f1); \
	printenv REGISTRY_PASSWORD | $(CRANE) auth login "$$host" -u "$$REGISTRY_USERNAME" --password-stdin; \
	printenv REGISTRY_PASSWORD | $(HELM) registry login "$$host" -u "$$REGISTRY_USERNAME" --password-stdin

##@ Tools

$(LOCALBIN):
	mkdir -p $(LOCALBIN)

$(CONTROLLER_GEN): | $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

$(GOLANGCI_LINT): | $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

# The release, make manifests and make test-k8s run a helm built without
# -race; make test a race-built one, which shares its compiled packages.
$(HELM): | $(LOCALBIN)
	$(call go-build-tool,$(HELM),helm.sh/helm/v3/cmd/helm)

$(TEST_HELM): | $(LOCALBIN)
	$(call go-build-tool,$(TEST_HELM),helm.sh/helm/v3/cmd/helm,-race)

.PHONY: helm
helm: $(HELM) ## Install the pinned helm into bin/.

$(KUSTOMIZE): | $(LOCALBIN)
	$(call go-build-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,-race)

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Install the pinned kustomize into bin/.

# Without service discovery (build tag remove_all_sd): the rule tests need
# none, and it leaves out most cloud SDKs. With -race, as make test runs it.
$(PROMTOOL): | $(LOCALBIN)
	$(call go-build-tool,$(PROMTOOL),github.com/prometheus/prometheus/cmd/promtool,-race -tags=remove_all_sd)

.PHONY: promtool
promtool: $(PROMTOOL) ## Install the pinned promtool into bin/ (the chart's alert tests run it).

$(KO): | $(LOCALBIN)
	$(call go-install-tool,$(KO),github.com/google/ko,$(KO_VERSION))

$(COSIGN): | $(LOCALBIN)
	$(call go-install-tool,$(COSIGN),github.com/sigstore/cosign/v2/cmd/cosign,$(COSIGN_VERSION))

$(CRANE): | $(LOCALBIN)
	$(call go-install-tool,$(CRANE),github.com/google/go-containerregistry/cmd/crane,$(CRANE_VERSION))

$(ACTIONLINT): | $(LOCALBIN)
	$(call go-install-tool,$(ACTIONLINT),github.com/rhysd/actionlint/cmd/actionlint,$(ACTIONLINT_VERSION))

.PHONY: release-tools
release-tools: $(KO) $(COSIGN) $(CRANE) $(HELM) $(ACTIONLINT) ## Install the pinned ko, cosign, crane (go-containerregistry), helm and actionlint into bin/.

# krew and validate-krew-manifest are built in the downloaded module with its
# own go.mod, as go install would build them: go install itself fails, as the
# module proxy does not list sigs.k8s.io/krew's versions, which it reads for
# deprecations.
$(KREW): | $(LOCALBIN)
	$(call go-build-krew,$(KREW),krew)

$(VALIDATE_KREW_MANIFEST): | $(LOCALBIN)
	$(call go-build-krew,$(VALIDATE_KREW_MANIFEST),validate-krew-manifest)

.PHONY: krew
krew: $(KREW) $(VALIDATE_KREW_MANIFEST) ## Install the pinned krew and validate-krew-manifest into bin/ (the plugin's krew test runs them).

# go-build-krew builds sigs.k8s.io/krew/cmd/$(2)@$(KREW_VERSION) as $(1).
define go-build-krew
@[ -f "$(1)" ] || { \
set -e; \
echo "building sigs.k8s.io/krew/cmd/$(2)@$(KREW_VERSION)"; \
start=$$(date +%s); \
tmp=$$(mktemp -d); \
(cd "$$tmp" && go mod download sigs.k8s.io/krew@$(KREW_VERSION)); \
(cd "$$(go env GOMODCACHE)/sigs.k8s.io/krew@$(KREW_VERSION)" && \
  go build -ldflags "-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$(KREW_VERSION)" -o "$$tmp/$(2)" ./cmd/$(2)); \
mv "$$tmp/$(2)" "$(1)"; \
rm -rf "$$tmp"; \
echo "built sigs.k8s.io/krew/cmd/$(2)@$(KREW_VERSION) in $$(($$(date +%s) - start))s"; \
}
endef

# go-build-tool builds package $(2), a tool of go.mod, as $(1), with the
# module's dependencies and the flags $(3). make test's tools are built with
# -race, as make test builds its binaries and test packages, so that they
# compile only what they do not share with them (helm: under a minute once
# make test-binaries is built, against six alone). A tool built so runs
# slower: the chart tests take 133 s with a race-built helm, 49 s without.
define go-build-tool
@[ -f "$(1)" ] || { \
set -e; \
echo "building $(2) (a tool of go.mod) $(3)"; \
start=$$(date +%s); \
go build $(3) -ldflags="-s -w" -o "$(1).tmp" $(2); \
mv "$(1).tmp" "$(1)"; \
echo "built $(2) in $$(($$(date +%s) - start))s"; \
}
endef

# go-install-tool installs package $(2)@$(3) as the versioned binary $(1);
# $(4) names the binary go install writes when it is not the package's last element.
define go-install-tool
@[ -f "$(1)" ] || { \
set -e; \
echo "installing $(2)@$(3)"; \
start=$$(date +%s); \
tmp=$$(mktemp -d); \
GOBIN=$$tmp go install -ldflags="-s -w" $(2)@$(3); \
mv "$$tmp/$(or $(4),$$(basename $(2)))" "$(1)"; \
rm -rf "$$tmp"; \
echo "installed $(2)@$(3) in $$(($$(date +%s) - start))s"; \
}
endef
