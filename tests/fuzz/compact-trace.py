#!/usr/bin/env python3
"""compact-trace.py - rewrite a raw .sstrace with every chunk shrunk to the
data it holds, to make small fuzz seeds out of real recordings.

Usage: compact-trace.py IN OUT [MAX_EVENTS]

Chunks are reserved at buffer_kb and mostly zero; the copy keeps the header,
each META chunk up to its end-of-records marker and each EVENTS chunk up to
its first zero event (at most MAX_EVENTS per chunk, default 200), drops
unassigned pool chunks, and fixes `size`/`used` and the end record's event
count so the result is a valid, complete trace (see runtime/format.h).  Never modifies IN.
"""
import struct
import sys

CHUNK = struct.Struct("<IIQQQQQQQ")  # magic kind size tid seq ticks ns used serial
MAGIC = 0x4B435353


def main():
    src, dst = sys.argv[1], sys.argv[2]
    max_ev = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    data = open(src, "rb").read()
    hsize = struct.unpack_from("<I", data, 16)[0]
    out = bytearray(data[:hsize])
    off = hsize
    kept = 0        # events kept, for the end record
    end_at = []     # offsets in out of SS_META_END payloads
    while off + CHUNK.size <= len(data):
        f = list(CHUNK.unpack_from(data, off))
        magic, kind, size = f[0], f[1], f[2]
        if magic != MAGIC or size < CHUNK.size:
            break
        body = data[off + CHUNK.size:off + size]
        if kind == 1:
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
    for at in end_at:
        struct.pack_into("<Q", out, at, kept)
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main()
