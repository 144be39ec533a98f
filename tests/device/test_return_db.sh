#!/bin/sh
# test_return_db.sh: return_db.sh and restore_code.sh round trip on a small database whose code
# is too big to return (KT_RETURN_LIMIT lowered): the code-stripped copy comes back, the code is
# restored byte for byte from the build database, and a build database missing one kernel's code
# is refused with nothing written. CPU only.
set -u
cd "$(dirname "$0")/../.." || exit 1
dir=$(mktemp -d "${TMPDIR:-/tmp}/kt-return.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "test_return_db: $*"; exit 1; }
mkdir -p "$dir/out"
sqlite3 "$dir/build.ktdb" "CREATE TABLE kernel (name TEXT, target TEXT, code_hash TEXT, status TEXT, code BLOB);
    INSERT INTO kernel VALUES ('k1', 'sm_90a', 'h1', 'ok', randomblob(200000)), ('k2', 'sm_90a', 'h2', 'ok', randomblob(200000)),
                              ('k3', 'sm_90a', 'h3', 'excluded', randomblob(1000));
    CREATE TABLE selection (kernel TEXT, time_us REAL); INSERT INTO selection VALUES ('k1', 12.5);" || fail "sqlite3"
cp "$dir/build.ktdb" "$dir/tuned.ktdb"
sqlite3 "$dir/tuned.ktdb" "INSERT INTO selection VALUES ('k2', 7.25);"
KT_RETURN_LIMIT=100000 sh tests/device/return_db.sh "$dir/tuned.ktdb" "$dir/out" > "$dir/log" 2>&1 || { cat "$dir/log"; fail "not returned"; }
[ -f "$dir/out/ktune-nocode.ktdb.xz" ] && [ ! -f "$dir/out/ktune.ktdb.gz" ] || fail "expected the code-stripped copy only"
sh tests/device/restore_code.sh "$dir/out/ktune-nocode.ktdb.xz" "$dir/build.ktdb" "$dir/back.ktdb" > "$dir/log" 2>&1 || { cat "$dir/log"; fail "restore failed"; }
same=$(sqlite3 "$dir/back.ktdb" "ATTACH '$dir/tuned.ktdb' AS t;
    SELECT count(*) FROM kernel k JOIN t.kernel u USING (name) WHERE k.code = u.code;
    SELECT count(*) FROM selection;" | tr '\n' ' ')
[ "$same" = "3 2 " ] || fail "restored database differs: $same"
# a build database without k2's code: refused, nothing written
sqlite3 "$dir/build.ktdb" "UPDATE kernel SET code_hash = 'other' WHERE name = 'k2';"
if sh tests/device/restore_code.sh "$dir/out/ktune-nocode.ktdb.xz" "$dir/build.ktdb" "$dir/bad.ktdb" > "$dir/log" 2>&1; then
    fail "restore with a missing code accepted"
fi
grep -q "1 ok kernels" "$dir/log" && [ ! -e "$dir/bad.ktdb" ] || { cat "$dir/log"; fail "refusal not as expected"; }
# small enough with its code: the gzipped database comes back
rm -f "$dir/out"/*
sh tests/device/return_db.sh "$dir/tuned.ktdb" "$dir/out" > "$dir/log" 2>&1 && [ -f "$dir/out/ktune.ktdb.gz" ] || fail "gzip path"
echo "test_return_db: ok (stripped, restored byte for byte, refusal, gzip path)"
