/*
 * export-nop.c - callbacks that do nothing, for exporters that want only
 * some of export.h's (an analysis fed by the walk beside the aggregate
 * takes its `alloc`, `gpu` or `slice` only; speedscope ignores counters).
 *
 * How: ss_exporter_nops fills each callback the walk calls without
 * looking (begin, process, thread, slice, counter, end, release) that the
 * exporter left NULL with one that does nothing (begin and end succeed);
 * ss_export_oom_end is the `end` answer of an exporter that only fails
 * when it ran out of memory.
 *
 * Never: replace a callback that is set, or fill the optional ones (open,
 * stack_nodes, gpu, offcpu, alloc), whose NULL tells the walk not to feed
 * them (nor to read what they would need).
 */
#include "export.h"

static int nop_begin(void *ctx, uint64_t t0_ns)
{
	(void)ctx, (void)t0_ns;
	return 0;
}

static void nop_process(void *ctx, uint64_t pid, const char *name)
{
	(void)ctx, (void)pid, (void)name;
}

static void nop_thread(void *ctx, uint64_t pid, uint64_t tid, const char *name)
{
	(void)ctx, (void)pid, (void)tid, (void)name;
}

static void nop_slice(void *ctx, uint64_t pid, uint64_t tid, const struct ss_slice *s)
{
	(void)ctx, (void)pid, (void)tid, (void)s;
}

static void nop_counter(void *ctx, uint64_t pid, const char *name, uint64_t ns, double v)
{
	(void)ctx, (void)pid, (void)name, (void)ns, (void)v;
}

static int nop_end(void *ctx, char *err, size_t errlen)
{
	(void)ctx, (void)err, (void)errlen;
	return 0;
}

static void nop_release(void *ctx)
{
	(void)ctx;
}

void ss_exporter_nops(struct ss_exporter *e)
{
	if (!e->begin)
		e->begin = nop_begin;
	if (!e->process)
		e->process = nop_process;
	if (!e->thread)
		e->thread = nop_thread;
	if (!e->slice)
		e->slice = nop_slice;
	if (!e->counter)
		e->counter = nop_counter;
	if (!e->end)
		e->end = nop_end;
	if (!e->release)
		e->release = nop_release;
}

int ss_export_oom_end(int oom, char *err, size_t errlen)
{
	if (!oom)
		return 0;
	snprintf(err, errlen, "out of memory");
	return -1;
}
