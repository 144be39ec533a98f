/* isa_stats.h: the instruction mix of a compiled kernel, counted statically from its disassembly.
 *
 * Hardware counters are not always there (rocprof reads zero on gfx1201), so the mix is read from
 * the code object: the whole kernel, and every loop found structurally (a backward branch whose
 * source is reachable from its target), each with its matrix-op count so the hot loop can be
 * named. The hot loop is the one with the most matrix ops, ties going to the smallest (the
 * innermost): the widest backward branch is often an epilogue or tail loop, not the K loop.
 * Static counts include both sides of every branch: a ragged-tail path that never runs at the
 * deployed shapes is counted all the same.
 *
 * Input text: `llvm-objdump -d --mcpu=<gfx...>` of an AMD code object (the default format, with
 * the `// ADDR: ENCODING` comments; not --symbolize-operands), or `cuobjdump -sass` of a cubin. */
#ifndef KT_ISA_STATS_H
#define KT_ISA_STATS_H

#include <stddef.h>

/* Loops kept per kernel; further ones (in address order) are dropped and flagged. */
#define ISA_STATS_MAX_LOOPS 64
/* A buffer this large always holds isa_stats_to_json's output (64 loops, a 255-byte name). */
#define ISA_STATS_JSON_MAX 8192

typedef struct kt_isa_stats {
    int mma;           /* v_wmma*, v_swmmac*, v_mfma*, v_smfmac* | HMMA, IMMA, HGMMA, ... (*MMA*) */
    int lds_read;      /* ds_read*, ds_load* | LDS, LDSM */
    int lds_write;     /* ds_write*, ds_store* | STS, STSM */
    int global_load;   /* global_load*, buffer_load*, flat_load* | LDG, LDGSTS, UTMALDG, UBLKCP */
    int global_store;  /* global_store*, buffer_store*, flat_store* | STG, UTMASTG */
    int scalar_load;   /* s_load*, s_buffer_load* | LDC, ULDC (constant bank: arguments) */
    int scratch;       /* scratch_load*, scratch_store* | LDL, STL: private memory, i.e. spills */
    int barrier;       /* s_barrier, s_barrier_wait (gfx12 splits a barrier into signal + wait,
                          only the wait is counted) | BAR */
    int valu;          /* other v_* (v_dual_* counts once) | other non-uniform instructions */
    int salu;          /* other s_* (scalar ALU, waits, branches) | uniform datapath U* */
    int total;         /* every instruction, trailing padding (s_code_end, s_nop, NOP) excluded;
                          atomics, image and other ds_* ops are only in the total */
} kt_isa_stats;

typedef struct kt_isa_loop {
    long start;        /* byte offset of the loop head in the kernel */
    long end;          /* byte offset of its last back-edge branch (inclusive) */
    kt_isa_stats s;    /* instructions in [start, end], inner loops included */
} kt_isa_loop;

typedef struct kt_isa_report {
    char kernel[256];  /* the function symbol counted */
    int sass;          /* 1 when the input was NVIDIA SASS */
    kt_isa_stats whole;
    int nloops;        /* loops in loops[], in address order */
    int loops_dropped; /* loops beyond ISA_STATS_MAX_LOOPS, not kept */
    int hot;           /* index of the hot loop in loops[], -1 when the kernel has no loop */
    kt_isa_loop loops[ISA_STATS_MAX_LOOPS];
} kt_isa_report;

/* Count the kernel named `kernel` (the symbol as printed; NULL = the only function in the text)
 * in disassembly text. Returns 0, or -1 with a message in err. */
int isa_stats_parse(const char *disasm, const char *kernel, kt_isa_report *out, char *err, size_t errlen);

/* Compact JSON: {"kernel":..,"whole":{..},"hot":{"start":..,"end":..,counts}|null,
 * "loops":[{"start":..,"end":..,"mma":..,"total":..},..],"loops_dropped":N}.
 * Returns the length written, or -1 when it does not fit in n bytes. */
int isa_stats_to_json(const kt_isa_report *r, char *buf, size_t n);

/* Disassemble a code object and count one kernel. mcpu "sm_*" runs `tool -sass path` (tool NULL:
 * "cuobjdump"); any other mcpu runs `tool -d --mcpu=<mcpu> path` (tool NULL: "llvm-objdump-19").
 * The tool is spawned directly (PATH search, no shell). Returns 0, or -1 with a message in err. */
int isa_stats_of_code_object(const char *tool, const char *mcpu, const char *path, const char *kernel,
                             kt_isa_report *out, char *err, size_t errlen);

#endif
