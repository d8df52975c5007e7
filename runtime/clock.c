/*
 * clock.c - the runtime's clock: the invariant TSC (or aarch64's virtual
 * counter) when it can be trusted, else CLOCK_MONOTONIC in nanoseconds.
 *
 * Raw ticks go into the trace; the symbolizer converts them offline using
 * calibration pairs (ticks, CLOCK_MONOTONIC ns) read back to back: one in the
 * file header, one in every chunk header, one at exit.  The first estimate
 * of the tick rate costs about 2 ms at start-up, once per process.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "internal.h"

uint64_t ss_clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t ss_clock_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A (ticks, ns) pair: the ns read bracketed by two tick reads, keeping the
 * tightest of a few tries so a preemption in between does not skew it. */
void ss_clock_pair(uint64_t *ticks, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 3; i++) {
		uint64_t a = ss_clock_now();
		uint64_t n = ss_clock_mono_ns();
		uint64_t b = ss_clock_now();
		if (b - a < best) {
			best = b - a;
			*ticks = a + (b - a) / 2;
			*ns = n;
		}
		if (!ss_hot.use_tsc)
			break;
	}
}

static int tsc_trustworthy(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000007 &&
	    __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)))
		return 1;
	/* Some hypervisors hide the invariant-TSC bit but the kernel still
	 * chose the TSC as its clocksource after checking it. */
	int fd = open("/sys/devices/system/clocksource/clocksource0/"
		      "current_clocksource", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		char buf[32] = "";
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		return n >= 3 && !strncmp(buf, "tsc", 3);
	}
	return 0;
#elif defined(__aarch64__)
	return 1;
#else
	return 0;
#endif
}

void ss_clock_init(struct ss_file_header *h)
{
	ss_hot.use_tsc = tsc_trustworthy() && !secure_getenv("STEPSCOPE_CLOCK_MONOTONIC");
	h->clock = ss_hot.use_tsc ? SS_CLOCK_TSC : SS_CLOCK_MONOTONIC;
	if (ss_hot.use_tsc)
		h->flags |= SS_FILE_TSC_INVARIANT;
	uint64_t t0, n0, t1, n1;
	ss_clock_pair(&t0, &n0);
	if (ss_hot.use_tsc) {
		/* spin ~2 ms for a first rate estimate */
		do
			ss_clock_pair(&t1, &n1);
		while (n1 - n0 < 2000000);
		h->ticks_per_sec = (uint64_t)((double)(t1 - t0) * 1e9 / (double)(n1 - n0));
	} else {
		t1 = t0;
		n1 = n0;
		h->ticks_per_sec = 1000000000ull;
	}
	h->calib_ticks = t1;
	h->calib_ns = n1;
	h->realtime_ns = ss_clock_realtime_ns() - (ss_clock_mono_ns() - n1);
}
