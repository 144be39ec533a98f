#!/bin/sh
# make_fixtures.sh: regenerate the committed code-object fixtures from the sources beside it.
#
#   amd_kernels_<gfx>.co     amd_kernels.hip for gfx1201, gfx1100, gfx942 (clang-19, no ROCm)
#   amd_agpr_gfx942.co       amd_agpr.hip for gfx942 (AccVGPRs exist only there)
#   nv_kernels_sm_90a.cubin  nv_kernels.cu (nvcc -cubin)
#   nv_kernels_sm_90a.ptxas.txt  ptxas -v's report for that cubin, the independent reference
#                            test_resources_vs_tools.sh uses when nvcc is not installed
#   ../fuzz/corpus_elf_*/    fuzz seeds: these files and cuts of them
#
# The unit tests hard-code the numbers these binaries hold (as llvm-readelf and ptxas print
# them), so after regenerating with another compiler, run
#     sh tests/unit/test_resources_vs_tools.sh
# and update the expectations in tests/unit/test_elf_amdgpu.c / test_elf_cubin.c.
# Knobs: CLANG (default clang-19), NVCC (default: PATH, CUDA_HOME, /usr/local/cuda/bin).
set -eu
cd "$(dirname "$0")"
CLANG=${CLANG:-clang-19}

amd() {     # amd SOURCE ARCH OUTPUT
    "$CLANG" -x hip --offload-arch="$2" --offload-device-only --no-gpu-bundle-output \
        -nogpulib -nogpuinc -O3 "$1" -o "$3"
    echo "wrote $3"
}
for arch in gfx1201 gfx1100 gfx942; do
    amd amd_kernels.hip "$arch" "amd_kernels_$arch.co"
done
amd amd_agpr.hip gfx942 amd_agpr_gfx942.co

NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || true)}
[ -z "$NVCC" ] && [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ] && NVCC=$CUDA_HOME/bin/nvcc
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
if [ -z "$NVCC" ]; then
    echo "make_fixtures: nvcc not found (PATH, CUDA_HOME, /usr/local/cuda/bin); cubin fixtures kept as they are" >&2
else
    "$NVCC" -cubin -gencode arch=compute_90a,code=sm_90a -O3 -Xptxas -v nv_kernels.cu \
        -o nv_kernels_sm_90a.cubin 2> nv_kernels_sm_90a.ptxas.txt
    echo "wrote nv_kernels_sm_90a.cubin"
fi

# Seed corpora for the fuzzers: every fixture, plus cuts of it (header only, half, all but
# the last 100 bytes), so the truncation paths are in the seeds from the start.
seed() {    # seed FILE CORPUS_DIR
    n=$(wc -c < "$1")
    base=$(basename "$1")
    cp "$1" "$2/$base"
    head -c 64 "$1" > "$2/$base.cut64"
    head -c $((n / 2)) "$1" > "$2/$base.cuthalf"
    head -c $((n - 100)) "$1" > "$2/$base.cutlast100"
}
mkdir -p ../fuzz/corpus_elf_amdgpu ../fuzz/corpus_elf_cubin
for f in amd_*.co; do seed "$f" ../fuzz/corpus_elf_amdgpu; done
seed nv_kernels_sm_90a.cubin ../fuzz/corpus_elf_cubin
chmod 644 ./*.co ./*.cubin ../fuzz/corpus_elf_amdgpu/* ../fuzz/corpus_elf_cubin/*
echo "wrote seed corpora under tests/fuzz/"
