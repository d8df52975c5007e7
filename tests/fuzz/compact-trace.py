#!/usr/bin/env python3
"""compact-trace.py - rewrite a raw .sstrace with every chunk shrunk to the
data it holds, to make small fuzz seeds out of real recordings.

Usage: compact-trace.py IN OUT [MAX_EVENTS]

Chunks are reserved at buffer_kb and mostly zero; the copy keeps the header,
each META chunk up to its end-of-records marker and each EVENTS chunk up to
its first zero event (at most MAX_EVENTS per chunk, default 200), drops
unassigned pool chunks, and fixes `size`/`used` and the end record's event
count so the result is a valid, complete trace (see runtime/format.h).  Never modifies IN.

Version 2 files: an EVENTS chunk keeps its first whole blocks (up to
MAX_EVENTS events, at least one block); a RING chunk keeps its non-empty
blocks, each cut to its data and the block size cut to the longest; free
rings are dropped.  A block found twice counts once (the longer copy) in
the end record, as the reader counts it.
"""
import struct
import sys

CHUNK = struct.Struct("<IIQQQQQQQ")  # magic kind size tid seq ticks ns used serial
MAGIC = 0x4B435353
BLOCK_HEAD = 3 << 32 | 15 << 34 | 3 << 42   # SS_CW_LONG(SS_EV_BLOCK, 3, 0)
PAYLOAD = {15: 3, 13: 2, 14: 0}             # BLOCK, BASE, PAD; others 1


def word(b, i):
    return struct.unpack_from("<Q", b, 8 * i)[0]


def blocks_v2(body, nwords, packed):
    """(start, end, seq, events) of the good blocks in the first nwords
    words of body, read as the reader does (symbolize/read/reader.c)."""
    out, i = [], 0
    while i < nwords and word(body, i) == BLOCK_HEAD:
        start, seq, ev, i = i, word(body, i + 1) if i + 1 < nwords else 0, 0, i + 4
        while i < nwords:
            w = word(body, i)
            if not w or (packed and w == BLOCK_HEAD):
                break
            k = (w >> 32) & 3
            if k == 0:
                break
            n = 0 if k != 3 else (w >> 42) & 3
            if k == 3 and ((w >> 44) or n != PAYLOAD.get((w >> 34) & 0xff, 1)
                           or i + 1 + n > nwords):
                break
            if k != 3 or (w >> 34) & 0xff not in PAYLOAD:
                ev += 1
            i += 1 + n
        if i > start + 4 or start + 4 <= nwords:
            out.append((start, min(i, nwords), seq, ev))
        if not packed or i >= nwords or word(body, i) != BLOCK_HEAD:
            break
    return out


def main():
    src, dst = sys.argv[1], sys.argv[2]
    max_ev = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    data = open(src, "rb").read()
    hsize = struct.unpack_from("<I", data, 16)[0]
    out = bytearray(data[:hsize])
    off = hsize
    kept = 0        # events kept, for the end record
    end_at = []     # offsets in out of SS_META_END payloads
    v2 = struct.unpack_from("<I", data, 8)[0] >= 2
    seen = {}       # version 2: (serial, seq) -> (words, events) kept
    while off + CHUNK.size <= len(data):
        f = list(CHUNK.unpack_from(data, off))
        magic, kind, size = f[0], f[1], f[2]
        if magic != MAGIC or size < CHUNK.size:
            break
        body = data[off + CHUNK.size:off + size]
        if v2 and kind in (1, 3):
            if f[8] == 0:
                off += size
                continue  # a pool chunk nobody took, or a free ring
            if kind == 1:
                nw = (f[7] or len(body)) // 8
                blocks, n = [], 0
                for b in blocks_v2(body, nw, True):
                    if blocks and n + b[3] > max_ev:
                        break
                    blocks.append(b)
                    n += b[3]
                keep = body[:8 * blocks[-1][1]] if blocks else b""
                f[7] = len(keep)
            else:
                bb, nb = struct.unpack_from("<II", body, 0)
                blocks = []
                for j in range(nb):
                    blk = body[64 + j * bb:64 + (j + 1) * bb]
                    blocks += [(blk, b) for b in blocks_v2(blk, bb // 8, False)]
                nbb = max([64] + [(8 * b[1] + 8 + 63) & ~63 for _, b in blocks])
                keep = struct.pack("<II", nbb, len(blocks)) + bytes(56)
                for blk, b in blocks:
                    keep += blk[:8 * b[1]] + bytes(nbb - 8 * b[1])
                blocks = [b for _, b in blocks]
                f[7] = 0
            for b in blocks:
                key = (f[8], b[2])
                if b[1] - b[0] > seen.get(key, (0, 0))[0]:
                    seen[key] = (b[1] - b[0], b[3])
        elif kind == 1:
            if f[8] == 0 and f[3] == 0:
                off += size
                continue  # a pool chunk nobody took
            n = 0
            while (n < max_ev and 16 * n + 16 <= len(body)
                   and struct.unpack_from("<Q", body, 16 * n)[0]):
                n += 1
            keep = body[:16 * n]
            kept += n
            f[7] = len(keep)
        else:
            p = 0
            while p + 16 <= len(body):
                typ, _, rsize = struct.unpack_from("<HHI", body, p)
                if not typ or rsize < 16:
                    break
                if typ == 6:  # SS_META_END: events is its first field
                    end_at.append(len(out) + CHUNK.size + p + 16)
                p += (rsize + 7) & ~7
            keep = body[:p] + bytes(16)  # with the zero terminator
            f[7] = 0
        f[2] = CHUNK.size + len(keep)
        out += CHUNK.pack(*f) + keep
        off += size
    # the end record counts the events written: make it match what is
    # kept, or the reader rightly says the rest of the file is missing
    if v2:
        kept = sum(ev for _, ev in seen.values())
    for at in end_at:
        struct.pack_into("<Q", out, at, kept)
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main()
