# fluxq — build, test, fuzz, bench, lint.
# `make test` is what CI runs (.ci/run); keep it the whole suite.

GO        ?= go
BIN       := bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/fluxq/fluxq/internal/version.Version=$(VERSION)
FUZZTIME  ?= 10s
BENCHTIME ?= 1s
PKGS      := ./...

.PHONY: all build run test fuzz fuzz-corpus bench lint clean

all: build

# Static, and without urfave/cli's man-page renderer: every job starts a
# job shell (this fluxsched binary), so its start-up time is paid per job.
build:
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -tags urfave_cli_no_docs -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

# Start fluxsched on this machine with the default state directory
# ($FLUXQ_STATE_DIR, else $XDG_STATE_HOME/fluxq, else ~/.local/state/fluxq).
run: build
	$(BIN)/fluxsched run

test:
	$(GO) test -race -count=1 $(PKGS)

# Every fuzz target in the module, FUZZTIME each (go test -fuzz takes one
# target at a time). `make fuzz FUZZTIME=60s` is the acceptance run.
fuzz:
	@set -e; for pkg in $$($(GO) list ./internal/...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t ($(FUZZTIME))"; \
	    $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) $$pkg; \
	  done; \
	done

# Copy what the fuzzer found (kept in GOCACHE) into each package's
# testdata/fuzz, so plain `go test` replays it and it can be committed.
fuzz-corpus:
	@cache=$$($(GO) env GOCACHE)/fuzz; \
	for pkg in $$($(GO) list ./internal/...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    if [ -d "$$cache/$$pkg/$$t" ]; then \
	      mkdir -p "$$dir/testdata/fuzz/$$t"; \
	      cp -n "$$cache/$$pkg/$$t"/* "$$dir/testdata/fuzz/$$t/" 2>/dev/null || true; \
	      echo "$$pkg $$t: $$(ls "$$dir/testdata/fuzz/$$t" | wc -l) inputs"; \
	    fi; \
	  done; \
	done

bench:
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) $(PKGS)

lint:
	@out=$$(gofmt -l .); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

clean:
	rm -rf $(BIN)
