/*
 * filter.h - the part of filter.c the hooks inline: is this function left
 * out (filter.exclude / filter.exclude_file)?  One multiply and, mostly,
 * one probe of an open-addressing table built before main and never
 * changed after; the counters of include and max_depth stay in filter.c.
 * Included by hooks.c and filter.c only.
 */
#ifndef SS_FILTER_H
#define SS_FILTER_H

#include <stddef.h>
#include <stdint.h>

#define SS_FILTER_EXCLUDE 1u
#define SS_FILTER_INCLUDE 2u

struct ss_filter_slot {
	uintptr_t addr;          /* 0: empty */
	uintptr_t kind;          /* SS_FILTER_EXCLUDE | SS_FILTER_INCLUDE */
};

extern struct ss_filter_slot *ss_filter_table __attribute__((visibility("hidden")));
extern unsigned ss_filter_bits __attribute__((visibility("hidden")));
extern size_t ss_filter_used __attribute__((visibility("hidden")));
extern int ss_filter_stateful __attribute__((visibility("hidden")));

int ss_filter_depth_enter(void *fn, unsigned kind) __attribute__((visibility("hidden")));
int ss_filter_depth_exit(void *fn, unsigned kind) __attribute__((visibility("hidden")));

static inline size_t ss_filter_hash(uintptr_t a, unsigned bits)
{
	return (size_t)(((uint64_t)a * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

static inline unsigned ss_filter_kind(uintptr_t a)
{
	if (!ss_filter_used)
		return 0;
	size_t mask = ((size_t)1 << ss_filter_bits) - 1;
	for (size_t i = ss_filter_hash(a, ss_filter_bits);; i = (i + 1) & mask) {
		if (ss_filter_table[i].addr == a)
			return (unsigned)ss_filter_table[i].kind;
		if (!ss_filter_table[i].addr)
			return 0;
	}
}

/* cost.c: the calls a filter left out, counted per thread and added to a
 * shared count every 4096 (their hooks ran: recording's cost) */
extern __thread uint32_t ss_cost_skips __attribute__((tls_model("initial-exec")));
extern __thread uint32_t ss_cost_backs __attribute__((tls_model("initial-exec")));
void ss_cost_skips_flush(void);
void ss_cost_backs_flush(void);
static inline int ss_filter_skipped(void)
{
	if (__builtin_expect(++ss_cost_skips >= 4096, 0))
		ss_cost_skips_flush();
	return 1;
}

/* 1: this ENTER is not recorded (nor, by ss_filter_skip_exit, its EXIT) */
static inline int ss_filter_skip_enter(void *fn)
{
	unsigned kind = ss_filter_kind((uintptr_t)fn);
	if (kind & SS_FILTER_EXCLUDE)
		return ss_filter_skipped();
	return ss_filter_stateful && ss_filter_depth_enter(fn, kind) ? ss_filter_skipped() : 0;
}

static inline int ss_filter_skip_exit(void *fn)
{
	unsigned kind = ss_filter_kind((uintptr_t)fn);
	if (kind & SS_FILTER_EXCLUDE)
		return 1;
	return ss_filter_stateful ? ss_filter_depth_exit(fn, kind) : 0;
}

static inline int ss_filter_excluded(void *fn)
{
	return (ss_filter_kind((uintptr_t)fn) & SS_FILTER_EXCLUDE) != 0;
}

#endif /* SS_FILTER_H */
