# The two commands a newcomer needs: `make demo` and `make test`.
SWIFT ?= swift
SHELL := /bin/bash
# CI builds the package with every warning an error.
STRICT ?= -Xswiftc -warnings-as-errors

.PHONY: deps demo test stress bench fuzz docs clean

deps:
	@scripts/install-deps.sh

## Builds the `afn` tool and runs it against a local nginx that the demo starts itself.
demo: deps
	$(SWIFT) build -c release --product afn
	scripts/demo.sh "$$($(SWIFT) build -c release --show-bin-path)/afn"

## Builds and runs every test (real servers over loopback; the Swift snippets
## of the README and the DocC articles are compiled to SIL by one of them), builds the DocC catalog with its
## warnings as errors, runs the stress tests under ThreadSanitizer, and each
## fuzz target for a bounded time.
test: deps
	$(SWIFT) build --build-tests $(STRICT)
	$(SWIFT) test --skip-build
	$(MAKE) docs
	$(MAKE) stress
	$(MAKE) fuzz FUZZ_SECONDS=10

## The DocC documentation (Sources/AFNetworking/AFNetworking.docc), warnings as errors.
docs: deps
	$(SWIFT) package generate-documentation --target AFNetworking --warnings-as-errors

## The concurrency suites under ThreadSanitizer: 2,000 operations with a third
## cancelled from other threads, pause/resume/cancel storms (also during
## redirects and challenges), the races, back-pressure and the fault cases;
## the session layer's 1,000-task resume/suspend/cancel storm and its suites;
## the lock every component uses, and its one-field accessors, from several threads;
## each request's driver (its one executor) against a fake engine.
STRESS_SUITES = StressTests|LockedStateTests|LockedStateFieldTests|RequestDriverTests|ResourceBudgetTests|PauseStressTests|RaceTests|OffNetworkThreadTests|TransportFaultTests|QueueBehaviourTests|LifecycleTests|RedirectTests|ResumeTests|ErrorMappingTests|CachingTests|AuthenticationCookieTests|SessionStormTests|URLSessionManagerTests|URLSessionManagerDelegateTests|SessionDownloadTests|SessionUploadTests|SessionSuspensionTests|AsyncAwaitTests|RetryPolicyTests|DeadlineTests|ImageDownloaderCoalescingTests|ImageDownloaderAsyncTests|AutoPurgingImageCacheTests|AsyncWithoutMainQueueTests|AsyncCancellationTests|PartialDownloadFileTests|AsyncDownloadTests|CookieOrderTests|CookieStorageTests|HTTPCachingRFC9111Tests|HTTPCachingRangeTests|StaleWhileRevalidateTests|ResponseBytesTests|BodyChunkLifecycleTests|RequestInterceptorDriverTests|RequestDriverPhaseTests|SessionTaskOutputTests|RequestInterceptorServerTests|QueueCancelAllTests|AuthenticationInterceptorTests|InterceptorLargeErrorBodyTests|RequestGraphTests|RequestGraphStateTests|OperationProgressTests|ResponseBytesLinesTests|TracingTests|NightlyJobExampleTests|ResumableBatchTests|RequestGraphOperationReuseTests|SessionEndPlacementTests|RequestOptionsTests|MainQueueNotifierTests
stress: deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan $(STRICT)
	TSAN_OPTIONS="halt_on_error=1" $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan --filter '$(STRESS_SUITES)'

## Release-build benchmarks against a C libcurl baseline, curl, AsyncHTTPClient and
## URLSession, on a local nginx: requests as users write them first, then the
## cache-bypass variant, then instructions per request under callgrind beside the
## C loop's. BENCH_RUNS (default 5) and BENCH_ONLY=s1,s2,instr,… select.
bench:
	@scripts/install-deps.sh bench
	$(SWIFT) build -c release --product afn-bench
	$(SWIFT) build -c release --package-path Benchmarks/Peers --scratch-path .build-peers
	scripts/bench.sh "$$($(SWIFT) build -c release --show-bin-path)/afn-bench" "$$(pwd)/.build-peers/release/afn-peers"

clean:
	rm -rf .build .build-tsan .build-peers .build-fuzz Benchmarks/C/baseline

## libFuzzer over the serializers and request builders, FUZZ_SECONDS per target (default 20).
FUZZ_SECONDS ?= 20
fuzz: deps
	$(SWIFT) build --package-path Fuzz --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library
	scripts/fuzz.sh .build-fuzz/debug/afn-fuzz $(FUZZ_SECONDS)
