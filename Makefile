# Reach — the two commands that matter:
#   make run    build, make sure Postgres is up, start the dashboard on :8080 with the example comparison
#   make test   every test: unit, integration (real Postgres + River), browser (headless Chromium); installs
#               bubblewrap, python3 and chromium when missing (as root with apt) and ends with a summary of skips

GO      ?= go
BIN     ?= bin/reach
ADDR    ?= $(or $(REACH_ADDR),:8080)
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)

.PHONY: run build test test-unlicensed check generate postgres sandbox browser bench bench-import bench-pages bench-scale bench-lab adaptive-check clean

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/reach

## run: the dashboard with in-process workers; uses DATABASE_URL if set, else the local Postgres.
run: build postgres sandbox
	$(BIN) serve --addr $(ADDR)

## sandbox: install bubblewrap and Debian's python3 for code grading when missing (as root, with apt);
## without them Reach still runs, says so, and leaves code samples not graded.
sandbox:
	@if ! command -v bwrap >/dev/null 2>&1 || [ ! -x /usr/bin/python3 ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing bubblewrap and python3 for code grading"; \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap python3 >/dev/null || \
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap python3 >/dev/null; } || \
			echo "could not install bubblewrap: code samples will not be graded"; \
		else \
			echo "bubblewrap or /usr/bin/python3 is missing: run 'sudo apt-get install bubblewrap python3' to grade code"; \
		fi; \
	fi

## postgres: start the local Postgres cluster if it is not answering (no-op with DATABASE_URL set).
postgres:
	@if [ -z "$$DATABASE_URL" ] && ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then \
		echo "starting local PostgreSQL"; \
		pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start; \
		for i in $$(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done; \
	fi

## browser: install Chromium for the browser tests when missing (as root, with apt); otherwise say which
## package to install, and that REACH_SKIP_BROWSER=1 skips those tests.
browser:
	@if [ "$$REACH_SKIP_BROWSER" != 1 ] && ! command -v chromium >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing chromium and chromium-driver for the browser tests"; \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null || \
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; } || \
			echo "could not install chromium: the browser tests will fail (REACH_SKIP_BROWSER=1 skips them)"; \
		else \
			echo "chromium is missing: run 'sudo apt-get install chromium chromium-driver' for the browser tests, or set REACH_SKIP_BROWSER=1 to skip them"; \
		fi; \
	fi

## test: the whole suite against the real Postgres (started if down) and River, on the data the repository
## carries; tests named *Unlicensed also run where ../shared/data has the data the repository may not carry.
## gotestsum ends with a summary: counts of passed, skipped and failed tests, and each skipped test with its reason.
GOTESTSUM = $(GO) tool gotestsum --format pkgname-and-test-fails --format-hide-empty-pkg
test: postgres sandbox browser
	$(GOTESTSUM) -- -count=1 -timeout 30m ./...

## test-unlicensed: only the tests that read ../shared/data's unlicensed folder (CI runs them beside ../shared).
test-unlicensed: postgres sandbox browser
	$(GOTESTSUM) -- -count=1 -timeout 30m -run Unlicensed ./...

## check: formatting, vet and generated templ code in sync (CI runs it before the tests).
check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool templ generate -path web/views >/dev/null
	@git diff --exit-code -- 'web/views/*_templ.go' || { echo "generated templ code is stale: run make generate and commit"; exit 1; }

generate:
	$(GO) tool templ generate -path web/views

bench:
	$(GO) test -run XXX -bench . -benchmem ./internal/...

## bench-import: generate a MATH500 base/RL pair with real completion texts (2 × 500 × 1,024 samples, about 2.9 GB,
## in /tmp, kept for the next run) and time raw COPY of its bytes against `reach import --wait`: wall, WAL, peak RSS.
## More flags with BENCH_IMPORT="-reps 3 -upload" (reach-bench import -h lists them). Takes minutes.
BENCH_IMPORT ?=
bench-import: build postgres
	$(GO) build -o bin/reach-bench ./cmd/reach-bench
	bin/reach-bench import -reach $(BIN) $(BENCH_IMPORT)

## bench-pages: a paper-scale comparison (2 models × 500 × 1,024 samples with texts) and 20 concurrent
## clients on each page: p50/p95/p99, CPU per request (this process: server and clients) and the CPU per request
## of the Postgres backends serving it (when Postgres runs on this machine). More flags with BENCH_PAGES="...".
bench-pages: postgres
	$(GO) build -o bin/reach-bench ./cmd/reach-bench
	bin/reach-bench -texts $(BENCH_PAGES)

## bench-scale: issue "fast at paper scale" in one command: the import next to raw COPY, then the pages.
bench-scale: bench-import bench-pages

## bench-lab: a lab's instance in one database: about 10 M samples with real completion texts in 10 comparisons (a
## training run of a base model and 10 checkpoints × 500 × 1,024, 2 × 12,500 × 128, 2 × 500 × 1,024 and 7 small ones),
## generated with one COPY per run on several connections; then pglz against lz4 on the same texts, bytes per sample,
## each run's trigram search index (built as the search_index job does: time and bytes per sample), EXPLAIN of the hot
## queries, the pages at 20 clients on the training run and on a small comparison (and on the small one alone),
## `reach import --wait` of one 1.5 GB file next to the 10 M samples against raw COPY (speed, per core, peak RSS), a
## delete of a whole comparison (wall, WAL, locks) and VACUUM, and at the end issue 28's goals, met or not, with the
## load average of each phase. About 30 GB with the search indexes; the database is dropped at the end
## (BENCH_LAB="-keep" keeps it). About 2.5 hours on the idle 2-core machine, most of it the search indexes
## (BENCH_LAB="-search-index-of pages" indexes only the two measured comparisons). More flags with BENCH_LAB="..."
## (reach-bench lab -h).
BENCH_LAB ?=
bench-lab: build postgres
	$(GO) build -o bin/reach-bench ./cmd/reach-bench
	bin/reach-bench lab -reach $(BIN) $(BENCH_LAB)

## adaptive-check: issue 24's end-to-end run: two replay endpoints serve the MATH500 counts of Qwen2.5-7B base and
## SimpleRL-Zoo (n = 128) as completions, sampled with --n 128 --adaptive --budget 64000 --seed 7; it checks the samples
## drawn, every pass@k against the full data's and the crossover k*, and prints them. About a minute on 2 cores.
adaptive-check: postgres
	$(GO) test -count=1 -v -timeout 20m -run '^TestAdaptiveMATH500$$' ./internal/jobs/

clean:
	rm -rf bin
