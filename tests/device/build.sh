#!/bin/sh
# build.sh: builds out/device/gemm_check (tests/device/gemm_check.c), the device-side GEMM checker,
# then runs its CPU-only self-test. Run from the repository root.
#
# It needs only a C11 compiler: no CUDA toolkit (the driver is opened with dlopen at run time) and
# no library beyond libc/libm/libdl, so the binary built here runs on the GPU machine as it is
# (glibc is forward compatible: built on Debian 12, it runs on Ubuntu 24.04). Not static: a static
# glibc cannot reliably dlopen the machine's libcuda.so.1.
set -eu
CC=${CC:-cc}
mkdir -p out/device
$CC -std=c11 -O2 -Wall -Wextra -I. -o out/device/gemm_check \
    tests/device/gemm_check.c runtime/cuda_driver.c -ldl -lm

# The binary must need nothing the GPU machine may lack.
extra=$(ldd out/device/gemm_check | awk '{print $1}' |
        grep -v -E '^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libdl\.so\.2|/lib64/ld-linux-x86-64\.so\.2|/lib/ld-linux-aarch64\.so\.1)$' || true)
if [ -n "$extra" ]; then
    echo "build.sh: out/device/gemm_check needs libraries beyond libc/libm/libdl:" $extra >&2
    exit 1
fi
# The CPU-only self-test: conversions, the reference against a long double Kahan sum, the checker.
if ! st=$(out/device/gemm_check --selftest); then
    printf '%s\n' "$st" >&2
    exit 1
fi
printf '%s\n' "$st" | tail -n 1
echo "built out/device/gemm_check"
