#!/bin/sh
# Nineteenth session, device call 2 (bench/NOTES.md, "What a pure reader does with the same bytes"):
# reader_bound.py as first written, its three sizes in one process; the 268 MB rows came back
# (c2-reader_bound.log), the second size's graph capture failed, so call 3 ran one size a process.
. tests/device/env.sh; timeout 200 python3 bench/results/2026-12-04-h200-s19/reader_bound.py 268.4 536.9 1073.7 2>&1 | tee $OUT/reader_bound.log | tail -40
