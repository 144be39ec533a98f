/* read.h: the argument struct of bench/read.cu's pure-read kernel, shared by the kernel (CUDA C++)
 * and bench/ceiling.c (C11), passed by value as the kernel's one parameter (ktb_launch). */
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

#endif
