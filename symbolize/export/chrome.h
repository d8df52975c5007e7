/*
 * chrome.h - what the parts of the Chrome trace-event exporter share (not
 * a public header: export.h is): its state, the output primitives of
 * chrome-write.c, and the number formatting that the slice path inlines.
 */
#ifndef SS_CHROME_H
#define SS_CHROME_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "export.h"
#include "outfile.h"

#define SS_CHROME_BUF (1u << 20)
#define SS_CHROME_SLACK 160      /* numbers and fixed parts of one event */

/* A distinct function as printed: both pieces in one allocation. */
struct ss_chrome_sym {
	const char *name, *file, *clone;   /* the key (pointers, see lookup) */
	uint64_t addr;
	char *head, *tail;
	unsigned hlen, tlen;
	int args;                 /* the tail opens "args" */
};

/* One writer thread, one buffer in flight at a time. */
struct ss_chrome_writer {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const char *pending;     /* buffer to write, NULL when idle */
	size_t plen;
	int stop, started;
};

struct ss_chrome {
	struct ss_exporter ex;
	struct ss_out out;       /* outfile.h; fd is its descriptor */
	int fd;
	char *path;
	char *bufs[2];
	char *buf;               /* the one being filled */
	size_t len;
	uint64_t t0;
	int first;
	int werr;                /* errno of the first failed write */
	struct ss_chrome_writer w;
	struct ss_chrome_sym *syms;
	size_t nsyms, capsyms;   /* capsyms: power of two */
	uint64_t cur_pid, cur_tid;
	char pidtid[64];
	unsigned pidtid_len;
	int have_pidtid;
	int details;             /* args file, addr on every function slice */
	char *sf;                /* record.stack: the "stackFrames" entries */
	size_t sflen, sfcap;
	/* the first stop marker: otherData says where recording stopped */
	int stopped, stop_has_step;
	uint64_t stop_ns, stop_pid, stop_tid, stop_step, stop_reason;
};

void *ss_chrome_writer_main(void *arg);
/* chrome-offcpu.c: the exporter's offcpu callback (record.sched) */
void ss_chrome_offcpu(void *ctx, uint64_t pid, const struct ss_offcpu *d);
/* alloc-track.c: recorded allocations as counter tracks */
void ss_chrome_alloc(void *ctx, uint64_t pid, const struct ss_alloc_data *d);
/* chrome-alloc.c: the "CPU memory" track (ex's counter callback, Chrome
 * and Perfetto) and the "[memory]" instant of each allocation and free */
void ss_alloc_cpu_track(struct ss_exporter *ex, uint64_t pid, const struct ss_alloc_data *d);
void ss_chrome_alloc_events(struct ss_chrome *c, uint64_t pid, const struct ss_alloc_data *d);
void ss_chrome_flush(struct ss_chrome *c);
void ss_chrome_lit(struct ss_chrome *c, const char *s, size_t n);
void ss_chrome_u64(struct ss_chrome *c, uint64_t v);
void ss_chrome_us(struct ss_chrome *c, uint64_t ns);
size_t ss_chrome_escape(char *dst, const char *s);
void ss_chrome_str(struct ss_chrome *c, const char *s);
void ss_chrome_sep(struct ss_chrome *c);

/* "00".."99": two digits at a time */
static const char ss_chrome_digits2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static inline void ss_chrome_reserve(struct ss_chrome *c, size_t n)
{
	if (c->len + n > SS_CHROME_BUF)
		ss_chrome_flush(c);
}

#define SS_CHROME_LIT(c, s) ss_chrome_lit((c), (s), sizeof(s) - 1)
/* record.args: a call's parameters and flops, inside an open args object
 * (chrome-args.c); 1 when it wrote any */
int ss_chrome_call_args(struct ss_chrome *c, const struct ss_slice *s);

/* Decimal digits of v at p (room for 20); returns the count. */
static inline unsigned ss_chrome_fmt_u64(char *p, uint64_t v)
{
	char tmp[20];
	unsigned n = 20, len;

	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;
		v /= 100;
		tmp[--n] = ss_chrome_digits2[d + 1];
		tmp[--n] = ss_chrome_digits2[d];
	}
	if (v >= 10) {
		tmp[--n] = ss_chrome_digits2[v * 2 + 1];
		tmp[--n] = ss_chrome_digits2[v * 2];
	} else {
		tmp[--n] = (char)('0' + v);
	}
	len = 20 - n;
	memcpy(p, tmp + n, len);
	return len;
}

/* ns as microseconds with three decimals at p (room for 24). */
static inline unsigned ss_chrome_fmt_us(char *p, uint64_t ns)
{
	unsigned frac = (unsigned)(ns % 1000);
	unsigned n = ss_chrome_fmt_u64(p, ns / 1000);

	p[n] = '.';
	p[n + 1] = (char)('0' + frac / 100);
	memcpy(p + n + 2, ss_chrome_digits2 + (frac % 100) * 2, 2);
	return n + 4;
}

#endif /* SS_CHROME_H */
