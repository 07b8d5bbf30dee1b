# openrecall — make targets. `make run` and `make test` are the two commands a
# newcomer needs; see README.md.
export CGO_ENABLED := 1

GO      ?= go
BIN     := bin/openrecall
RUN_DB  := .openrecall/example.db
PBT_SEED ?= 20260101
EVAL_SEED ?= 20260101
EVAL_SIZE ?= 2400
# The release version `openrecall version` prints; `git describe` when in a
# git checkout.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# golangci-lint, pinned; `make lint` installs it into bin/tools when absent.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := bin/tools/golangci-lint-$(GOLANGCI_LINT_VERSION)
# Test binaries are linked without DWARF (-w): no test reads it (a panic's
# stack trace comes from the symbol table), and the ~40 links of make test
# take seconds each with it on 2 cores.
TESTLDFLAGS := -ldflags=-w

.PHONY: build run test test-pg race lint smoke bench bench-analyze bench-compare bench-serve bench-templates cover clean pbt pbt-nightly eval fuzz e2e-serve e2e-alertmanager e2e-notify e2e-chat e2e-llm e2e-cockpit e2e-multiprocess mutants dist dist-check test-dist image image-check release-check test-chart

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/openrecall

# The main job on the bundled example with the embedded defaults: a fresh
# memory seeded with the example's analyst decisions, then the example queue.
run: build
	@rm -f $(RUN_DB) $(RUN_DB)-wal $(RUN_DB)-shm
	@./$(BIN) --db $(RUN_DB) memory seed
	./$(BIN) --db $(RUN_DB) analyze examples/queue.jsonl

# Unit, golden, integration and property tests (property suite: ci profile,
# fixed seed), then the black-box test of the built binary.
# The corpus tests append their figures to FIGURES, printed at the end.
FIGURES := $(CURDIR)/.openrecall/figures.txt
test:
	@mkdir -p $(dir $(FIGURES)) && rm -f $(FIGURES)
	OPENRECALL_FIGURES=$(FIGURES) OPENRECALL_PBT_SEED=$${OPENRECALL_PBT_SEED:-$(PBT_SEED)} OPENRECALL_PBT_PROFILE=$${OPENRECALL_PBT_PROFILE:-ci} \
		$(GO) test -count=1 $(TESTLDFLAGS) -timeout 20m ./...
	@$(MAKE) --no-print-directory test-pg
	@echo "corpus figures:"; cat $(FIGURES) 2>/dev/null || echo "  (none written)"

# The storage conformance run: the store, storage property, workflow and
# serve tests again on PostgreSQL, same seed. The server is
# OPENRECALL_PG_DSN when set, else a throwaway cluster per test binary
# (scripts/pgcluster.sh: PostgreSQL's server binaries, Debian's
# postgresql package); without either the tests skip loudly, and under
# CI=true they fail.
# The storage properties run there under the conformance profile (ci's
# sizes, a third of its cases: the SQLite run has searched the generators'
# reach; this one checks the other backend agrees), unless
# OPENRECALL_PBT_PROFILE names one for both runs.
PG_PACKAGES := ./memory/ ./tests/property/ ./workflow/ ./server/...
test-pg:
	OPENRECALL_TEST_BACKEND=postgres OPENRECALL_PBT_SEED=$${OPENRECALL_PBT_SEED:-$(PBT_SEED)} OPENRECALL_PBT_PROFILE=$${OPENRECALL_PBT_PROFILE:-conformance} \
		$(GO) test -count=1 $(TESTLDFLAGS) -timeout 30m $(PG_PACKAGES)

race:
	$(GO) test -race -short -count=1 -timeout 30m ./...

# go vet, gofmt, go.mod tidiness and golangci-lint (default linters, see
# .golangci.yml) at the pinned version, on the module and on scripts/image.
lint: $(GOLANGCI_LINT)
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	$(GOLANGCI_LINT) run ./...
	@# scripts/image, the image builder, is a module of its own.
	$(GO) -C scripts/image vet ./...
	$(GO) -C scripts/image mod tidy -diff
	cd scripts/image && $(CURDIR)/$(GOLANGCI_LINT) run ./...

$(GOLANGCI_LINT):
	@mkdir -p bin/tools
	GOBIN=$(CURDIR)/bin/tools $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv bin/tools/golangci-lint $@

smoke: build
	$(GO) run ./scripts/smoke -bin ./$(BIN)

# The Go benchmarks. Those on PostgreSQL (BenchmarkAuditAppend8Writers'
# postgres half, BenchmarkRecallPG) use $OPENRECALL_PG_DSN, else a throwaway
# cluster (fsync off); OPENRECALL_BENCH_PG_SIZES=1k,100k,1M adds the 1M
# recall (seeded once, minutes; the schema is kept for the next run).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m ./memory/... ./intake/... ./fingerprint/... ./workflow/... ./model/local/... ./routing/...

# analyze throughput on the fixed 20k-alert rule-corpus queue, 1 and 2
# workers: CPU µs per alert, peak RSS, cache hit rates, the ratio to merely
# reading and JSON-decoding the same file, and the CPU profile's top entries.
# BENCH_QUEUE=generated times queuegen's mixed queue instead;
# BENCH_QUEUE=misses the miss path: free-text alerts that all differ, an
# empty memory, the caches off, a row without and a row with alert groups.
# BENCH_FLAGS passes more flags (-memory empty -cache off: the corpus queue
# on the miss path).
bench-analyze: build
	$(GO) run ./scripts/bench -bin ./$(BIN) -n $${BENCH_ALERTS:-20000} -queue $${BENCH_QUEUE:-corpus} $${BENCH_FLAGS:-}

# Two builds compared in one run: A from BASE (a temporary worktree), B
# from the working tree, interleaved A,B,B,A over 5 rounds of 5,000 alerts:
# CPU, allocations and database/WAL bytes per alert on the misses queue,
# the corpus queue (caches off and on) and the corpus on an empty memory
# (the real-rule webhooks), medians, B/A and spreads, beside Python's
# json.loads of the same lines. BENCH_COMPARE_FLAGS passes more flags
# (-n 20000 -rounds 9, -queues misses,webhooks). See scripts/benchcompare.
bench-compare:
	@test -n "$(BASE)" || { echo "make bench-compare: set BASE=<rev> (the build to compare the working tree with)"; exit 2; }
	$(GO) run ./scripts/benchcompare -base $(BASE) $${BENCH_COMPARE_FLAGS:-}

# openrecall serve under load on loopback, one serve run per --workers
# value (1 and 4): the maximum durable 202 rate, triage throughput, p50/p99
# accept latency at 50%, 80% and 100% of that maximum, 503s under inbox
# pressure, errors, peak RSS and database bytes per delivery, and a check
# that every accepted delivery was triaged exactly once. Real payloads:
# the rule corpus as Alertmanager webhooks and captured sender fixtures.
# BENCH_SERVE_FLAGS passes more flags (-soak 10m -workers 1: RSS over a
# soak, with -heap-profiles serve's live heap early and late in it and
# with -retention 5m a server.retention; -clients, -n, -duration, -phase,
# -rates). -db postgres (a fresh
# schema per run on $OPENRECALL_PG_DSN, else on a throwaway cluster of
# scripts/pgcluster.sh) or -db postgres://… (loopback only) runs on
# PostgreSQL; -procs 1,2,4 runs that many serve processes on one database
# (their own server.instance and port, the posts spread over them), e.g.
#   make bench-serve BENCH_SERVE_FLAGS='-db postgres -procs 1,2,4 -workers 1'
# See scripts/benchserve.
bench-serve: build
	$(GO) run ./scripts/benchserve -bin ./$(BIN) $${BENCH_SERVE_FLAGS:-}

# The labelled template benchmark (tests/benchmarks/data/templates): grouping
# accuracy (Zhu et al.), pairwise precision and recall and the share of lines
# in mixed templates, per system and per set. LOGHUB=DIR also scores Loghub's
# 2k samples (not bundled: research-only licence) read from DIR.
bench-templates:
	OPENRECALL_LOGHUB=$${LOGHUB:-} $(GO) test -count=1 -v -run 'TestBundledBenchmarkFloor|TestLoghub' ./tests/benchmarks/templates/ | grep -v '^=== '

cover:
	$(GO) test -short -count=1 -coverprofile=coverage.out ./...
	$(GO) tool cover -func=coverage.out | tail -n 1

# The replay benchmark: a generated labelled corpus (seed $(EVAL_SEED),
# $(EVAL_SIZE) alerts) replayed on a fresh temporary memory with a simulated
# analyst, under every memory × model mode. Exits 5 if any alert whose truth
# is real or an attack was bypassed. See eval/README.md.
eval: build
	./$(BIN) eval --seed $(EVAL_SEED) --size $(EVAL_SIZE) --modes

# Fuzz the intake reader (seeded with the bad-input corpus of
# tests/reliability) for FUZZTIME; failing inputs land in
# intake/testdata/fuzz and then run with every `make test`.
FUZZTIME ?= 20s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME) ./intake

# End to end against a real third-party OpenAI-compatible server:
# @dwmkerr/mock-llm 0.1.29 from npm (installed into the git-ignored .e2e-llm/),
# on a loopback port, with the rules in scripts/e2ellm/mock-llm.yaml. Needs
# node and npm. See scripts/e2ellm/doc.go for what it checks.
e2e-llm: build
	$(GO) run ./scripts/e2ellm -bin ./$(BIN)

# The property suite alone.
pbt:
	OPENRECALL_PBT_SEED=$${OPENRECALL_PBT_SEED:-$(PBT_SEED)} OPENRECALL_PBT_PROFILE=$${OPENRECALL_PBT_PROFILE:-ci} \
		$(GO) test -count=1 -v -run 'TestProperties' ./tests/property/...

# The nightly profile with a date seed (a new seed every day; -count=1 defeats
# the test cache, which keys on environment values).
pbt-nightly:
	OPENRECALL_PBT_SEED=$$(date -u +%Y%m%d) OPENRECALL_PBT_PROFILE=nightly \
		$(GO) test -count=1 -timeout 60m -run 'TestProperties' ./tests/property/...

# The teeth of the property suite: each semantic mutant of
# tests/property/mutants/ applied to a scratch copy, judged by the property
# suite alone (profile MUTANTS_PROFILE, default ci); prints killed/survived
# per mutant and the kill rate. A mutant that no longer applies is an error,
# and so is one that survives. MUTANTS_FLAGS=-all lists every property that
# kills each mutant; MUTANTS_FLAGS=-targeted tries the properties each spec
# expects first and bounds the rest of the suite (~40 minutes for the whole
# set on 2 cores); CI adds -shard auto/5 -changed 30: a fifth of the
# set, turn by turn, and every mutant of what the last 30 commits touched.
mutants:
	$(GO) run ./scripts/mutants -profile $${MUTANTS_PROFILE:-ci} -seed $${OPENRECALL_PBT_SEED:-$(PBT_SEED)} $(MUTANTS_FLAGS)

# openrecall serve end to end, the built binary alone: real Alertmanager
# payloads, PagerDuty events, redelivery, oversize body, bad token, kill -9
# after a 202 and restart, metrics, audit verify, SIGTERM.
e2e-serve:
	$(GO) test -count=1 -run 'TestServe' -v ./cmd/openrecall

# openrecall serve behind a real Prometheus Alertmanager: installs Debian's
# prometheus-alertmanager (with amtool) when absent (as root), then fires,
# redelivers and resolves alerts through it. See scripts/e2e/alertmanager.
e2e-alertmanager: build
	@if ! command -v prometheus-alertmanager >/dev/null 2>&1 || ! command -v amtool >/dev/null 2>&1; then \
		if [ "$$(id -u)" != 0 ]; then echo "e2e-alertmanager: needs prometheus-alertmanager and amtool: apt-get install prometheus-alertmanager (as root)"; exit 2; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus-alertmanager; \
	fi
	$(GO) run ./scripts/e2e/alertmanager -bin ./$(BIN)

# openrecall serve's notifications end to end: fake PagerDuty, Opsgenie,
# Slack, Teams, webhook and SMTP receivers (internal/fakereceivers) and a
# real Alertmanager (installed as for e2e-alertmanager) hear a night of
# alerts through serve's routes — repeats memory closes, escalations, a
# storm, detections, recoveries, a decision, a PagerDuty outage with serve
# killed -9 mid-delivery — and each must get exactly what the routes say,
# the outbox empty at the end. See scripts/e2e/notify.
e2e-notify: build
	@if ! command -v prometheus-alertmanager >/dev/null 2>&1 || ! command -v amtool >/dev/null 2>&1; then \
		if [ "$$(id -u)" != 0 ]; then echo "e2e-notify: needs prometheus-alertmanager and amtool: apt-get install prometheus-alertmanager (as root)"; exit 2; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus-alertmanager; \
	fi
	$(GO) run ./scripts/e2e/notify -bin ./$(BIN)

# Deciding from Slack end to end: the fake Slack Web API and serve with an
# interactive slack receiver and chat.slack; an escalation's buttons, a
# click on Add a note… and the modal's submission signed as Slack signs
# them; the note and dead ends in memory, the message updated, the audit
# intact; forged and expired requests refused. See scripts/e2e/chat.
e2e-chat: build
	$(GO) run ./scripts/e2e/chat -bin ./$(BIN)

# The cockpit (web UI) in a real headless Chromium (Debian's chromium,
# driven with chromedp) against the built binary's serve on loopback; see
# tests/e2e/cockpit. Without chromium it skips loudly, unless CI=true, where
# it fails. Screenshots of the queue (1,440 and 390 px) and a review page go
# to .e2e-cockpit/ (copy them into docs/ when the pages change).
e2e-cockpit: build
	OPENRECALL_E2E_COCKPIT=1 OPENRECALL_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -v -timeout 10m ./tests/e2e/cockpit

# Three serve processes of four workers on one PostgreSQL schema take 5,000
# Alertmanager notifications, each posted twice to two of them, while each is
# killed -9 and restarted and one is stopped past its lease: exactly one
# analysis per alert, one audit entry per route step, audit verify intact.
# PostgreSQL: OPENRECALL_PG_DSN, else a throwaway cluster (scripts/pgcluster.sh).
# OPENRECALL_MP_SEED replays a run's schedule, OPENRECALL_MP_ALERTS resizes it.
# Then TestCorpusStorm's storm (645 rules × 30 firings) is posted round-robin
# to 1 and to 3 processes: one group per key and head severity, none mixing
# identities, no more model calls with 3 than with 1 (DESIGN §13).
e2e-multiprocess:
	OPENRECALL_MP_STORM_RULES=all $(GO) test -count=1 -run 'TestMultiProcessServe|TestMultiProcessStorm' -v -timeout 30m ./tests/reliability

# Release builds: a static binary per platform in dist/ (cgo's SQLite and
# glibc linked in; netgo and osusergo keep getaddrinfo and getpwnam out, so
# the static link has no warnings), named openrecall-VERSION-linux-ARCH,
# and dist/SHA256SUMS. VERSION is the stamp of make build. No VCS stamp
# (-buildvcs=false): the version carries the revision, and the bytes depend
# only on the source, the Go version and the C toolchain. arm64 is cross
# compiled with Debian's gcc-aarch64-linux-gnu and libc6-dev-arm64-cross.
DIST_VERSION := $(VERSION)
DIST_TAGS    := osusergo netgo sqlite_omit_load_extension
DIST_LDFLAGS := -s -w -extldflags "-static" -X main.version=$(DIST_VERSION)
DIST_CC_amd64 := gcc
DIST_CC_arm64 := aarch64-linux-gnu-gcc
# $(call dist-bin,ARCH,OUT): one static binary.
define dist-bin
GOOS=linux GOARCH=$(1) CC=$(DIST_CC_$(1)) $(GO) build -trimpath -buildvcs=false \
		-tags '$(DIST_TAGS)' -ldflags '$(DIST_LDFLAGS)' -o $(2) ./cmd/openrecall
endef

dist:
	@rm -rf dist && mkdir -p dist
	$(call dist-bin,amd64,dist/openrecall-$(DIST_VERSION)-linux-amd64)
	$(call dist-bin,arm64,dist/openrecall-$(DIST_VERSION)-linux-arm64)
	cd dist && sha256sum openrecall-$(DIST_VERSION)-linux-* > SHA256SUMS
	@cat dist/SHA256SUMS

# Reproducibility: the amd64 binary built twice, the second time into
# another directory with an empty build cache (every package, the cgo
# SQLite included, compiled again); the two must have the same bytes.
DIST_CHECK_DIR := .openrecall/dist-check
dist-check:
	@rm -rf $(DIST_CHECK_DIR) && mkdir -p $(DIST_CHECK_DIR)/a $(DIST_CHECK_DIR)/b $(DIST_CHECK_DIR)/cache
	$(call dist-bin,amd64,$(DIST_CHECK_DIR)/a/openrecall)
	GOCACHE=$(CURDIR)/$(DIST_CHECK_DIR)/cache $(call dist-bin,amd64,$(DIST_CHECK_DIR)/b/openrecall)
	@cd $(DIST_CHECK_DIR) && sha256sum a/openrecall b/openrecall && \
		if cmp -s a/openrecall b/openrecall; then echo "dist-check: reproducible"; else echo "dist-check: the two builds differ"; exit 1; fi
	@rm -rf $(DIST_CHECK_DIR)

# The release binaries run: version prints the stamp, analyze on the
# bundled example exits 0 with its summary; the arm64 one under
# qemu-aarch64-static (Debian's qemu-user-static; skipped loudly without
# it, failed under CI=true). Runs make dist first.
# Runs make dist and make image first: the image's test (tests/dist,
# TestImage) unpacks dist/openrecall-VERSION-oci.tar and runs its amd64
# binary from the image's root file system (chroot, as the image's user;
# skipped loudly when not root, failed under CI=true).
test-dist: dist image
	OPENRECALL_DIST=$(CURDIR)/dist OPENRECALL_DIST_VERSION=$(DIST_VERSION) OPENRECALL_IMAGE=$(CURDIR)/$(IMAGE) \
		$(GO) test -count=1 -v ./tests/dist

# The OCI image: an image index of linux/amd64 and linux/arm64, each the
# static binary of make dist on a layer of the host's CA bundle and time
# zone data (Debian's ca-certificates and tzdata), run as user 65532;
# built without a container daemon by scripts/image (go-containerregistry,
# in a module of its own) into dist/openrecall-VERSION-oci.tar, an OCI
# layout archive (podman load -i, docker load -i, skopeo copy
# oci-archive:…). Every mtime and the creation time are SOURCE_DATE_EPOCH,
# the last commit's time: two builds give the same digest.
IMAGE := dist/openrecall-$(DIST_VERSION)-oci.tar
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 1)
IMAGE_REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
# $(call image-build,OUT): the archive from the binaries in dist/.
define image-build
$(GO) -C scripts/image run . -dist $(CURDIR)/dist -version $(DIST_VERSION) \
		-revision '$(IMAGE_REVISION)' -epoch $(SOURCE_DATE_EPOCH) -o $(1)
endef
image: dist
	$(call image-build,$(CURDIR)/$(IMAGE))
	cd dist && sha256sum $(notdir $(IMAGE)) >> SHA256SUMS
	@ls -l $(IMAGE)

# The image built a second time from the same binaries: the same bytes.
IMAGE_CHECK_DIR := .openrecall/image-check
image-check: image
	@rm -rf $(IMAGE_CHECK_DIR) && mkdir -p $(IMAGE_CHECK_DIR)
	$(call image-build,$(CURDIR)/$(IMAGE_CHECK_DIR)/oci.tar)
	@sha256sum $(IMAGE) $(IMAGE_CHECK_DIR)/oci.tar && \
		if cmp -s $(IMAGE) $(IMAGE_CHECK_DIR)/oci.tar; then echo "image-check: reproducible"; else echo "image-check: the two builds differ"; exit 1; fi
	@rm -rf $(IMAGE_CHECK_DIR)

# What CI runs of the release: the binaries' reproducibility, the image's,
# and the tests of both (make dist once).
release-check: dist-check image-check test-dist

# The Helm chart (deploy/helm/openrecall) rendered with the Helm SDK for
# the default (SQLite) and PostgreSQL values, every manifest decoded
# strictly into the Kubernetes API types, the config.yaml it mounts loaded
# by openrecall's config package, Helm's linter; helm lint --strict too
# when helm is on PATH. Then the built binary run with the default pod's
# arguments, environment and files, on loopback, and as two replicas of
# the PostgreSQL values on one schema (OPENRECALL_PG_DSN, else a throwaway
# cluster as in test-pg). A module of its own
# (deploy/helm/chartcheck), so openrecall's go.mod takes no Kubernetes or
# Helm dependency.
test-chart: build
	cd deploy/helm/chartcheck && $(GO) mod tidy -diff && $(GO) vet . && \
		OPENRECALL_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -v .

clean:
	rm -rf bin .openrecall coverage.out .e2e-llm .e2e-cockpit dist
