# Gavel: one non-recursive Makefile. Every component builds a static library
# libgavel_<comp>.a from its folder (all .c except main.c); each binary links
# the libraries it may use (BIN_LIBS_*); tests link every library, never a
# main. BUILD selects the output folder so that an ASan build and private
# builds live side by side.

BUILD    ?= build
V        ?= 0
Q        := $(if $(filter 1,$(V)),,@)

CC       ?= cc
PKGS     := libevent libevent_pthreads libpq hiredis libseccomp jansson libsodium \
            libarchive yaml-0.1 libcurl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)
# The flags above are read once, when make parses this file: on a new
# machine that is before `make deps` has installed the -dev packages. So
# every goal that installs first (run, test, asan, bench) builds in a
# sub-make started after deps, and a build that would compile with empty
# flags stops with what to do instead of a missing-header error.
PKGS_FOUND := $(if $(PKG_LIBS),yes)
# wslay (the frontend's WebSocket framing): Debian's libwslay-dev ships no
# pkg-config file (only CMake's), so it is named directly.
PKG_LIBS += -lwslay

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 -Wpointer-arith -Wundef -Werror
HARDEN   := -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE
OPT      ?= -O2 -g
SAN      ?=
CFLAGS_ALL := -std=gnu17 $(OPT) $(WARN) $(HARDEN) $(SAN) -I. -D_GNU_SOURCE $(PKG_CFLAGS) $(CFLAGS)
LDFLAGS_ALL := -pie -Wl,-z,relro,-z,now $(SAN) $(LDFLAGS)

# Link order: dependents before dependencies. The executor is four
# libraries, one per folder (executor/README.md): executor/sandbox builds
# libgavel_executor_sandbox.a, and so on.
COMPONENTS := frontend scheduler executor/daemon executor/kernels executor/problems executor/judge executor/sandbox \
              tenants languages common
comp_srcs   = $(filter-out $(1)/main.c,$(wildcard $(1)/*.c))
lib_name    = $(subst /,_,$(1))
LIB_COMPONENTS := $(foreach c,$(COMPONENTS),$(if $(call comp_srcs,$(c)),$(c)))
LIBS := $(foreach c,$(LIB_COMPONENTS),$(BUILD)/libgavel_$(call lib_name,$(c)).a)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

define lib_rule
$(BUILD)/libgavel_$(call lib_name,$(1)).a: $(call obj,$(call comp_srcs,$(1)))
	@mkdir -p $$(@D)
	@$(if $(filter 1,$(V)),,echo "  AR      $$@")
	$(Q)rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach c,$(LIB_COMPONENTS),$(eval $(call lib_rule,$(c))))

# Daemons and the CLI: <folder>/main.c -> binary.
BIN_MAINS := frontend:gavel-frontend scheduler:gavel-scheduler executor/daemon:gavel-executor cli:gavel
# The libraries each binary may use, dependents first: a call into a
# component that is not on its list fails the link. The frontend and the
# scheduler hold no executor code; what they share with the executor lives
# in common/. Tests link every library.
BIN_LIBS_gavel-frontend  := frontend tenants languages common
BIN_LIBS_gavel-scheduler := scheduler tenants common
BIN_LIBS_gavel-executor  := executor/daemon executor/kernels executor/problems executor/judge executor/sandbox \
                            tenants languages common
BIN_LIBS_gavel           := executor/judge executor/sandbox tenants languages common
bin_libs = $(foreach c,$(filter $(LIB_COMPONENTS),$(BIN_LIBS_$(1))),$(BUILD)/libgavel_$(call lib_name,$(c)).a)
BINS :=
define bin_rule
ifneq ($(wildcard $(1)/main.c),)
BINS += $(BUILD)/$(2)
$(BUILD)/$(2): $(call obj,$(1)/main.c $(filter-out $(1)/main.c,$(if $(filter cli,$(1)),$(wildcard cli/*.c)))) \
               $(call bin_libs,$(2))
	@$(if $(filter 1,$(V)),,echo "  LD      $$@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $$@ $$^ $(PKG_LIBS) -lm -lpthread
endif
endef
$(foreach m,$(BIN_MAINS),$(eval $(call bin_rule,$(word 1,$(subst :, ,$(m))),$(word 2,$(subst :, ,$(m))))))

# gavel-init runs as PID 1 inside the sandbox: static, no sanitizers (ASan
# cannot link statically), only libseccomp.
INIT_OWN_SRCS := $(wildcard executor/init/*.c)
# gavel-init shares the protocol grammar, the error type and the I/O
# helpers with the host.
INIT_SRCS := $(INIT_OWN_SRCS) $(if $(INIT_OWN_SRCS),executor/sandbox/record.c common/err.c common/io.c)
# init's testable parts (no main, no process control), linked into the
# tests/unit/test_init_* binaries.
INIT_TESTABLE_SRCS := $(filter-out executor/init/main.c executor/init/run.c,$(INIT_OWN_SRCS))
ifneq ($(INIT_OWN_SRCS),)
BINS += $(BUILD)/gavel-init
INIT_CFLAGS := -std=gnu17 -O2 -g $(WARN) -D_FORTIFY_SOURCE=2 -fstack-protector-strong -I. -D_GNU_SOURCE
$(BUILD)/init-obj/%.o: %.c | pkgs-found
	@mkdir -p $(@D)
	@$(if $(filter 1,$(V)),,echo "  CC      $@")
	$(Q)$(CC) $(INIT_CFLAGS) -MMD -MP -c -o $@ $<
$(BUILD)/gavel-init: $(patsubst %.c,$(BUILD)/init-obj/%.o,$(INIT_SRCS))
	@$(if $(filter 1,$(V)),,echo "  LD      $@")
	$(Q)$(CC) -static -o $@ $^ -l:libseccomp.a
endif

# gavel-unpack runs inside the one-shot sandbox that unpacks an uploaded
# problem package (executor/problems/problem_import.c): no sanitizers (it
# runs under the sandbox's rlimits), linked against the system libarchive,
# which the sandbox sees through its read-only /usr. It shares the package
# stream's grammar and the error type with the host.
UNPACK_OWN_SRCS := $(wildcard executor/unpack/*.c)
UNPACK_SRCS := $(UNPACK_OWN_SRCS) $(if $(UNPACK_OWN_SRCS),executor/problems/import_stream.c common/err.c common/io.c)
ifneq ($(UNPACK_OWN_SRCS),)
BINS += $(BUILD)/gavel-unpack
UNPACK_CFLAGS := -std=gnu17 -O2 -g $(WARN) -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE -I. -D_GNU_SOURCE \
                 $(shell pkg-config --cflags libarchive 2>/dev/null)
$(BUILD)/unpack-obj/%.o: %.c | pkgs-found
	@mkdir -p $(@D)
	@$(if $(filter 1,$(V)),,echo "  CC      $@")
	$(Q)$(CC) $(UNPACK_CFLAGS) -MMD -MP -c -o $@ $<
$(BUILD)/gavel-unpack: $(patsubst %.c,$(BUILD)/unpack-obj/%.o,$(UNPACK_SRCS))
	@$(if $(filter 1,$(V)),,echo "  LD      $@")
	$(Q)$(CC) -pie -Wl,-z,relro,-z,now -o $@ $^ $(shell pkg-config --libs libarchive 2>/dev/null)
endif

# gavel-suite runs an instructor test suite inside a submission's sandbox
# (executor/suite/README.md): no sanitizers, libc only. It shares the
# summary's grammar and the record lexer with the host.
SUITE_OWN_SRCS := $(wildcard executor/suite/*.c)
SUITE_SRCS := $(SUITE_OWN_SRCS) $(if $(SUITE_OWN_SRCS),executor/judge/suite_framework.c executor/judge/suite_summary.c executor/sandbox/record.c common/err.c common/io.c)
ifneq ($(SUITE_OWN_SRCS),)
BINS += $(BUILD)/gavel-suite
$(BUILD)/suite-obj/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(filter 1,$(V)),,echo "  CC      $@")
	$(Q)$(CC) $(UNPACK_CFLAGS) -MMD -MP -c -o $@ $<
$(BUILD)/gavel-suite: $(patsubst %.c,$(BUILD)/suite-obj/%.o,$(SUITE_SRCS))
	@$(if $(filter 1,$(V)),,echo "  LD      $@")
	$(Q)$(CC) -pie -Wl,-z,relro,-z,now -o $@ $^
# The c framework's harness, placed beside each group's test file.
BINS += $(BUILD)/gavel_check.h
$(BUILD)/gavel_check.h: executor/suite/gavel_check.h
	@mkdir -p $(@D)
	$(Q)cp $< $@
endif

# The notebook kernels' bridge runs inside each kernel's sandbox
# (executor/kernels/README.md); the executor finds it beside gavel-init.
ifneq ($(wildcard executor/kernels/bridge.py),)
BINS += $(BUILD)/gavel-kernel-bridge.py
$(BUILD)/gavel-kernel-bridge.py: executor/kernels/bridge.py
	@mkdir -p $(@D)
	$(Q)cp $< $@
endif

# Tests: each tests/unit/test_*.c and tests/integration/test_*.c is one binary.
TEST_SRCS := $(wildcard tests/unit/test_*.c tests/integration/test_*.c)
TEST_BINS := $(patsubst %.c,$(BUILD)/%,$(TEST_SRCS))
# Helper programs the tests drive (probes compiled on the host, fuzz drivers).
TEST_SUPPORT_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/support/*.c))
$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_SUPPORT_OBJS) $(LIBS)
	@$(if $(filter 1,$(V)),,echo "  LD      $@")
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) $(CMOCKA_LIBS) -lm -lpthread

# A static pattern rule: a plain pattern rule loses to the one above when
# an object of a newly added init file is not built yet (GNU make 4.3).
$(filter $(BUILD)/tests/unit/test_init_%,$(TEST_BINS)): $(BUILD)/tests/unit/test_init_%: $(BUILD)/obj/tests/unit/test_init_%.o $(call obj,$(INIT_TESTABLE_SRCS)) $(TEST_SUPPORT_OBJS) $(LIBS)
	@$(if $(filter 1,$(V)),,echo "  LD      $@")
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) $(CMOCKA_LIBS) -lm -lpthread

# gavel-unpack's checks (no main), for tests/unit/test_import_unpack.c.
$(BUILD)/tests/unit/test_import_unpack: $(BUILD)/obj/tests/unit/test_import_unpack.o $(call obj,$(filter-out executor/unpack/main.c,$(UNPACK_OWN_SRCS))) $(TEST_SUPPORT_OBJS) $(LIBS)
	@$(if $(filter 1,$(V)),,echo "  LD      $@")
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) $(CMOCKA_LIBS) -lm -lpthread

# gavel-suite's JUnit XML scan (no library), for tests/unit/test_suite_xml.c.
$(BUILD)/tests/unit/test_suite_xml: $(BUILD)/obj/tests/unit/test_suite_xml.o $(call obj,executor/suite/junit_xml.c) $(TEST_SUPPORT_OBJS) $(LIBS)
	@$(if $(filter 1,$(V)),,echo "  LD      $@")
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) $(CMOCKA_LIBS) -lm -lpthread

# The CLI's local-stack settings (cli/ has no library), for
# tests/unit/test_cli_local_stack.c.
$(BUILD)/tests/unit/test_cli_local_stack: $(BUILD)/obj/tests/unit/test_cli_local_stack.o $(call obj,cli/local_stack.c) $(TEST_SUPPORT_OBJS) $(LIBS)
	@$(if $(filter 1,$(V)),,echo "  LD      $@")
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) $(CMOCKA_LIBS) -lm -lpthread

# The OpenAPI document is embedded by frontend/openapi.c (.incbin).
$(BUILD)/obj/frontend/openapi.o: frontend/openapi.json
# So is the playground page, by frontend/playground_page.c.
$(BUILD)/obj/frontend/playground_page.o: frontend/playground/index.html frontend/playground/app.js \
	frontend/playground/style.css

$(BUILD)/obj/%.o: %.c | pkgs-found
	@mkdir -p $(@D)
	@$(if $(filter 1,$(V)),,echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

.PHONY: all deps test asan run stop clean tests-build bench bench-build pkgs-found fuzz fuzz-build analyze
.DEFAULT_GOAL := all
# Keep test objects: they are intermediates of the test link rules.
.SECONDARY:
all: $(BINS) $(LIBS)
tests-build: all $(TEST_BINS)

deps:
	$(Q)deploy/deps.sh

pkgs-found:
ifneq ($(PKGS_FOUND),yes)
	@echo "make: pkg-config does not know the libraries Gavel builds against ($(PKGS))." >&2
	@echo "make: install them first with 'make deps' (as root), or use 'make run' / 'make test', which do." >&2
	@exit 1
endif

test: deps
	$(Q)$(MAKE) --no-print-directory tests-build
	$(Q)BUILD=$(BUILD) tests/run.sh

asan: deps
	$(Q)$(MAKE) --no-print-directory BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
	    SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined" tests-build
	$(Q)BUILD=build-asan ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 tests/run.sh

# clang's static analyzer (clang-tidy's clang-analyzer-core.* and
# clang-analyzer-unix.* checks) over every C source outside tests/, two
# files at a time; any warning fails (tests/static/analyze.sh prints one
# TAP line a file; tests/run.sh runs this target too). The flags are the
# build's language and include flags, without optimisation or hardening.
ANALYZE_CFLAGS := -std=gnu17 -I. -D_GNU_SOURCE $(PKG_CFLAGS)
analyze: pkgs-found
	$(Q)ANALYZE_CFLAGS="$(ANALYZE_CFLAGS)" tests/static/analyze.sh

# Benchmarks print their figures as ratios against baselines measured in
# the same run; they are not part of `make test` (timing is noisy).
BENCH_BINS := $(patsubst %.c,$(BUILD)/%,$(wildcard tests/bench/bench_*.c))
bench: deps
	$(Q)$(MAKE) --no-print-directory bench-build
	$(Q)for b in $(BENCH_BINS); do GAVEL_INIT=$(BUILD)/gavel-init $$b || exit 1; done

bench-build: all $(BENCH_BINS)

# Fuzz targets: each tests/fuzz/fuzz_*.c is one libFuzzer binary, built by
# clang with ASan and UBSan into build-fuzz/ over its own copy of the
# libraries, instrumented for coverage; tests/fuzz/run.sh runs each for a
# bounded time. HARDEN without _FORTIFY_SOURCE: its __memcpy_chk and
# friends would go around ASan's checks.
FUZZ_BUILD ?= build-fuzz
FUZZ_BINS = $(patsubst %.c,$(BUILD)/%,$(wildcard tests/fuzz/fuzz_*.c))
# The targets' shared checks (tests/fuzz/harness.c), and sandbox-side
# parsers with no library of their own: gavel-init's job parser,
# gavel-unpack's checks, gavel-suite's JUnit XML scan.
FUZZ_EXTRA_SRCS := $(wildcard tests/fuzz/harness.c executor/init/job.c) \
                   $(filter-out executor/unpack/main.c,$(UNPACK_OWN_SRCS)) executor/suite/junit_xml.c
$(BUILD)/tests/fuzz/fuzz_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(call obj,$(FUZZ_EXTRA_SRCS)) $(LIBS)
	@$(if $(filter 1,$(V)),,echo "  LD      $@")
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_ALL) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS) -lm -lpthread

# The warnings are GCC's set, which clang accepts.
fuzz: deps
	$(Q)$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang OPT="-O1 -g -fno-omit-frame-pointer" \
	    HARDEN=-fPIE SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
	    fuzz-build

fuzz-build: $(FUZZ_BINS)

run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)deploy/local/gavel-local start

stop:
	$(Q)deploy/local/gavel-local stop

clean:
	rm -rf build build-asan

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
