/*
 * png.h - read the screenshots that headless Chromium writes (8-bit RGB or
 * RGBA PNG, not interlaced) into plain RGB pixels, decoded here with zlib
 * so a test can count colours the same way on every machine.
 */
#ifndef SS_TEST_PNG_H
#define SS_TEST_PNG_H

#include <stddef.h>
#include <stdint.h>

/* The pixels of the PNG at path, laid over white, as w * h RGB triples
 * (malloc'ed into *rgb).  0, or -1 with a reason in why. */
int ss_png_rgb(const char *path, unsigned char **rgb, uint32_t *w, uint32_t *h,
	       char *why, size_t nwhy);

#endif /* SS_TEST_PNG_H */
