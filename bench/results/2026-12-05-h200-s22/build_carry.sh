#!/bin/sh
# build_carry.sh: here (Debian 12, nvcc), before call2.sh / call3.sh: out/c22/gdn_all.ktdb.xz, the
# sm_90a gdn_decode kernels (every bf16 and fp16 variant) and gdn_prefill kernels (every bf16
# variant: the checks and benches are bf16) in one database, and for call 3 the tools
# (tests/device/pack.sh without its GEMM database). About 7 minutes on 2 cores from a cold cache.
set -eu
cd "$(dirname "$0")/../../.."
make -s -j2 all
KT_PACK_DB=0 KT_EXPORT_DB=/nonexistent sh tests/device/pack.sh > /dev/null 2>&1 || true
DB=out/c22/gdn_all.ktdb
mkdir -p out/c22
rm -f out/c22/* 
R=templates/gdn/_carry_prefill.lua
sed 's/{ "dtype", { "bf16", "fp16" } }/{ "dtype", { "bf16" } }/' templates/gdn/prefill.lua > $R
trap 'rm -f $R' EXIT
out/bin/kt gen --recipe templates/gdn/decode.lua --target sm_90a --db $DB --quiet
out/bin/kt gen --recipe $R --target sm_90a --db $DB --quiet
sqlite3 $DB "PRAGMA wal_checkpoint(TRUNCATE); SELECT ops, status, count(*) FROM kernel GROUP BY ops, status;"
xz -T2 -6 $DB
ls -la out/c22
