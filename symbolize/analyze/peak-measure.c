/*
 * peak-measure.c - the machine's peak for `stepscope advise`'s "peak"
 * check (peak-measure.h).
 *
 * Design: the compute peak is one core's rate in a loop of 10 independent
 * vector accumulators, each updated by a multiply-add per iteration (more
 * than the FMA latency times the units, so the loop is throughput-bound):
 * with AVX2 and FMA when the CPU has them (8 floats a vector), else with
 * the baseline 4-float vectors.  The memory peak is a triad a = b + s * c
 * over three arrays of 32 MiB each (written once first, so no page fault
 * is timed), counting 24 bytes per element.  Best of 5 runs each: a
 * peak, not a typical rate.  The whole takes about half a second; its
 * result goes to ${XDG_CACHE_HOME:-~/.cache}/stepscope/peak-<cpu>-<n>.txt
 * (cpu: /proc/cpuinfo's model name, n: the online CPUs), read next time.
 *
 * Must never: trust a cache file it cannot parse (it measures again and
 * rewrites it), or fail advise because the cache dir cannot be written.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "peak-measure.h"

#define SS_PEAK_ACC 10
#define SS_PEAK_ITERS 2000000
#define SS_PEAK_STREAM (4u << 20)  /* doubles an array: 32 MiB */

typedef float ss_v8 __attribute__((vector_size(32)));
typedef float ss_v4 __attribute__((vector_size(16)));

static double ss_peak_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* keep the accumulators in vector registers, the loop not folded away */
#if defined(__x86_64__)
#define SS_PEAK_KEEP(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9)                     \
	__asm__("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), \
		"+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9))
#else
#define SS_PEAK_KEEP(...) __asm__ volatile("" : : : "memory")
#endif

/* 10 accumulators in registers, each a multiply-add per iteration */
#define SS_PEAK_LOOP(T, m, c, iters, out)                                           \
	do {                                                                     \
		T a0 = m, a1 = m + c, a2 = m + 2 * c, a3 = m + 3 * c, a4 = m + 4 * c; \
		T a5 = m + 5 * c, a6 = m + 6 * c, a7 = m + 7 * c, a8 = m + 8 * c;     \
		T a9 = m + 9 * c;                                                 \
		for (long it = 0; it < (iters); it++) {                            \
			a0 = a0 * m + c, a1 = a1 * m + c, a2 = a2 * m + c;         \
			a3 = a3 * m + c, a4 = a4 * m + c, a5 = a5 * m + c;         \
			a6 = a6 * m + c, a7 = a7 * m + c, a8 = a8 * m + c;         \
			a9 = a9 * m + c;                                           \
			SS_PEAK_KEEP(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9);      \
		}                                                                \
		out = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9;            \
	} while (0)

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) static double ss_peak_fma8(long iters)
{
	ss_v8 m, c, s;

	for (int i = 0; i < 8; i++)
		m[i] = 0.999999f, c[i] = 1e-7f;
	SS_PEAK_LOOP(ss_v8, m, c, iters, s);
	__asm__ volatile("" : : "x"(s));
	return (double)iters * SS_PEAK_ACC * 8 * 2;
}
#endif

static double ss_peak_fma4(long iters)
{
	ss_v4 m = { 0.999999f, 0.999999f, 0.999999f, 0.999999f }, c = { 1e-7f, 1e-7f, 1e-7f, 1e-7f },
	      s;

	SS_PEAK_LOOP(ss_v4, m, c, iters, s);
	__asm__ volatile("" : : "g"(s[0] + s[1] + s[2] + s[3]));
	return (double)iters * SS_PEAK_ACC * 4 * 2;
}

static int ss_peak_have_avx2(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
	return 0;
#endif
}

static double ss_peak_compute(char *isa, size_t len)
{
	int wide = ss_peak_have_avx2();
	double best = 0;

	snprintf(isa, len, "%s", wide ? "avx2+fma" : "vector4");
	for (int r = 0; r < 5; r++) {
		double t0 = ss_peak_now(), fl;
#if defined(__x86_64__)
		fl = wide ? ss_peak_fma8(SS_PEAK_ITERS) : ss_peak_fma4(SS_PEAK_ITERS);
#else
		fl = ss_peak_fma4(SS_PEAK_ITERS);
#endif
		double t = ss_peak_now() - t0;
		if (t > 0 && fl / t / 1e9 > best)
			best = fl / t / 1e9;
	}
	return best;
}

/* GB/s of the triad, or -1 out of memory */
static double ss_peak_stream(void)
{
	size_t n = SS_PEAK_STREAM;
	double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)),
	       *c = malloc(n * sizeof(double)), best = 0;

	if (!a || !b || !c) {
		free(a), free(b), free(c);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		a[i] = 0;
		b[i] = (double)i;
		c[i] = 1.0 / (double)(i + 1);
	}
	for (int r = 0; r < 5; r++) {
		double t0 = ss_peak_now();
		for (size_t i = 0; i < n; i++)
			a[i] = b[i] + 0.5 * c[i];
		__asm__ volatile("" : : "r"(a) : "memory");
		double t = ss_peak_now() - t0;
		if (t > 0 && 3.0 * sizeof(double) * (double)n / t / 1e9 > best)
			best = 3.0 * sizeof(double) * (double)n / t / 1e9;
	}
	free(a), free(b), free(c);
	return best;
}

/* The cache file's path for this machine in p->path ("" when no home) */
static void ss_peak_path(struct ss_peak *p, char *dir, size_t dirlen)
{
	char model[128] = "unknown", line[512];
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	FILE *f = fopen("/proc/cpuinfo", "r");
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	while (f && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');
		if (strncmp(line, "model name", 10) || !c)
			continue;
		snprintf(model, sizeof(model), "%s", c + 1 + (c[1] == ' '));
		break;
	}
	if (f)
		fclose(f);
	for (char *m = model; *m; m++)
		if (!isalnum((unsigned char)*m))
			*m = '-';
	p->path[0] = dir[0] = 0;
	if (xdg && xdg[0] == '/')
		snprintf(dir, dirlen, "%s/stepscope", xdg);
	else if (home && home[0])
		snprintf(dir, dirlen, "%s/.cache/stepscope", home);
	else
		return;
	snprintf(p->path, sizeof(p->path), "%.3900s/peak-%.100s-%ld.txt", dir, model, ncpu);
}

static int ss_peak_read(struct ss_peak *p)
{
	FILE *f = fopen(p->path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "gflops %lf gbs %lf took_s %lf isa %15s", &p->gflops, &p->gbs, &p->took_s,
		    p->isa) == 4;
	fclose(f);
	if (!ok || !(p->gflops > 0) || !(p->gbs > 0)) {
		fprintf(stderr, "stepscope: %s: not a peak this version wrote; measured again\n",
			p->path);
		return -1;
	}
	return 0;
}

static void ss_peak_write(const struct ss_peak *p, const char *dir)
{
	char tmp[4200];
	FILE *f;

	/* its parent first (~/.cache), then stepscope/ */
	char up[4096];
	snprintf(up, sizeof(up), "%s", dir);
	char *slash = strrchr(up, '/');
	if (slash && slash != up) {
		*slash = 0;
		mkdir(up, 0755);
	}
	if (mkdir(dir, 0755) && errno != EEXIST)
		return;
	snprintf(tmp, sizeof(tmp), "%s.%ld", p->path, (long)getpid());
	if (!(f = fopen(tmp, "w")))
		return;
	fprintf(f, "gflops %.6g\ngbs %.6g\ntook_s %.3f\nisa %s\n", p->gflops, p->gbs, p->took_s,
		p->isa);
	if (fclose(f) || rename(tmp, p->path))
		unlink(tmp);
}

int ss_peak_get(struct ss_peak *p, char *err, size_t errlen)
{
	char dir[4000];
	const char *re = getenv("STEPSCOPE_PEAK_REMEASURE");

	memset(p, 0, sizeof(*p));
	ss_peak_path(p, dir, sizeof(dir));
	if (p->path[0] && !(re && !strcmp(re, "1")) && !ss_peak_read(p)) {
		p->cached = 1;
		return 0;
	}
	double t0 = ss_peak_now();
	p->gflops = ss_peak_compute(p->isa, sizeof(p->isa));
	p->gbs = ss_peak_stream();
	p->took_s = ss_peak_now() - t0;
	if (p->gbs < 0) {
		snprintf(err, errlen, "out of memory measuring the machine's bandwidth");
		return -1;
	}
	if (p->path[0])
		ss_peak_write(p, dir);
	return 0;
}
