# fluxq — build, test, fuzz, bench, lint.
# `make test` is what CI runs (.ci/run); keep it the whole suite.

GO        ?= go
BIN       := bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null)
# A tag v0.6.0 prints as `fluxq version 0.6.0 (commit abc1234)`.
LDFLAGS   := -X github.com/fluxq/fluxq/internal/version.Version=$(VERSION:v%=%) \
             -X github.com/fluxq/fluxq/internal/version.Commit=$(COMMIT)
FUZZTIME  ?= 10s
BENCHTIME ?= 1s
PKGS      := ./...

.PHONY: all build run test fuzz fuzz-corpus bench lint clean
.PHONY: release man completions install uninstall deb

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
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

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

# --- release, man pages, install, .deb ------------------------------------

BINARIES  := fluxq fluxsched fluxres
PREFIX    ?= /usr/local
DESTDIR   ?=
BINDIR    ?= $(PREFIX)/bin
MANDIR    ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
MANOUT    := $(BIN)/man
COMPOUT   := $(BIN)/completion
MAN1      := fluxq.1 fluxsched.1 fluxres.1
MAN5      := fluxq.toml.5
DIST      := dist
NFPM      ?= $(GO) run github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.44.1
MAINTAINER ?= fluxq developers <fluxq@invalid>
# The commit's time dates the man pages and the files in the .deb, so the
# same commit builds the same bytes (reproducible-builds.org).
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)

# `make build`, reproducibly: no file-system paths, no build ID, no cgo, no
# VCS stamp beyond the version and commit above.
release:
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -tags urfave_cli_no_docs \
	  -ldflags '$(LDFLAGS) -s -w -buildid=' -o $(BIN)/ ./cmd/...

# Section 1 pages from the command definitions, section 5 from
# docs/fluxq.toml.5.md (internal/cli/mangen).
man:
	$(if $(SOURCE_DATE_EPOCH),SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH)) \
	  $(GO) run ./internal/cli/mangen -out $(MANOUT) -version '$(VERSION:v%=%)'

# Each binary's `completion bash|zsh|fish` script, from the binaries in
# $(BIN). A binary without that command gets no completion, and says so.
completions:
	@rm -rf $(COMPOUT) && mkdir -p $(COMPOUT)/bash $(COMPOUT)/zsh $(COMPOUT)/fish
	@for b in $(BINARIES); do \
	  if [ ! -x $(BIN)/$$b ]; then echo "completions: no $(BIN)/$$b; run make build first" >&2; exit 1; fi; \
	  if ! $(BIN)/$$b completion bash > $(COMPOUT)/bash/$$b 2>/dev/null; then \
	    rm -f $(COMPOUT)/bash/$$b; \
	    echo "completions: $$b has no 'completion' command; installing no shell completion for it" >&2; \
	    continue; \
	  fi; \
	  $(BIN)/$$b completion zsh > $(COMPOUT)/zsh/_$$b && \
	  $(BIN)/$$b completion fish > $(COMPOUT)/fish/$$b.fish || exit 1; \
	done

# make install PREFIX=/usr/local DESTDIR=: binaries, man pages and shell
# completions. `make uninstall` with the same variables removes exactly
# those files (and no directory, which may hold others' files).
install: build man
	@$(MAKE) --no-print-directory completions
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	install -m 0755 $(addprefix $(BIN)/,$(BINARIES)) $(DESTDIR)$(BINDIR)/
	install -m 0644 $(addprefix $(MANOUT)/,$(MAN1)) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(addprefix $(MANOUT)/,$(MAN5)) $(DESTDIR)$(MANDIR)/man5/
	@for b in $(BINARIES); do \
	  [ -f $(COMPOUT)/bash/$$b ] || continue; \
	  install -D -m 0644 $(COMPOUT)/bash/$$b $(DESTDIR)$(BASHCOMPDIR)/$$b && \
	  install -D -m 0644 $(COMPOUT)/zsh/_$$b $(DESTDIR)$(ZSHCOMPDIR)/_$$b && \
	  install -D -m 0644 $(COMPOUT)/fish/$$b.fish $(DESTDIR)$(FISHCOMPDIR)/$$b.fish && \
	  echo "installed $$b completions for bash, zsh and fish" || exit 1; \
	done

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(BINARIES))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(MAN1)) $(addprefix $(DESTDIR)$(MANDIR)/man5/,$(MAN5))
	rm -f $(addprefix $(DESTDIR)$(BASHCOMPDIR)/,$(BINARIES)) \
	  $(foreach b,$(BINARIES),$(DESTDIR)$(ZSHCOMPDIR)/_$(b) $(DESTDIR)$(FISHCOMPDIR)/$(b).fish)

# dist/fluxq_VERSION-1_amd64.deb with nfpm (packaging/nfpm.yaml): the
# release binaries, gzipped man pages, completions, README and
# docs/policies.md. bench/debcheck.sh installs and removes it.
deb: release man
	@$(MAKE) --no-print-directory completions
	rm -rf $(DIST)/stage $(DIST)/fluxq_*.deb
	mkdir -p $(DIST)/stage/man
	for p in $(MAN1) $(MAN5); do gzip -9n -c $(MANOUT)/$$p > $(DIST)/stage/man/$$p.gz; done
	DEB_VERSION=$$(sh packaging/debversion.sh '$(VERSION)' '$(COMMIT)') \
	  MAINTAINER='$(MAINTAINER)' \
	  $(if $(SOURCE_DATE_EPOCH),SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH)) \
	  $(NFPM) pkg --packager deb --config packaging/nfpm.yaml --target $(DIST)/
