#!/bin/sh
# build_carry.sh (twenty-fourth session): here, before call2.sh / call3.sh: out/c24/gdn_all.ktdb.xz,
# every sm_90a gdn_decode kernel of this session's template (both dtypes) and every bf16 gdn_prefill
# kernel of this session's template; and the tools of call 3 (tests/device/pack.sh without its GEMM
# database).
set -eu
cd "$(dirname "$0")/../../.."
make -s -j2 all
KT_PACK_DB=0 KT_EXPORT_DB=/nonexistent sh tests/device/pack.sh > /dev/null 2>&1 || true
mkdir -p out/c24
DB=out/c24/gdn_all.ktdb
rm -f $DB $DB.xz
R=templates/gdn/_carry_prefill.lua
sed 's/{ "dtype", { "bf16", "fp16" } }/{ "dtype", { "bf16" } }/' templates/gdn/prefill.lua > $R
trap 'rm -f $R' EXIT
out/bin/kt gen --recipe templates/gdn/decode.lua --target sm_90a --db $DB --quiet
out/bin/kt gen --recipe $R --target sm_90a --db $DB --quiet
sqlite3 $DB "PRAGMA wal_checkpoint(TRUNCATE); SELECT ops, status, count(*) FROM kernel GROUP BY ops, status;"
xz -T2 -6 $DB
ls -la out/c24
