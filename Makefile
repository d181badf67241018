# The two commands of the README, and what they stand on. Each installs what it needs first.
.PHONY: run test deps build release

# Run the gateway on the shipped config (config/linkout.json) with the embedded SQLite store.
run: release
	.build/release/linkout serve

# Build everything and run the whole test suite (unit and integration tests against the real binary),
# then the integration tests once more against the release binary, which `make run` and production use:
# the optimiser has exposed bugs a debug build hides.
test: deps
	swift build --build-tests
	swift test --skip-build
	swift build -c release --product linkout
	LINKOUT_BINARY=$(CURDIR)/.build/release/linkout swift test --skip-build --filter LinkOutIntegrationTests

deps:
	scripts/install-deps

build: deps
	swift build

release: deps
	swift build -c release --product linkout

# The whole test suite under AddressSanitizer, and under ThreadSanitizer, each in its own build folder.
# The integration tests start the linkout binary of the same build, so the server runs instrumented too.
# LeakSanitizer skips only the leaks listed in scripts/lsan-suppressions.txt (Foundation, XCTest, and
# Swift weak-reference side tables it cannot follow), without printing which it skipped: that list on
# stderr would change the output the command tests compare.
.PHONY: test-asan test-tsan
test-asan: export LSAN_OPTIONS = suppressions=$(CURDIR)/scripts/lsan-suppressions.txt:print_suppressions=0
test-asan: deps
	swift build --build-tests --sanitize=address --scratch-path .build-asan && swift test --skip-build --sanitize=address --scratch-path .build-asan

test-tsan: deps
	swift build --build-tests --sanitize=thread --scratch-path .build-tsan && swift test --skip-build --sanitize=thread --scratch-path .build-tsan
