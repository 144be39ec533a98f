#!/usr/bin/env python3
"""sass_ctrl.py: the scheduling control bits of each instruction of an sm_90a kernel, beside the
opcodes and stall samples of an Nsight Compute SASS listing (`ncu --page source --print-source
sass`). This machine has ptxas but no disassembler; the device has ncu. Its listing is in the
binary's order, so a cubin built here from the same source lines up with it instruction for
instruction; a cubin of changed source takes its mnemonics from a table of opcode bits learnt
from the listed one (a mnemonic, not the operands).

    python3 bench/sass_ctrl.py CUBIN KERNEL LISTING.gz [--new CUBIN2] [--from I --to J]

Columns: index, instruction (or mnemonic), stall cycles, W<n> the scoreboard the instruction sets
when done (loads, MUFU, S2R), R<n> the one freeing its source registers, wait[...] the
scoreboards it waits for, then its stall samples. A wait on a scoreboard waits for every
instruction that set it, so a use of one load waits for all loads issued before it on the same
scoreboard. Volta-on encoding: bits 105-125 of the 128-bit instruction."""
import argparse
import gzip
import subprocess


def text(cubin, kernel):
    """the bytes of the kernel's .text section"""
    sec = ".text." + kernel
    out = subprocess.run(["readelf", "-S", "-W", cubin], capture_output=True, text=True, check=True).stdout
    rows = [ln.split() for ln in out.splitlines() if ln.strip().startswith("[") and (" " + sec + " ") in ln + " "]
    if not rows:
        raise SystemExit("%s: no section %s" % (cubin, sec))
    f = rows[0]
    j = f.index(sec)
    off, size = int(f[j + 3], 16), int(f[j + 4], 16)
    with open(cubin, "rb") as fh:
        return fh.read()[off:off + size]


def listing(path):
    """(instruction text, stall samples) in address order"""
    rows = []
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        for ln in f:
            if ln.startswith("0x"):
                nums = ln[73:].split()
                rows.append((ln[19:73].strip(), nums[0] if nums else ""))
    return rows


def ctrl(word):
    c = int.from_bytes(word[8:16], "little") >> 41
    return c & 15, (c >> 5) & 7, (c >> 8) & 7, (c >> 11) & 63


def mnemonic(ins):
    op = ins.split()[1] if ins.startswith("@") else ins.split()[0]
    return op.split(".")[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cubin")
    ap.add_argument("kernel")
    ap.add_argument("listing")
    ap.add_argument("--new", help="a cubin of changed source: mnemonics from the listed one's opcode bits")
    ap.add_argument("--from", dest="lo", type=int, default=0)
    ap.add_argument("--to", dest="hi", type=int, default=1 << 30)
    a = ap.parse_args()
    ref, rows = text(a.cubin, a.kernel), listing(a.listing)
    if len(ref) // 16 != len(rows):
        raise SystemExit("%s has %d instructions, the listing %d: not the listed binary" % (a.cubin, len(ref) // 16, len(rows)))
    code = ref
    if a.new:
        table = {}
        for i, (ins, _) in enumerate(rows):
            table.setdefault(int.from_bytes(ref[16 * i:16 * i + 2], "little") & 0xFFF, set()).add(mnemonic(ins))
        code = text(a.new, a.kernel)
    for i in range(max(a.lo, 0), min(a.hi + 1, len(code) // 16)):
        w = code[16 * i:16 * i + 16]
        st, wr, rd, wt = ctrl(w)
        if a.new:
            ins, samples = "/".join(sorted(table.get(int.from_bytes(w[:2], "little") & 0xFFF, {"?"}))), ""
        else:
            ins, samples = rows[i]
        waits = "".join(str(b) for b in range(6) if wt >> b & 1)
        print("%5d %-50s st%2d %3s %3s %-10s %s" % (i, ins[:50], st, "W%d" % wr if wr != 7 else "",
                                                   "R%d" % rd if rd != 7 else "", "wait[%s]" % waits if waits else "", samples))


if __name__ == "__main__":
    main()
