#!/bin/sh
# return_db.sh DB DIR: on the GPU machine, put a consistent copy of the tuned database DB under
# DIR (the device tool's $OUT) small enough to come back: DIR/ktune.ktdb.gz when that is within
# the tool's 16 MiB a file, else DIR/ktune-nocode.ktdb.xz, the same database without the kernels'
# code (the code is what the build machine compiled: tests/device/restore_code.sh puts it back,
# matched by code hash). Prints what it wrote; exits non-zero when neither fits. KT_RETURN_LIMIT
# (bytes, default 16 MiB) is for the round-trip test (tests/device/test_return_db.sh).
set -u
DB=$1 DIR=$2
LIMIT=${KT_RETURN_LIMIT:-16777216}
snap="$DIR/ktune.ktdb"
# SQLite's backup through python3 when there is one (the machine's torch python): consistent even
# with a WAL beside the file; else the file as it is.
if ! python3 -c 'import sqlite3, sys; s = sqlite3.connect(sys.argv[1]); d = sqlite3.connect(sys.argv[2]); s.backup(d); d.close()' \
        "$DB" "$snap" 2> /dev/null; then
    cp "$DB" "$snap" || exit 1
fi
if gzip -f "$snap" && [ "$(wc -c < "$snap.gz")" -le $LIMIT ]; then
    echo "return_db: $snap.gz ($(wc -c < "$snap.gz") bytes)"
    exit 0
fi
[ -f "$snap.gz" ] && gunzip -f "$snap.gz"
rm -f "$snap.gz"
# python3 on the GPU machine (no sqlite3 there), the sqlite3 shell elsewhere
strip_code() {
    python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE kernel SET code = NULL"); c.commit(); c.execute("VACUUM"); c.close()' \
        "$1" 2> /dev/null || sqlite3 "$1" "UPDATE kernel SET code = NULL; VACUUM;"
}
if strip_code "$snap" && xz -6 -T0 -c "$snap" > "$DIR/ktune-nocode.ktdb.xz" &&
        [ "$(wc -c < "$DIR/ktune-nocode.ktdb.xz")" -le $LIMIT ]; then
    rm -f "$snap"
    echo "return_db: $DIR/ktune-nocode.ktdb.xz ($(wc -c < "$DIR/ktune-nocode.ktdb.xz") bytes; over 16 MiB with the code: restore it with tests/device/restore_code.sh)"
    exit 0
fi
rm -f "$snap" "$DIR/ktune-nocode.ktdb.xz"
echo "return_db: $DB does not fit in 16 MiB even without its code: not returned" >&2
exit 1
