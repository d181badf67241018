# The two commands of the README, and what they stand on. Each installs the system packages it needs
# first (scripts/install-deps PURPOSE): building and running need the C libraries only, the tests more.
.PHONY: run test deps deps-test build release install deb test-package fuzz-smoke format

# Run the gateway on the shipped config (config/linkout.json) with the embedded SQLite store.
run: release
	.build/release/linkout serve

# Build everything and run the whole test suite (unit and integration tests against the real binary),
# then the integration tests once more against the release binary, which `make run` and production use:
# the optimiser has exposed bugs a debug build hides.
test: deps-test
	swift build --build-tests
	swift test --skip-build
	swift build -c release --static-swift-stdlib --product linkout
	LINKOUT_BINARY=$(CURDIR)/.build/release/linkout swift test --skip-build --filter LinkOutIntegrationTests

deps:
	scripts/install-deps build

deps-test:
	scripts/install-deps test

build: deps
	swift build

# --static-swift-stdlib: the Swift runtime and Foundation go into the binary, so it runs on a server without
# the toolchain; the system's C libraries (libevent, SQLite, libpq, libcurl, libmaxminddb, libc) stay
# dynamic, from Debian's packages. The same flags as `make test`'s release build, so one build serves both.
release: deps
	swift build -c release --static-swift-stdlib --product linkout

# Where `make install` puts things. PREFIX=/usr and UNITDIR=/lib/systemd/system for a distribution package
# (`make deb` does that); the defaults are for a hand install on a server.
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
DESTDIR ?=

# The binary (stripped), the pages in share/linkout/Public (the shoppers' and the dashboard's, admin/), the docs and example configs in
# share/doc/linkout, the systemd unit pointing at this binary, and /etc/linkout/linkout.json unless one is
# there already (the config is the operator's once installed; the package marks it a conffile).
install: release
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/linkout/Public/messages $(DESTDIR)$(PREFIX)/share/linkout/Public/admin \
		$(DESTDIR)$(PREFIX)/share/doc/linkout/examples $(DESTDIR)$(PREFIX)/share/doc/linkout/docs $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/linkout
	install -m 755 -s .build/release/linkout $(DESTDIR)$(PREFIX)/bin/linkout
	install -m 644 Public/page.html $(DESTDIR)$(PREFIX)/share/linkout/Public/
	install -m 644 Public/messages/*.json $(DESTDIR)$(PREFIX)/share/linkout/Public/messages/
	install -m 644 Public/admin/* $(DESTDIR)$(PREFIX)/share/linkout/Public/admin/
	install -m 644 README.md SECURITY.md $(DESTDIR)$(PREFIX)/share/doc/linkout/
	install -m 644 docs/*.md docs/*.png $(DESTDIR)$(PREFIX)/share/doc/linkout/docs/
	install -m 644 config/production.example.json $(DESTDIR)$(PREFIX)/share/doc/linkout/examples/
	sed -e 's|/usr/local/bin/linkout|$(PREFIX)/bin/linkout|' -e 's|/usr/share/doc/linkout|$(PREFIX)/share/doc/linkout|' \
		config/linkout.service > $(DESTDIR)$(UNITDIR)/linkout.service
	chmod 644 $(DESTDIR)$(UNITDIR)/linkout.service
	test -e $(DESTDIR)$(SYSCONFDIR)/linkout/linkout.json || { \
		sed 's|/usr/share/linkout|$(PREFIX)/share/linkout|' config/linkout.installed.json > $(DESTDIR)$(SYSCONFDIR)/linkout/linkout.json && \
		chmod 644 $(DESTDIR)$(SYSCONFDIR)/linkout/linkout.json; }

# A Debian package of the above (PREFIX=/usr), with its Depends read off the binary: .build-package/*.deb
# (17 MB, xz; 66 MB installed). About 40 s once the release build is there.
deb: release
	scripts/install-deps deb
	scripts/build-deb

# Installs that package into a fresh Debian root (debootstrap, no Swift toolchain) and checks it serves as
# the unit runs it (its user, its credentials): the installed config (a 302 for Apple's sample token, the
# Dutch page for a Dutch browser), the README's five-step config, and the production example with
# reporting, the API and notifications on. Needs root and Debian's mirror. Measured on 2 cores, after
# `make test` (which builds the same release binary): about 1.5 minutes with nothing cached (make deb
# 40 s, debootstrap 36 s, apt 5 s, the three configs served 2 s), 50 s when .build-package/cache is kept;
# about 3 minutes with nothing cached while other builds loaded the machine (debootstrap 85 s).
test-package: deb
	scripts/install-deps test-package
	scripts/test-package

# The whole test suite under AddressSanitizer, and under ThreadSanitizer, each in its own build folder.
# The integration tests start the linkout binary of the same build, so the server runs instrumented too.
# LeakSanitizer skips only the leaks listed in scripts/lsan-suppressions.txt (Foundation, XCTest, and
# Swift weak-reference side tables it cannot follow), without printing which it skipped: that list on
# stderr would change the output the command tests compare.
.PHONY: test-asan test-tsan
test-asan: export LSAN_OPTIONS = suppressions=$(CURDIR)/scripts/lsan-suppressions.txt:print_suppressions=0
test-asan: deps-test
	swift build --build-tests --sanitize=address --scratch-path .build-asan && swift test --skip-build --sanitize=address --scratch-path .build-asan

test-tsan: deps-test
	swift build --build-tests --sanitize=thread --scratch-path .build-tsan && swift test --skip-build --sanitize=thread --scratch-path .build-tsan

# Every libFuzzer target (fuzz/run: token, query, config, head, json, line-items, notification) built with
# AddressSanitizer and run for 25 s each on its committed seeds: a finding fails it. About 3 minutes of
# runs after the fuzz package's build (fuzz/README.md); the long runs are `fuzz/run 600`.
fuzz-smoke: deps
	fuzz/run 25

# Formats Sources/ and Tests/ by .swift-format (140 columns), with the swift-format the toolchain ships.
format:
	swift format format --in-place --recursive --parallel Sources Tests
