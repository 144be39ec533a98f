/* read.h: the argument structs of bench/read.cu's pure-read and copy kernels, shared by the kernels
 * (CUDA C++) and bench/ceiling.c (C11), each passed by value as its kernel's one parameter
 * (ktb_launch). Both kernels are in the one cubin (out/bench/read.cubin). */
#ifndef KT_BENCH_READ_H
#define KT_BENCH_READ_H

#define KT_READ_KERNEL "kt_bench_read"
#define KT_READ_THREADS 512     /* threads per block; the kernel's launch bound */

typedef struct kt_read_args {
    const void *src;            /* 16-byte aligned */
    unsigned long long n16;     /* 16-byte vectors to read */
    unsigned *sink;             /* written only when a thread's checksum equals never */
    unsigned never;             /* a value no checksum takes, so the reads cannot be dropped */
    unsigned pad_;
} kt_read_args;

/* The copy ceiling: src[0..n16) to dst[0..n16), 16-byte vectors, grid-stride. A kernel, not the
 * driver's memcpy, which reaches well under what a kernel does on an H200 (~2.7 vs ~4.2 TB/s). */
#define KT_COPY_KERNEL "kt_bench_copy"
#define KT_COPY_THREADS 512

typedef struct kt_copy_args {
    void *dst;                  /* 16-byte aligned, not overlapping src */
    const void *src;            /* 16-byte aligned */
    unsigned long long n16;     /* 16-byte vectors to copy */
} kt_copy_args;

#endif
