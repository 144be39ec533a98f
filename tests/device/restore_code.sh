#!/bin/sh
# restore_code.sh NOCODE CODE OUT: here, after a device run returned ktune-nocode.ktdb.xz
# (tests/device/return_db.sh): OUT = NOCODE (xz or plain) with every kernel's code taken from
# CODE, the database the code was built into (out/device/ktune.ktdb before the run), matched by
# target, name and code hash. Refuses, writing nothing, when an ok kernel finds no code.
set -eu
NOCODE=$1 CODE=$2 OUT=$3
[ -f "$CODE" ] || { echo "restore_code: $CODE: no such database" >&2; exit 1; }
tmp="$OUT.tmp$$"
trap 'rm -f "$tmp"' EXIT INT TERM
case "$NOCODE" in
    *.xz) xz -dc "$NOCODE" > "$tmp" ;;
    *) cp "$NOCODE" "$tmp" ;;
esac
missing=$(sqlite3 "$tmp" "ATTACH '$CODE' AS c;
    UPDATE kernel SET code = (SELECT k.code FROM c.kernel k WHERE k.target = kernel.target AND k.name = kernel.name
                              AND k.code_hash = kernel.code_hash) WHERE code IS NULL;
    SELECT count(*) FROM kernel WHERE status = 'ok' AND code IS NULL;")
if [ "$missing" != 0 ]; then
    echo "restore_code: $missing ok kernels of $NOCODE have no code of the same hash in $CODE; nothing written" >&2
    exit 1
fi
sqlite3 "$tmp" "VACUUM;"
mv "$tmp" "$OUT"
trap - EXIT INT TERM
echo "restore_code: $OUT: code restored from $CODE"
