# stepscope - top-level build.  `make help` lists the targets.
#
# Layout of outputs (all under build/, never committed):
#   build/bin/stepscope, build/bin/stepscope-cc
#   build/lib/libstepscope.so.$(VERSION) (SONAME libstepscope.so.0, with the
#     libstepscope.so.0 and libstepscope.so links), build/lib/libstepscope.a,
#   build/lib/pkgconfig/stepscope.pc
#   build/include/stepscope.h
#   build/obj/...   objects; build/tests/... test programs

PREFIX  ?= /usr/local
DESTDIR ?=
# LIBDIR may be a multiarch one: make install PREFIX=/usr LIBDIR=/usr/lib/x86_64-linux-gnu
LIBDIR  ?= $(PREFIX)/lib
VERSION := 0.1.0
SOMAJOR := 0
# LIBDIR as seen from PREFIX (absolute when it is not under PREFIX): where
# the installed stepscope and stepscope-cc look for the runtime
LIBDIR_REL = $(if $(filter $(PREFIX)/%,$(LIBDIR)),$(patsubst $(PREFIX)/%,%,$(LIBDIR)),$(LIBDIR))

CC      ?= cc
ifeq ($(CC),cc)
CC := gcc
endif

B       := build
OBJ     := $(B)/obj
ABS_B   := $(abspath $(B))

WARN    := -Wall -Wextra -Wno-unused-parameter -Wno-format-truncation
OPT     := -O2
ifeq ($(DEBUG),1)
OPT     := -O0
endif
SAN     :=
ifeq ($(ASAN),1)
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer
endif
ifeq ($(TSAN),1)
SAN     := -fsanitize=thread
endif

# symbolize/ by stage of the data flow (docs/architecture.md): read the raw
# traces, name the addresses, analyze, export; cmd/ holds one file per command
SYM_DIRS := symbolize symbolize/read symbolize/names symbolize/analyze symbolize/export symbolize/cmd
CFLAGS_COMMON := -std=gnu11 -g $(OPT) $(WARN) -D_GNU_SOURCE -Iruntime $(addprefix -I,$(SYM_DIRS)) -Iinstrument
# The runtime is never instrumented and exports only the hooks and stepscope_*.
RT_CFLAGS  := $(CFLAGS_COMMON) -fPIC -fvisibility=hidden -fno-instrument-functions \
              -fno-omit-frame-pointer -ftls-model=initial-exec
RT_LIBS    := -lyaml -lpthread -ldl
TOOL_CFLAGS := $(CFLAGS_COMMON) $(SAN)
TOOL_LIBS  := -ldw -lelf -lbfd -lcjson -lyaml -lpthread -ldl -lm

ifeq ($(V),1)
Q :=
else
Q := @
endif

RT_SRC    := $(wildcard runtime/*.c)
RT_OBJ    := $(patsubst runtime/%.c,$(OBJ)/runtime/%.o,$(RT_SRC))
# symbolize/ also uses the config parser and schedule of the runtime
SHARED_RT := runtime/config.c runtime/config-suggest.c runtime/config-yaml.c runtime/schedule.c runtime/flops-expr.c
TOOL_SRC  := $(filter-out symbolize/main.c,$(wildcard $(addsuffix /*.c,$(SYM_DIRS)))) $(wildcard $(SHARED_RT))
TOOL_OBJ  := $(patsubst %.c,$(OBJ)/tool/%.o,$(TOOL_SRC))
TOOL_LIB  := $(OBJ)/libss-tool.a
# advise's checks are found through weak references (advise-checks.c),
# which take no member out of an archive: their objects are linked as they are
ADV_OBJ   := $(filter $(OBJ)/tool/symbolize/analyze/advise%.o,$(TOOL_OBJ))

RT_SO   := $(B)/lib/libstepscope.so.$(VERSION)
# the hooks stepscope-cc links into an executable (runtime/exe/hooks-exe.c)
RT_EXE_HOOKS := $(B)/lib/libstepscope-hooks.a
TARGETS := $(RT_SO) $(B)/lib/libstepscope.so.$(SOMAJOR) $(B)/lib/libstepscope.so $(B)/lib/libstepscope.a \
           $(RT_EXE_HOOKS) $(B)/bin/stepscope \
           $(B)/bin/stepscope-cc $(B)/include/stepscope.h $(B)/lib/pkgconfig/stepscope.pc

# bench programs that use the project's code (see "demo, bench" below)
BENCH_TOOLS := $(B)/bench/b-durations

# Stamps: the Debian packages of a set (scripts/deps.sh) are all installed.
# Written only when deps.sh says so; editing its lists re-runs the check.
DEPS_OK      := $(B)/.deps-ok
DEPS_TEST_OK := $(B)/.deps-test-ok
DEPS_BENCH_OK := $(B)/.deps-bench-ok

.PHONY: all deps test bench demo install uninstall clean help examples
all: $(TARGETS)

# libstepscope-mpi when MPI is present (HAVE_MPI; docs/mpi.md)
include runtime-mpi/mpi.mk

help:
	@echo "make            build stepscope into build/"
	@echo "make test       build and run unit and end-to-end tests (ASAN=1, TSAN=1 for sanitizers)"
	@echo "make test-stress  make test with every core but one busy (docs/testing.md)"
	@echo "make demo       build, record the MLP example, symbolize it, say where the trace is"
	@echo "make bench      overhead and throughput benchmarks (ratios measured in one run)"
	@echo "make gpu-bundle the GPU proof kit, build/gpu-bundle.tar.gz (docs/cuda.md)"
	@echo "make install    install under \$$(DESTDIR)\$$(PREFIX) (PREFIX=$(PREFIX))"
	@echo "make uninstall  remove what install put there"
	@echo "options: DEBUG=1 (-O0), ASAN=1, TSAN=1, V=1 (show commands)"

deps: $(DEPS_OK)
$(DEPS_OK): scripts/deps.sh
	$(Q)mkdir -p $(B) && SS_DEPS_LOG=$(B)/deps.log sh scripts/deps.sh build
	$(Q)touch $@
$(DEPS_TEST_OK): scripts/deps.sh | $(DEPS_OK)
	$(Q)mkdir -p $(B) && SS_DEPS_LOG=$(B)/deps.log sh scripts/deps.sh test
	$(Q)touch $@
$(DEPS_BENCH_OK): scripts/deps.sh | $(DEPS_OK)
	$(Q)mkdir -p $(B) && SS_DEPS_LOG=$(B)/deps.log sh scripts/deps.sh bench
	$(Q)touch $@

$(OBJ)/runtime/%.o: runtime/%.c $(wildcard runtime/*.h) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(RT_CFLAGS) -c -o $@ $<

$(OBJ)/tool/%.o: %.c $(wildcard runtime/*.h $(addsuffix /*.h,$(SYM_DIRS))) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TOOL_CFLAGS) -c -o $@ $<

$(RT_SO): $(RT_OBJ) runtime/libstepscope.map
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(RT_OBJ) -Wl,-soname,libstepscope.so.$(SOMAJOR) \
		-Wl,--version-script=runtime/libstepscope.map $(RT_LIBS)

$(B)/lib/libstepscope.so.$(SOMAJOR): $(RT_SO)
	$(Q)ln -sf $(notdir $<) $@
$(B)/lib/libstepscope.so: $(B)/lib/libstepscope.so.$(SOMAJOR)
	$(Q)ln -sf $(notdir $<) $@

# `stepscope record` finds the runtime at <bindir>/../$(LIBDIR_REL); the
# stamp's name changes with LIBDIR, so cmd/record.o is rebuilt
LIBDIR_STAMP := $(B)/.libdir-$(subst /,_,$(LIBDIR_REL))
$(LIBDIR_STAMP):
	@mkdir -p $(dir $@) && rm -f $(B)/.libdir-* && touch $@
$(OBJ)/tool/symbolize/cmd/record.o: $(LIBDIR_STAMP)
$(OBJ)/tool/symbolize/cmd/record.o: TOOL_CFLAGS += -DSS_LIBDIR_REL='"$(LIBDIR_REL)"'

# exec.c (execve/posix_spawn wrappers), exit-wrap.c (_exit) and context.c (swapcontext) only
# make sense preloaded or shared, alloc-wrap.c is built again for it; dl.c is built without dlopen for the
# archive (runtime/dl.c: the static dlopen's link warning)
$(OBJ)/runtime-static/dl.o: runtime/dl.c $(wildcard runtime/*.h) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (static)")
	$(Q)$(CC) $(RT_CFLAGS) -DSS_DL_NONE -c -o $@ $<
# the malloc wrappers of a -static link: __wrap_malloc ... (stepscope-cc
# links with -Wl,--wrap=malloc,...; runtime/alloc-wrap.c)
$(OBJ)/runtime-static/alloc-wrap.o: runtime/alloc-wrap.c $(wildcard runtime/*.h) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (static)")
	$(Q)$(CC) $(RT_CFLAGS) -DSS_ALLOC_STATIC -c -o $@ $<
$(B)/lib/libstepscope.a: $(RT_OBJ) $(OBJ)/runtime-static/dl.o $(OBJ)/runtime-static/alloc-wrap.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $(filter-out $(OBJ)/runtime/exec.o $(OBJ)/runtime/exit-wrap.o $(OBJ)/runtime/context.o $(OBJ)/runtime/dl.o $(OBJ)/runtime/alloc-wrap.o,$(RT_OBJ)) \
		$(OBJ)/runtime-static/dl.o $(OBJ)/runtime-static/alloc-wrap.o

$(OBJ)/runtime-exe/hooks-exe.o: runtime/exe/hooks-exe.c $(wildcard runtime/*.h) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(RT_CFLAGS) -c -o $@ $<

$(RT_EXE_HOOKS): $(OBJ)/runtime-exe/hooks-exe.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $<

$(TOOL_LIB): $(TOOL_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $(TOOL_OBJ)

$(B)/bin/stepscope: $(OBJ)/tool/symbolize/main.o $(ADV_OBJ) $(TOOL_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(SAN) -o $@ $^ $(TOOL_LIBS)

$(B)/bin/stepscope-cc: instrument/stepscope-cc
	@mkdir -p $(dir $@)
	$(Q)install -m 755 $< $@

$(B)/include/stepscope.h: instrument/stepscope.h
	@mkdir -p $(dir $@)
	$(Q)install -m 644 $< $@

# pc_file PREFIX,LIBDIR: stepscope.pc for them; an rpath only where the
# dynamic loader would not look by itself (the list of stepscope-cc's is_sysdir)
SYS_LIBDIRS := /lib /usr/lib /lib64 /usr/lib64 /lib32 /usr/lib32 /libx32 /usr/libx32 \
               /lib/%-linux-gnu /usr/lib/%-linux-gnu /lib/%-linux-gnux32 /usr/lib/%-linux-gnux32 \
               /lib/%-linux-gnueabihf /usr/lib/%-linux-gnueabihf
pc_file = sed -e 's|@PREFIX@|$(1)|' -e 's|@LIBDIR@|$(2)|' -e 's|@VERSION@|$(VERSION)|' \
	-e 's|@RPATH@|$(if $(filter $(SYS_LIBDIRS),$(patsubst %/,%,$(2))),,-Wl$(,)-rpath$(,)$${libdir} )|' \
	instrument/stepscope.pc.in
, := ,

$(B)/lib/pkgconfig/stepscope.pc: instrument/stepscope.pc.in Makefile
	@mkdir -p $(dir $@)
	$(Q)$(call pc_file,$(ABS_B),$(ABS_B)/lib) > $@

# ---------------------------------------------------------------- tests
UNIT_SRC  := $(wildcard tests/unit/test-*.c)
UNIT_BIN  := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
E2E_SRC   := $(wildcard tests/e2e/test-*.c)
E2E_BIN   := $(patsubst tests/e2e/%.c,$(B)/tests/%,$(E2E_SRC))
TEST_HELPERS := $(wildcard tests/lib/*.c)
TEST_CFLAGS := $(TOOL_CFLAGS) -Itests/lib -DSS_SOURCE_DIR='"$(abspath .)"' -DSS_BUILD_DIR='"$(ABS_B)"'

$(B)/tests/%: tests/unit/%.c $(TEST_HELPERS) $(TOOL_LIB) $(RT_OBJ) $(wildcard tests/lib/*.h) | $(DEPS_TEST_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_HELPERS) $(ADV_OBJ) $(TOOL_LIB) -lcmocka $(TOOL_LIBS) -lz

$(B)/tests/%: tests/e2e/%.c $(TEST_HELPERS) $(TOOL_LIB) $(wildcard tests/lib/*.h) | $(DEPS_TEST_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_HELPERS) $(ADV_OBJ) $(TOOL_LIB) -lcmocka $(TOOL_LIBS) -lz

# test-export's speedscope check runs node on speedscope and ajv, the
# versions tests/lib/npm pins: npm ci installs them into build/npm once
# (--prefer-offline: from npm's cache when it has them)
NPM_OK := $(B)/npm/.npm-ok
$(NPM_OK): tests/lib/npm/package.json tests/lib/npm/package-lock.json | $(DEPS_TEST_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NPM     speedscope ajv -> $(dir $@)")
	$(Q)cp tests/lib/npm/package.json tests/lib/npm/package-lock.json $(dir $@)
	$(Q)npm ci --prefix $(dir $@) --prefer-offline --no-audit --no-fund \
		>$(dir $@)npm.log 2>&1 || { echo "stepscope: npm ci could not install" \
		"speedscope and ajv into $(dir $@) (full output in $(dir $@)npm.log)" >&2; exit 1; }
	$(Q)touch $@
$(B)/tests/test-export: | $(NPM_OK)

test: $(DEPS_TEST_OK) $(NPM_OK) all $(UNIT_BIN) $(E2E_BIN) $(BENCH_TOOLS)
	$(Q)$(MAKE) --no-print-directory mpi-lib
	$(Q)sh tests/run-tests.sh $(UNIT_BIN) $(E2E_BIN)

# The suite again with a busy loop on every core but one (tests/stress.sh),
# as on a shared CI machine: a test whose verdict follows a measured time
# fails here first (docs/testing.md).  The build is done before the loops.
.PHONY: test-stress
test-stress: $(DEPS_TEST_OK) all $(UNIT_BIN) $(E2E_BIN)
	$(Q)sh tests/stress.sh $(MAKE) --no-print-directory test

# ---------------------------------------------------------------- demo, bench
demo: all
	$(Q)sh scripts/demo.sh

# The benchmark programs that use the project's code are linked here from
# the tool's own objects, never compiled from a source list in a script: a
# file split cannot leave them behind.  `make test` builds them, and
# test-bench runs the whole of `make bench` once at its smallest sizes.
$(B)/bench/%: tests/bench/%.c $(TOOL_LIB) $(wildcard runtime/*.h $(addsuffix /*.h,$(SYM_DIRS))) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TOOL_CFLAGS) -o $@ $< $(TOOL_LIB) $(TOOL_LIBS)
.PHONY: bench-tools
bench-tools: $(BENCH_TOOLS)

bench: $(DEPS_BENCH_OK) all $(BENCH_TOOLS)
	$(Q)sh tests/bench/run-bench.sh

examples: all
	$(Q)$(MAKE) -C examples/mlp PROFILE=1
	$(Q)$(MAKE) -C examples/mlp-mpi PROFILE=1

# ---------------------------------------------------------------- GPU proof kit
# build/gpu-bundle.tar.gz: the tools, the runtime, the libraries they load
# and tests/gpu/device-check.sh, to run on a CUDA machine (docs/cuda.md)
GPU_BUNDLE     := $(B)/gpu-bundle.tar.gz
GPU_BUNDLE_SRC := scripts/gpu-bundle.sh $(wildcard tests/gpu/*) tests/e2e/lib-cupti-fake.c \
                  tests/e2e/s-cuda-mem.c tests/e2e/fixture.h tests/e2e/lib-nvml-fake.c $(wildcard examples/cuda-mlp/*.cu examples/cuda-mlp/*.h examples/common/*) \
                  docs/cuda.md
.PHONY: gpu-bundle
gpu-bundle: $(GPU_BUNDLE)
$(GPU_BUNDLE): $(TARGETS) $(GPU_BUNDLE_SRC)
	$(Q)CC=$(CC) sh scripts/gpu-bundle.sh $(B) $@

# ---------------------------------------------------------------- install
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR  ?= $(DATADIR)/man
I_BIN := $(DESTDIR)$(BINDIR)
I_LIB := $(DESTDIR)$(LIBDIR)
I_INC := $(DESTDIR)$(PREFIX)/include
I_DOC := $(DESTDIR)$(DATADIR)/doc/stepscope
I_CFG := $(DESTDIR)$(DATADIR)/stepscope/configs
I_MAN := $(DESTDIR)$(MANDIR)/man1
MAN1  := $(wildcard docs/man/*.1)

install: all
	install -d $(I_BIN) $(I_LIB)/pkgconfig $(I_INC) $(I_DOC) $(I_CFG) $(I_MAN)
	install -m 755 $(B)/bin/stepscope $(I_BIN)/
	sed -e 's|^ss_libdir_rel=lib$$|ss_libdir_rel=$(LIBDIR_REL)|' instrument/stepscope-cc \
		> $(I_BIN)/stepscope-cc && chmod 755 $(I_BIN)/stepscope-cc
	install -m 755 $(RT_SO) $(I_LIB)/
	ln -sf libstepscope.so.$(VERSION) $(I_LIB)/libstepscope.so.$(SOMAJOR)
	ln -sf libstepscope.so.$(SOMAJOR) $(I_LIB)/libstepscope.so
	install -m 644 $(B)/lib/libstepscope.a $(RT_EXE_HOOKS) $(I_LIB)/
	$(if $(HAVE_MPI),install -m 755 $(B)/lib/libstepscope-mpi.so $(I_LIB)/)
	install -m 644 instrument/stepscope.h $(I_INC)/
	$(call pc_file,$(PREFIX),$(LIBDIR)) > $(I_LIB)/pkgconfig/stepscope.pc
	install -m 644 README.md LICENSE $(wildcard docs/*.md) $(I_DOC)/
	install -m 644 $(wildcard configs/*.yaml) $(I_CFG)/
	install -m 644 $(MAN1) $(I_MAN)/

uninstall:
	rm -f $(I_BIN)/stepscope $(I_BIN)/stepscope-cc $(I_LIB)/libstepscope.so \
	      $(I_LIB)/libstepscope.so.$(SOMAJOR) $(I_LIB)/libstepscope.so.$(VERSION) \
	      $(I_LIB)/libstepscope.a $(I_LIB)/libstepscope-hooks.a $(I_LIB)/libstepscope-mpi.so $(I_INC)/stepscope.h \
	      $(I_LIB)/pkgconfig/stepscope.pc $(addprefix $(I_MAN)/,$(notdir $(MAN1)))
	rm -rf $(I_DOC) $(DESTDIR)$(DATADIR)/stepscope

clean:
	rm -rf $(B)
	-$(MAKE) -C examples/mlp clean >/dev/null 2>&1
	-$(MAKE) -C examples/cuda-mlp clean >/dev/null 2>&1
	-$(MAKE) -C examples/mlp-mpi clean >/dev/null 2>&1

# ---------------------------------------------------------------- fuzz
# libFuzzer targets (clang, ASan and UBSan), FUZZ_SECS each from the seeds
# in tests/fuzz/corpus*, new inputs in build/fuzz/: the raw reader and the
# slicer (fuzz-reader), the flops: expressions (fuzz-flops), the records
# of a META chunk (fuzz-meta).
FUZZ_SECS ?= 60
FUZZ_SRC  := symbolize/read/reader.c symbolize/read/reader-group.c symbolize/read/reader-iter.c \
             symbolize/read/compact.c symbolize/read/reader-cache.c \
             symbolize/read/slices.c symbolize/read/slices-walk.c symbolize/read/args-read.c \
             symbolize/names/sym.c symbolize/names/sym-space.c \
             symbolize/names/sym-dw.c symbolize/names/sym-bfd.c \
             symbolize/names/args-dw.c symbolize/names/args-eval.c symbolize/names/args-prologue.c \
             symbolize/names/args-views.c \
             runtime/flops-expr.c
FUZZ_CC   := clang -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
             -Iruntime $(addprefix -I,$(SYM_DIRS)) -Itests/lib
FUZZ_RUN   = -max_total_time=$(FUZZ_SECS) -timeout=10 -artifact_prefix=$(B)/fuzz/
.PHONY: fuzz
$(B)/fuzz/fuzz-reader: tests/fuzz/fuzz-reader.c $(FUZZ_SRC) $(wildcard runtime/*.h $(addsuffix /*.h,$(SYM_DIRS)))
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(FUZZ_CC) -o $@ $< $(FUZZ_SRC) -ldw -lelf -lbfd
$(B)/fuzz/fuzz-meta: tests/fuzz/fuzz-meta.c tests/lib/trace-writer.c $(FUZZ_SRC) $(wildcard runtime/*.h $(addsuffix /*.h,$(SYM_DIRS)))
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(FUZZ_CC) -o $@ $< tests/lib/trace-writer.c $(FUZZ_SRC) -ldw -lelf -lbfd
$(B)/fuzz/fuzz-flops: tests/fuzz/fuzz-flops.c runtime/flops-expr.c runtime/flops-expr.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(FUZZ_CC) -o $@ $< runtime/flops-expr.c
fuzz: $(B)/fuzz/fuzz-reader $(B)/fuzz/fuzz-flops $(B)/fuzz/fuzz-meta
	@mkdir -p $(B)/fuzz/corpus $(B)/fuzz/corpus-flops $(B)/fuzz/corpus-meta
	$(Q)$(B)/fuzz/fuzz-reader $(FUZZ_RUN) $(B)/fuzz/corpus tests/fuzz/corpus
	$(Q)$(B)/fuzz/fuzz-flops $(FUZZ_RUN) -max_len=4096 $(B)/fuzz/corpus-flops tests/fuzz/corpus-flops
	$(Q)$(B)/fuzz/fuzz-meta $(FUZZ_RUN) -max_len=16384 $(B)/fuzz/corpus-meta tests/fuzz/corpus-meta
