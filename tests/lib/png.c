/*
 * png.c - a PNG reader for test screenshots (png.h): the chunks, IDAT
 * inflated with zlib, the five row filters undone, alpha laid over white.
 * Nothing else of PNG (palettes, 16 bits, interlace) is read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "png.h"

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

int ss_png_rgb(const char *path, unsigned char **rgb, uint32_t *w_, uint32_t *h_,
	       char *why, size_t nwhy)
{
	FILE *f = fopen(path, "rb");
	unsigned char *png = NULL, *idat = NULL, *raw = NULL, *out = NULL;
	size_t n = 0, nidat = 0, cap = 0;
	uint32_t w = 0, h = 0, bpp = 0;
	int rc = -1;

	*rgb = NULL;
	snprintf(why, nwhy, "not a PNG");
	if (!f)
		return -1;
	for (size_t r = 1; r > 0; n += r) {
		if (n + 65536 > cap && !(png = realloc(png, cap = 2 * cap + 65536)))
			abort();
		r = fread(png + n, 1, cap - n, f);
	}
	fclose(f);
	if (n < 8 || memcmp(png, "\x89PNG\r\n\x1a\n", 8))
		goto out;
	for (size_t at = 8; at + 12 <= n; ) {
		uint32_t len = be32(png + at);
		const unsigned char *d = png + at + 8;
		if (len > n - at - 12)
			goto out;
		if (!memcmp(png + at + 4, "IHDR", 4) && len >= 13) {
			w = be32(d), h = be32(d + 4);
			bpp = d[9] == 6 ? 4 : d[9] == 2 ? 3 : 0;
			if (d[8] != 8 || !bpp || d[12] != 0 || !w || !h || w > 16384 || h > 16384) {
				snprintf(why, nwhy, "PNG of depth %d, colour type %d, interlace %d: "
					 "only 8-bit RGB(A) without interlace is read", d[8], d[9], d[12]);
				goto out;
			}
		} else if (!memcmp(png + at + 4, "IDAT", 4)) {
			if (!(idat = realloc(idat, nidat + len + 1)))
				abort();
			memcpy(idat + nidat, d, len);
			nidat += len;
		}
		at += 12 + (size_t)len;
	}
	size_t stride = (size_t)w * bpp, want = (size_t)h * (stride + 1);
	uLongf got = want;
	if (!bpp || !(raw = malloc(want)) || !(out = malloc((size_t)w * h * 3)))
		goto out;
	if (uncompress(raw, &got, idat, nidat) != Z_OK || got != want) {
		snprintf(why, nwhy, "PNG image data does not inflate to %ux%u pixels", w, h);
		goto out;
	}
	for (uint32_t y = 0; y < h; y++) {
		unsigned char *row = raw + y * (stride + 1), *cur = row + 1;
		const unsigned char *up = y ? cur - (stride + 1) : NULL;
		for (size_t i = 0; i < stride; i++) {
			int a = i >= bpp ? cur[i - bpp] : 0, b = up ? up[i] : 0;
			int c = up && i >= bpp ? up[i - bpp] : 0;
			switch (row[0]) {
			case 0: break;
			case 1: cur[i] += a; break;
			case 2: cur[i] += b; break;
			case 3: cur[i] += (a + b) / 2; break;
			case 4: cur[i] += paeth(a, b, c); break;
			default:
				snprintf(why, nwhy, "PNG row %u has filter %d", y, row[0]);
				goto out;
			}
		}
		for (size_t x = 0; x < w; x++) {
			const unsigned char *p = cur + x * bpp;
			double al = bpp == 4 ? p[3] / 255.0 : 1;
			for (int k = 0; k < 3; k++)
				out[((size_t)y * w + x) * 3 + k] =
					(unsigned char)(p[k] * al + 255 * (1 - al) + 0.5);
		}
	}
	*rgb = out;
	out = NULL;
	*w_ = w;
	*h_ = h;
	rc = 0;
out:
	free(png);
	free(idat);
	free(raw);
	free(out);
	return rc;
}
