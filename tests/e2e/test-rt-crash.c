/*
 * test-rt-crash.c - end to end: nothing recorded is lost however the
 * process ends.  s-rt-crash makes the same calls, then ends by exit(),
 * return from main, _exit(), abort(), SIGSEGV, SIGBUS, SIGKILL or the OOM
 * killer (a memory cgroup of 64 MiB; skipped, saying why, where none can
 * be made: not root, or no memory controller under /sys/fs/cgroup), while
 * a second thread waits in pause().  Each trace must hold every call made
 * before the end, nested, with the frames open at the end marked clipped
 * or unwound.  Then the two ways recording stops early: the
 * size cap (max_trace_mb) and a full disk (a 2 MiB tmpfs mounted by the
 * test; skipped unless it can mount): one warning, an SS_EV_STOP marker in
 * the raw trace, and the program runs to its end.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e.h"
#include "e2e-raw.h"
#include "reader.h"

struct mode {
	const char *name;
	int status;      /* of `stepscope record` */
	int unwound;     /* open frames must be unwound (exit), else clipped */
	int returns;     /* nothing is left open on the main thread */
};

static const struct mode modes[] = {
	{ "return", 0, 0, 1 }, { "exit", 0, 1, 0 },   { "_exit", 0, 0, 0 },
	{ "abort", 134, 0, 0 }, { "segv", 139, 0, 0 }, { "bus", 135, 0, 0 },
	{ "kill", 137, 0, 0 },
};

static void check_crash_trace(struct ss_e2e *t, struct ss_e2e_trace *tr,
			      const struct mode *m, long bystander)
{
	SS_E2E_EXPECT_NESTED(t, tr);
	const struct ss_e2e_slice *mn = ss_e2e_find(tr, "main", 0);
	SS_E2E_CHECK(t, mn, "%s: no slice for main", m->name);
	int64_t tid = mn->tid;
	SS_E2E_EXPECT_CALLS(t, tr, "main", tid, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "outer", tid, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "middle", tid, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "work", tid, 100);
	SS_E2E_EXPECT_CALLS(t, tr, "die", tid, 1);
	SS_E2E_EXPECT_INSIDE(t, tr, "outer", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "middle", "outer");
	SS_E2E_EXPECT_INSIDE(t, tr, "work", "middle");
	SS_E2E_EXPECT_INSIDE(t, tr, "die", "middle");
	SS_E2E_EXPECT_CALLS(t, tr, "spinner", bystander, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "idle", bystander, 1);
	SS_E2E_EXPECT_INSIDE(t, tr, "idle", "spinner");
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, 106);
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		int open = s->tid == bystander ||
			   (!m->returns && strcmp(s->name, "work"));
		unsigned want = s->tid == bystander || !m->unwound
					? SS_E2E_CLIPPED_END | SS_E2E_UNWOUND
					: SS_E2E_UNWOUND;
		SS_E2E_CHECK(t, open ? (s->flags & want) != 0 : s->flags == 0,
			     "%s: '%s' on %lld: expected %s, got flags 0x%x",
			     m->name, s->name, (long long)s->tid,
			     open ? (want == SS_E2E_UNWOUND ? "unwound"
							    : "clipped end or unwound")
				  : "no flags",
			     s->flags);
	}
}

static long bystander_tid(struct ss_e2e *t)
{
	const char *p = strstr(t->out, "bystander ");
	long v = 0;
	if (!p || sscanf(p, "bystander %ld", &v) != 1)
		SS_E2E_FAIL(t, "fixture did not print \"bystander TID\": %s", t->out);
	return v;
}

static void run_mode(struct ss_e2e *t, const struct mode *m, const char *prefix)
{
	char rundir[64];
	snprintf(rundir, sizeof(rundir), "rec-%s", m->name);
	int st = ss_e2e_sh(t, "%s\"$SS_E2E_BUILD/bin/stepscope\" record -o %s -- "
			   "./s-rt-crash %s", prefix, rundir, m->name);
	SS_E2E_EXPECT_STATUS(t, st, m->status);
	long by = bystander_tid(t);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, rundir);
	check_crash_trace(t, tr, m, by);
	/* the loaded traces are kept until the end of the test: make room */
	ss_e2e_trace_release(tr);
	free(tr);
	t->ntraces--;
}

static void test_crash(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-crash", NULL);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		run_mode(t, &modes[i], "");
	ss_e2e_pass(t);
}

/* The OOM killer: the run inside a 64 MiB memory cgroup (v1 or v2). */
static void test_oom(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char cg[256] = "";
	const char *roots[] = { "/sys/fs/cgroup/memory", "/sys/fs/cgroup/unified",
				"/sys/fs/cgroup" };
	const char *limit = NULL;
	for (size_t i = 0; i < 3 && !cg[0]; i++) {
		char probe[300];
		snprintf(cg, sizeof(cg), "%s/ss-e2e-%d", roots[i], (int)getpid());
		if (mkdir(cg, 0755)) {
			cg[0] = 0;
			continue;
		}
		snprintf(probe, sizeof(probe), "%s/memory.limit_in_bytes", cg);
		limit = "memory.limit_in_bytes";
		if (access(probe, W_OK)) {
			snprintf(probe, sizeof(probe), "%s/memory.max", cg);
			limit = "memory.max";
		}
		if (access(probe, W_OK)) {
			rmdir(cg);
			cg[0] = 0;
		}
	}
	if (!cg[0])
		ss_e2e_skip(t, "test_oom: no writable memory cgroup under "
			    "/sys/fs/cgroup (needs root and the memory "
			    "controller mounted); SIGKILL is covered by test_crash");
	ss_e2e_build(t, "rt-crash", NULL);
	SS_E2E_SH_OK(t, "echo %d > %s/%s && (echo 0 > %s/memory.swappiness || true) "
			">/dev/null 2>&1", 64 << 20, cg, limit, cg);
	char prefix[400];
	snprintf(prefix, sizeof(prefix), "echo $$ > %s/cgroup.procs && exec ", cg);
	static const struct mode oom = { "oom", 137, 0, 0 };
	int st = ss_e2e_sh(t, "sh -c '%s\"$SS_E2E_BUILD/bin/stepscope\" record -o rec-oom "
			   "-- ./s-rt-crash oom'", prefix);
	rmdir(cg);
	SS_E2E_EXPECT_STATUS(t, st, oom.status);
	long by = bystander_tid(t);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec-oom");
	check_crash_trace(t, tr, &oom, by);
	ss_e2e_pass(t);
}

/* The raw trace in DIR holds an SS_EV_STOP with `reason`. */
struct stops {
	unsigned reason;
	int found, n;
};

static void count_stop(void *arg, uint64_t tid, const struct ss_revent *ev)
{
	struct stops *s = arg;
	(void)tid;
	if (ev->kind == SS_EV_STOP) {
		s->n++;
		s->found |= ev->arg == s->reason;
	}
}

static void expect_stop(struct ss_e2e *t, const char *dir, unsigned reason)
{
	struct stops s = { reason, 0, 0 };
	ss_e2e_raw_events(t, dir, 0, count_stop, &s);
	SS_E2E_CHECK(t, s.found && s.n == 1,
		     "%s: expected one STOP marker with reason %u, got %d", dir,
		     reason, s.n);
}

static void expect_stopped_run(struct ss_e2e *t, const char *rundir,
			       const char *what, unsigned reason)
{
	SS_E2E_CHECK(t, strstr(t->out, "done"),
		     "the program must run to its end after recording stopped; "
		     "stdout: %s", t->out);
	int warnings = 0;
	for (const char *p = t->err; (p = strstr(p, "recording stopped")); p++)
		warnings++;
	SS_E2E_CHECK(t, warnings == 1 && strstr(t->err, what),
		     "expected one \"%s ... recording stopped\" warning, got %d: %s",
		     what, warnings, t->err);
	expect_stop(t, rundir, reason);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, rundir);
	SS_E2E_EXPECT_NESTED(t, tr);
	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "middle", 0, 1);
	/* everything before the stop, in order: work slices and then the
	 * frames open at the stop, clipped there */
	size_t works = ss_e2e_count(tr, "work", "function", 0);
	SS_E2E_CHECK(t, works > 1000 && works < 4000000,
		     "expected some but not all 4000000 work calls, got %zu", works);
	const struct ss_e2e_slice *mid = ss_e2e_find(tr, "middle", 0);
	SS_E2E_CHECK(t, mid->flags & SS_E2E_CLIPPED_END,
		     "middle: expected clipped end at the stop, got 0x%x", mid->flags);
}

static void test_size_cap(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "rt-crash", NULL);
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o rec "
			   "--set max_trace_mb=2 --set buffer_kb=64 -- ./s-rt-crash cap 4000000");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	expect_stopped_run(t, "rec", "max_trace_mb=2", SS_STOP_SIZE_CAP);
	struct stat sb;
	char path[256];
	SS_E2E_SH_OK(t, "ls \"$PWD\"/rec/*.sstrace | head -1 > name.txt");
	char nf[4200];
	snprintf(nf, sizeof(nf), "%s/name.txt", t->dir);
	FILE *f = fopen(nf, "r");
	if (f && fgets(path, sizeof(path), f)) {
		path[strcspn(path, "\n")] = 0;
		SS_E2E_CHECK(t, !stat(path, &sb) && sb.st_size <= (3 << 20),
			     "%s: expected at most 3 MiB (cap 2 MiB + meta), got %lld",
			     path, (long long)sb.st_size);
	}
	if (f)
		fclose(f);
	ss_e2e_pass(t);
}

static void test_disk_full(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	if (geteuid() != 0)
		ss_e2e_skip(t, "test_disk_full: mounting a small tmpfs needs root");
	ss_e2e_build(t, "rt-crash", NULL);
	if (ss_e2e_sh(t, "mkdir -p small && mount -t tmpfs -o size=2m tmpfs small"))
		ss_e2e_skip(t, "test_disk_full: cannot mount a tmpfs: %s", t->err);
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o small/rec "
			   "--set buffer_kb=64 -- ./s-rt-crash cap 4000000");
	/* the trace is read from a copy: the tmpfs goes before the checks */
	char *out = strdup(t->out), *err = strdup(t->err);
	ss_e2e_sh(t, "cp -r small/rec rec; umount small");
	free(t->out);
	free(t->err);
	t->out = out;
	t->err = err;
	SS_E2E_EXPECT_STATUS(t, st, 0);
	expect_stopped_run(t, "rec", "No space left on device", SS_STOP_DISK_FULL);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_crash),
		SS_E2E_TEST(test_oom),
		SS_E2E_TEST(test_size_cap),
		SS_E2E_TEST(test_disk_full),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
