#!/bin/sh
# carry_measurements.sh OLD CODE OUT: here, after a template change, before a device sweep: OUT =
# CODE (a freshly built database: every kernel row and its code as the sources are now) with the
# tuning history of OLD (a returned database, with or without code: devices, problems, runs,
# passes, measurements, selections). Measurements and selections are keyed by code hash, so the
# kernels whose code did not change keep their times and the sweep on OUT times only the new ones
# (tuner/sweep.c); a selection whose kernel's code changed no longer matches any kernel and is
# re-decided by the next sweep of its key. OLD may be xz-compressed.
set -eu
OLD=$1 CODE=$2 OUT=$3
[ -f "$CODE" ] || { echo "carry_measurements: $CODE: no such database" >&2; exit 1; }
[ -f "$OLD" ] || { echo "carry_measurements: $OLD: no such database" >&2; exit 1; }
case "$OUT" in *"'"*) echo "carry_measurements: $OUT: a path with a quote is not supported" >&2; exit 1 ;; esac
tmp="$OUT.tmp$$" old="$OUT.old$$"
trap 'rm -f "$tmp" "$old"' EXIT INT TERM
case "$OLD" in
    *.xz) xz -dc "$OLD" > "$old" ;;
    *) cp "$OLD" "$old" ;;
esac
cp "$CODE" "$tmp"
# table by table, by the column names both have (the two may have been created by different
# migrations; a column OLD lacks takes its default)
sql="ATTACH '$old' AS o; BEGIN;"
for t in selection measurement pass run_problem run problem device; do
    sql="$sql DELETE FROM main.$t;"
done
for t in device problem run run_problem pass measurement selection; do
    cols=$(sqlite3 "$tmp" "ATTACH '$old' AS o; SELECT group_concat(n.name, ', ') FROM pragma_table_info('$t') n
                           WHERE n.name IN (SELECT name FROM pragma_table_info('$t', 'o'))")
    sql="$sql INSERT INTO main.$t ($cols) SELECT $cols FROM o.$t;"
done
sqlite3 "$tmp" "$sql COMMIT;"
kept=$(sqlite3 "$tmp" "SELECT count(*) FROM selection s WHERE EXISTS (SELECT 1 FROM kernel k WHERE k.name = s.kernel
                       AND k.code_hash = s.code_hash AND k.target = s.target AND k.status = 'ok')")
all=$(sqlite3 "$tmp" "SELECT count(*) FROM selection")
sqlite3 "$tmp" "VACUUM;"
mv "$tmp" "$OUT"
echo "carry_measurements: $OUT: $all selections carried, $kept of them on kernels whose code is unchanged"
