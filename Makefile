# ktune: `make` builds out/bin/kt and out/lib/libkt.a; `make test` runs every CPU test;
# `make run` runs the main job on the embedded default recipe; `make deps` installs Debian packages.
# Knobs: CC, JOBS (compile parallelism for kt gen); for `make run`: KT_MODEL (default
# models/llama-3.1-8b), KT_TP (1), KT_TARGET (auto: the GPU's target, gfx1201 without one).

CC       ?= cc
CLANG    ?= clang-19
CFLAGS   ?= -O2 -g
KT_CFLAGS = -std=c11 -D_GNU_SOURCE -fPIC -Wall -Wextra -Werror=implicit-function-declaration \
            -Wno-unused-parameter -I. -Ibuild -Igen -Idb -Ituner -Iruntime -Itemplates \
            $(shell pkg-config --cflags luajit 2>/dev/null || echo -I/usr/include/luajit-2.1)
LIBS      = $(shell pkg-config --libs luajit 2>/dev/null || echo -lluajit-5.1) -lsqlite3 -lcjson -lm -ldl -lpthread

LIB_SRCS  = $(wildcard gen/*.c build/*.c db/*.c tuner/*.c runtime/*.c)
SQL_OBJS  = out/obj/db/schema_sql.o out/obj/db/migrate_002_tuner_sql.o out/obj/db/migrate_003_ops_sql.o
LIB_OBJS  = $(patsubst %.c,out/obj/%.o,$(LIB_SRCS)) $(SQL_OBJS)
# libktrt: the runtime alone (no LuaJIT, no cJSON, no compiler): what a serving image links.
KTRT_SRCS = $(wildcard runtime/*.c) build/target.c build/sha256.c
KTRT_OBJS = $(patsubst %.c,out/obj/%.o,$(KTRT_SRCS))
KTRT_LIBS = -lsqlite3 -lm -ldl -lpthread
CLI_SRCS  = $(wildcard cli/*.c)
CLI_OBJS  = $(patsubst %.c,out/obj/%.o,$(CLI_SRCS))
TEST_SRCS = $(wildcard tests/unit/test_*.c)
TEST_BINS = $(patsubst tests/unit/%.c,out/tests/%,$(TEST_SRCS))
TESTXX_SRCS = $(wildcard tests/unit/test_*.cpp)
TEST_BINS += $(patsubst tests/unit/%.cpp,out/tests/%,$(TESTXX_SRCS))
FUZZ_SRCS = $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS = $(patsubst tests/fuzz/%.c,out/fuzz/%,$(FUZZ_SRCS))
DEPS_OK   = out/.deps-ok

.PHONY: all deps test test-unit test-fuzz test-compile test-compile-all run clean device-prep
all: out/bin/kt out/lib/libkt.a out/lib/libkt.so out/lib/libktrt.a out/lib/libktrt.so out/bin/bench_gemm

deps: $(DEPS_OK)
$(DEPS_OK): build/deps.sh
	@sh build/deps.sh
	@mkdir -p out && touch $@

out/obj/%.o: %.c Makefile | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) $(KT_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# The schema and its migrations are embedded so `kt` needs no file beside it at run time.
out/obj/db/%_sql.c: db/%.sql build/embed.sh
	@mkdir -p $(dir $@)
	sh build/embed.sh kt_$*_sql $< > $@
out/obj/db/%_sql.o: out/obj/db/%_sql.c
	$(CC) $(KT_CFLAGS) $(CFLAGS) -c $< -o $@

out/lib/libkt.a: $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# libkt.so is what tune.lua loads through the LuaJIT FFI.
out/lib/libkt.so: $(LIB_OBJS)
	$(CC) -shared -o $@ $(LIB_OBJS) $(LIBS)

out/lib/libktrt.a: $(KTRT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
out/lib/libktrt.so: $(KTRT_OBJS) runtime/libktrt.map
	$(CC) -shared -Wl,--version-script=runtime/libktrt.map -o $@ $(KTRT_OBJS) $(KTRT_LIBS)

# bench/gemm.c: the runtime-dispatched GEMM against cuBLAS on the card (tests/device/run_all.sh).
BENCH_SRCS = bench/gemm.c bench/shapes.c bench/ceiling.c bench/cublas_dl.c
out/bin/bench_gemm: $(BENCH_SRCS) $(wildcard bench/*.h) tests/device/gemm_ref.h out/lib/libkt.a
	@mkdir -p $(dir $@)
	$(CC) $(KT_CFLAGS) $(CFLAGS) -Ibench -o $@ $(BENCH_SRCS) out/lib/libkt.a $(LIBS)

# bench/law_offline.c: the GEMM law (runtime/law_gemm.c) measured offline against a sweep's dump
# and a kernel DB (bench/law_offline.c's header says how).
out/bin/law_offline: bench/law_offline.c out/lib/libkt.a
	@mkdir -p $(dir $@)
	$(CC) $(KT_CFLAGS) $(CFLAGS) -o $@ bench/law_offline.c out/lib/libkt.a $(LIBS)

# bench/law_replay.c: any op's law (op->law_pick, as libktrt runs it) replayed on a sweep's database.
out/bin/law_replay: bench/law_replay.c out/lib/libkt.a
	@mkdir -p $(dir $@)
	$(CC) $(KT_CFLAGS) $(CFLAGS) -o $@ bench/law_replay.c out/lib/libkt.a $(LIBS)

# bench/read.cu: bench_gemm's read and copy ceiling kernels, one cubin for sm_90a. Optional: `make
# bench-read` builds it where nvcc is found (NVCC, PATH, /usr/local/cuda/bin) and says so where it
# is not; bench_gemm then reports both ceilings as unavailable.
NVCC_FOUND = $(or $(NVCC),$(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
.PHONY: bench-read
bench-read:
	@if [ -n "$(NVCC_FOUND)" ]; then $(MAKE) --no-print-directory out/bench/read.cubin; \
	 else echo "bench-read: no nvcc (NVCC, PATH, /usr/local/cuda/bin): out/bench/read.cubin not built"; fi
out/bench/read.cubin: bench/read.cu bench/read.h
	@mkdir -p $(dir $@)
	$(NVCC_FOUND) -cubin -gencode arch=compute_90a,code=sm_90a -O3 -o $@ bench/read.cu

out/bin/kt: $(CLI_OBJS) out/lib/libkt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(CLI_OBJS) out/lib/libkt.a $(LIBS)

out/tests/%: tests/unit/%.c out/lib/libkt.a tests/unit/kt_test.h tests/unit/kt_elf_fixture.h
	@mkdir -p $(dir $@)
	$(CC) $(KT_CFLAGS) $(CFLAGS) -MMD -MP -Itests/unit -o $@ $< out/lib/libkt.a $(LIBS)

# test_ceiling drives bench/ceiling.c (not part of libkt) over a scripted backend.
out/tests/test_ceiling: tests/unit/test_ceiling.c bench/ceiling.c bench/ceiling.h bench/read.h out/lib/libkt.a tests/unit/kt_test.h
	@mkdir -p $(dir $@)
	$(CC) $(KT_CFLAGS) $(CFLAGS) -MMD -MP -Itests/unit -Ibench -o $@ $< bench/ceiling.c out/lib/libkt.a $(LIBS)

# Fuzz targets: libFuzzer + ASan/UBSan from clang-19, over the library sources they name.
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
out/fuzz/%: tests/fuzz/%.c $(LIB_SRCS) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CLANG) $(KT_CFLAGS) $(FUZZ_FLAGS) -o $@ $< $(shell sed -n 's,^/\* fuzz-sources: \(.*\) \*/$$,\1,p' $<) $(LIBS)

# A unit test under ASan/UBSan (clang-19) with the library built in, e.g. `make out/asan/test_recipe`
# (the generator's name and params building at the recipe limits). Not part of `make test`.
out/asan/%: tests/unit/%.c $(LIB_SRCS) $(SQL_OBJS:.o=.c) tests/unit/kt_test.h | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CLANG) $(KT_CFLAGS) -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -Itests/unit \
	    -o $@ $< $(LIB_SRCS) $(SQL_OBJS:.o=.c) $(LIBS)

# C++ tests (host emulation of the preludes' fragment index math, and of whole templates over
# tests/unit/emu_prelude.h); every test is rebuilt when a
# header it includes changes (its .d file beside it)
out/tests/%: tests/unit/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O1 -Wall -Wno-unknown-pragmas -MMD -MP -I. -Itemplates -Itests/unit -o $@ $< -lpthread

# the GDN decode template emulated on the host, through its descriptor in libkt
out/tests/test_gdn_emu out/tests/test_gdn_emu64: out/tests/%: tests/unit/%.cpp tests/unit/test_gdn_emu.cpp tests/unit/gdn_emu_variant.inc out/lib/libkt.a
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O1 -Wall -Wno-unknown-pragmas -MMD -MP -I. -Iruntime -Ibuild -Itemplates -Itests/unit -o $@ $< out/lib/libkt.a $(LIBS)

# the GDN prefill template emulated on the host (sm_90's, gfx12's and CDNA's fragment layouts)
out/tests/test_gdn_prefill_emu out/tests/test_gdn_prefill_emu12 out/tests/test_gdn_prefill_emu64: out/tests/%: tests/unit/%.cpp tests/unit/test_gdn_prefill_emu.cpp tests/unit/gdn_prefill_emu_variant.inc out/lib/libkt.a
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O1 -Wall -Wno-unknown-pragmas -MMD -MP -I. -Iruntime -Ibuild -Itemplates -Itests/unit -o $@ $< out/lib/libkt.a $(LIBS)

# `make test` is what CI runs: every phase, then one summary line.
test: $(TEST_BINS) $(FUZZ_BINS) out/bin/kt out/lib/libkt.so out/lib/libktrt.so out/lib/libktrt.a out/bin/law_replay
	@sh tests/run_all.sh "$(TEST_BINS)" "$(FUZZ_BINS)"
test-unit: $(TEST_BINS) out/bin/kt
	@sh tests/run_unit.sh $(TEST_BINS)
test-fuzz: $(FUZZ_BINS)
	@sh tests/run_fuzz.sh $(FUZZ_BINS)
test-compile: out/bin/kt out/lib/libkt.so
	@sh tests/run_compile.sh
# every variant of every recipe on every target (make test builds samples of the attention ones):
# hours on 2 cores, for a release or a new toolchain
test-compile-all: out/bin/kt out/lib/libkt.so
	@KT_COMPILE_ALL=1 sh tests/run_compile.sh

# The main job on the embedded default: build the kernels of one target, then tune the model's
# GEMMs on the GPU (or write the law's picks, said so, where there is none) into out/ktune.ktdb.
run: out/bin/kt out/lib/libkt.so out/lib/libktrt.so
	./tune --modelpath $${KT_MODEL:-models/llama-3.1-8b} --tp $${KT_TP:-1} --target $${KT_TARGET:-auto} --db out/ktune.ktdb

# Everything the GPU machine needs, built here (tests/device/pack.sh): carry out/bin, out/lib and
# out/device, then run `sh tests/device/run_all.sh` there.
device-prep:
	sh tests/device/pack.sh

clean:
	rm -rf out

-include $(shell find out/obj out/tests -name '*.d' 2>/dev/null)
