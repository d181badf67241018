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
