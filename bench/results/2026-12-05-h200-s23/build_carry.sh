#!/bin/sh
# build_carry.sh: here (Debian 12, nvcc), before call1.sh / call2.sh: out/c23/gdn_all.ktdb.xz, every
# sm_90a gdn_decode kernel of this session's template (both dtypes, MT and OB axes) and every bf16
# gdn_prefill kernel of this session's template (k's pieces in kd's order); out/c23/c22.ktdb.xz,
# the twenty-second session's database (prefill.hip before that change: call 1's A/B); and the
# tools of call 2 (tests/device/pack.sh without its GEMM database).
# CARRY_DIR names another folder than out/c23 (the twenty-fourth session's out/c24).
set -eu
cd "$(dirname "$0")/../../.."
C=${CARRY_DIR:-out/c23}
make -s -j2 all
KT_PACK_DB=0 KT_EXPORT_DB=/nonexistent sh tests/device/pack.sh > /dev/null 2>&1 || true
mkdir -p $C
DB=$C/gdn_all.ktdb
rm -f $DB $DB.xz
R=templates/gdn/_carry_prefill.lua
sed 's/{ "dtype", { "bf16", "fp16" } }/{ "dtype", { "bf16" } }/' templates/gdn/prefill.lua > $R
trap 'rm -f $R' EXIT
out/bin/kt gen --recipe templates/gdn/decode.lua --target sm_90a --db $DB --quiet
out/bin/kt gen --recipe $R --target sm_90a --db $DB --quiet
sqlite3 $DB "PRAGMA wal_checkpoint(TRUNCATE); SELECT ops, status, count(*) FROM kernel GROUP BY ops, status;"
xz -T2 -6 $DB
[ -f out/c22/gdn_all.ktdb.xz ] && cp out/c22/gdn_all.ktdb.xz $C/c22.ktdb.xz
ls -la $C
