#!/usr/bin/env python3
"""png_ink.py PNG [MIN_SHARE] — exits 0 if the PNG (8-bit RGB/RGBA, as
rsvg-convert writes) is not blank: more than MIN_SHARE (default 0.01) of its
pixels are opaque and not white, and at least two distinct colours other
than white, black and grey appear (the coloured series of a chart)."""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                raise SystemExit(f"{path}: only 8-bit RGB/RGBA is understood")
            bpp = 4 if ctype == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride = zlib.decompress(idat), width * bpp
    prev = bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(width):
            px = line[x * bpp:x * bpp + bpp]
            yield tuple(px[:3]), (px[3] if bpp == 4 else 255)
        prev = line
    pixels.size = width * height


path = sys.argv[1]
share = float(sys.argv[2]) if len(sys.argv) > 2 else 0.01
ink, colours = 0, set()
for rgb, alpha in pixels(path):
    if alpha > 128 and rgb != (255, 255, 255):
        ink += 1
        if max(rgb) - min(rgb) > 60:  # saturated: a series, not text or grid
            colours.add((rgb[0] // 32, rgb[1] // 32, rgb[2] // 32))
print(f"{path}: {ink} inked pixels of {pixels.size}, {len(colours)} colours")
sys.exit(0 if ink > pixels.size * share and len(colours) >= 2 else 1)
