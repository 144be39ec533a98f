#!/bin/sh
# build_carry.sh: here (Debian 12, nvcc), before call1.sh / call2.sh: out/c23/gdn_all.ktdb.xz, every
# sm_90a gdn_decode kernel of this session's template (both dtypes, MT and OB axes) and the bf16
# gdn_prefill kernels of out/c22's database (built from the same prefill.hip; this session changed
# only sm90.h's macros beside it, which would recompile them all for nothing), and the tools of
# call 2 (tests/device/pack.sh without its GEMM database).
set -eu
cd "$(dirname "$0")/../../.."
make -s -j2 all
KT_PACK_DB=0 KT_EXPORT_DB=/nonexistent sh tests/device/pack.sh > /dev/null 2>&1 || true
mkdir -p out/c23
DEC=out/c23_dec.ktdb DB=out/c23/gdn_all.ktdb
rm -f $DB $DB.xz
out/bin/kt gen --recipe templates/gdn/decode.lua --target sm_90a --db $DEC --quiet
xz -dc out/c22/gdn_all.ktdb.xz > $DB
COLS=$(sqlite3 $DB "SELECT group_concat(name, ',') FROM pragma_table_info('kernel') WHERE name <> 'id'")
sqlite3 $DB "PRAGMA journal_mode=DELETE; DELETE FROM kernel WHERE ops = 'gdn_decode';
  ATTACH '$DEC' AS d; INSERT INTO kernel ($COLS) SELECT $COLS FROM d.kernel; DETACH d;
  SELECT ops, status, count(*) FROM kernel GROUP BY ops, status;"
xz -T2 -6 $DB
ls -la out/c23
