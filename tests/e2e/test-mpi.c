/*
 * test-mpi.c - MPI runs end to end (make test installs OpenMPI; a missing mpicc/mpirun fails):
 * `mpirun --oversubscribe -np 4` of tests/e2e/s-mpi.c recorded both ways
 * (`mpirun ... stepscope record` and `stepscope record -- mpirun ...`),
 * each rank named "rank N (host, pid P)" with exactly 5 train_step and 5
 * MPI_Allreduce slices (args: bytes, comm_size), no rank leaving a step's
 * allreduce before the last rank entered it (one clock), and the 20 ms
 * delay injected on rank 2 reported as the straggler; and a two-host
 * merge: the ranks split over two run directories whose traces claim
 * different hosts (one with its wall clock 50 ms off) merged by
 * `stepscope merge` onto one clock, within 1 ms or the barriers' exit skew
 * that run had.
 * How far apart the ranks' allreduce ends lie is the scheduler's (4 ranks
 * on 2 shared cores: 0.02 ms idle, 2-10 ms with both cores busy): printed,
 * not judged (issue 37: with both cores busy 3 runs of 6 failed "within
 * 2 ms in 3 of 5 steps" even recorded 3 times).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e.h"
#include "format.h"
#include "reader.h"

#define MPIRUN "mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np 4"
#define STEPS 5

static int have_mpi(void)
{
	return !system("command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1") &&
	       !access(SS_BUILD_DIR "/lib/libstepscope-mpi.so", R_OK);
}

static void build_mpi(struct ss_e2e *t)
{
	ss_e2e_build(t, "mpi", "$(mpicc -showme:compile) $(mpicc -showme:link)");
}

/* The four ranks of tr: names, exact counts, no rank out of an allreduce
 * before all are in it, give or take slack_ns (what stamping takes, and
 * for merged hosts the error of the merge's offset); how far apart the
 * ends lie is printed. */
static void check_ranks(struct ss_e2e *t, struct ss_e2e_trace *tr, const char *hosts[4],
			int64_t slack_ns)
{
	int64_t pid_of[4] = { 0 };
	SS_E2E_CHECK(t, tr->nprocesses == 4, "expected 4 processes, got %zu", tr->nprocesses);
	for (size_t i = 0; i < tr->nprocesses; i++) {
		unsigned r;
		char host[256], want[300];
		long long pid;
		const char *name = tr->processes[i].name;
		SS_E2E_CHECK(t, name && sscanf(name, "rank %u (%255[^,], pid %lld)", &r, host, &pid) == 3 &&
				     r < 4 && pid == tr->processes[i].pid && !pid_of[r],
			     "process name '%s': expected 'rank N (host, pid P)' once per rank",
			     name ? name : "(none)");
		pid_of[r] = tr->processes[i].pid;
		if (hosts) {
			snprintf(want, sizeof(want), "%s", hosts[r]);
			SS_E2E_CHECK(t, !strcmp(host, want), "rank %u: host '%s', expected '%s'", r,
				     host, want);
		}
	}
	for (int r = 0; r < 4; r++) {
		SS_E2E_EXPECT_CALLS(t, tr, "train_step", pid_of[r], STEPS);
		SS_E2E_EXPECT_COUNT(t, tr, "MPI_Allreduce", "user_range", pid_of[r], STEPS);
	}
	/* One timeline: no rank leaves the k-th allreduce before the last
	 * rank entered it (a clock 50 ms off, or per-process clocks, would
	 * break this).  How far apart the ends lie is printed only: 4 ranks
	 * on 2 cores shared with other work can lose a time slice (~10 ms)
	 * between leaving PMPI_Allreduce and stamping it. */
	for (int k = 0; k < STEPS; k++) {
		int64_t last_in = INT64_MIN, first_out = INT64_MAX, last_out = INT64_MIN;
		for (int r = 0; r < 4; r++) {
			int seen = 0;
			for (size_t i = 0; i < tr->nslices; i++) {
				const struct ss_e2e_slice *s = &tr->slices[i];
				if (s->pid != pid_of[r] || strcmp(s->name, "MPI_Allreduce") ||
				    seen++ != k)
					continue;
				int64_t end = s->ts_ns + s->dur_ns;
				last_in = s->ts_ns > last_in ? s->ts_ns : last_in;
				first_out = end < first_out ? end : first_out;
				last_out = end > last_out ? end : last_out;
			}
		}
		SS_E2E_CHECK(t, first_out + slack_ns >= last_in,
			     "allreduce %d: a rank left %.3f ms before the last rank entered "
			     "(%.3f ms allowed)", k, (double)(last_in - first_out) / 1e6,
			     (double)slack_ns / 1e6);
		fprintf(stderr, "  allreduce %d: ends %.3f ms apart across ranks\n", k,
			(double)(last_out - first_out) / 1e6);
	}
}

/* what a merged run's offset may be off by (ms), the barriers' exit skew
 * its ranks had: record_merge sets it */
static double merge_err_ms;

/* Record (record), symbolize and check the ranks: on one host, one clock
 * and 20 us of stamping; merged hosts, the merge's tolerance too. */
static struct ss_e2e_trace *record_checked(struct ss_e2e *t, void (*record)(struct ss_e2e *t),
					   const char *run, const char *hosts[4])
{
	record(t);
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, run);
	int64_t slack = 20000;
	if (hosts) /* 0.5 ms at least, as before the skew was measured */
		slack += (int64_t)((merge_err_ms > 0.5 ? merge_err_ms : 0.5) * 1e6);
	check_ranks(t, tr, hosts, slack);
	return tr;
}

static size_t count_str(const char *text, const char *needle)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void record_straggler(struct ss_e2e *t)
{
	SS_E2E_SH_OK(t, "SS_DELAY_RANK=2 SS_DELAY_MS=20 " MPIRUN
		     " \"$SS_E2E_BUILD/bin/stepscope\" record -o rec --set step.function=train_step"
		     " -- ./s-mpi");
}

static void test_mpi_ranks_straggler(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_CHECK(t, have_mpi(), "mpicc, mpirun or %s missing: apt-get install openmpi-bin "
		     "libopenmpi-dev, then make (make test installs them)",
		     SS_BUILD_DIR "/lib/libstepscope-mpi.so");
	build_mpi(t);
	/* a rank held 20 ms: the other three wait in MPI_Allreduce, and on 2
	 * cores its wake-up competes with them, so how far apart the ends lie
	 * is the scheduler's (printed, not asserted); that no rank leaves
	 * before the last one entered is checked in every step */
	record_checked(t, record_straggler, "rec", NULL);
	/* args of the MPI slices, as written by the Chrome exporter */
	SS_E2E_SH_OK(t, "cat rec/trace.json");
	SS_E2E_CHECK(t, count_str(t->out, "\"name\":\"MPI_Allreduce\"") == 4 * STEPS &&
			     count_str(t->out, "\"args\":{\"bytes\":4096,\"comm_size\":4}") == 4 * STEPS,
		     "expected %d MPI_Allreduce slices with args bytes=4096 comm_size=4", 4 * STEPS);
	/* Perfetto: the rank names, the args as a debug annotation */
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" symbolize --format perfetto rec");
	if (ss_e2e_sh(t, "command -v protoc") == 0) {
		SS_E2E_SH_OK(t, "protoc --decode_raw < rec/trace.perfetto-trace > pf.txt && "
			     "grep -c '\"bytes=4096 comm_size=4\"' pf.txt && "
			     "grep -c '\"rank [0-3] (.*, pid [0-9]*)\"' pf.txt");
		SS_E2E_CHECK(t, !strcmp(t->out, "20\n4\n"),
			     "perfetto: expected 20 MPI_Allreduce args and 4 rank names, got %s", t->out);
	}
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" report rec --ranks");
	SS_E2E_CHECK(t, strstr(t->out, "4 ranks on 1 host, 5 steps\n") &&
			     strstr(t->out, "slowest rank: 2 ("),
		     "report --ranks: expected 4 ranks, 5 steps and 'slowest rank: 2'");
	for (int k = 0; k < STEPS - 1; k++) { /* the last step also holds MPI_Finalize */
		char want[64];
		snprintf(want, sizeof(want), "  step %d: rank 2 (", k);
		SS_E2E_CHECK(t, strstr(t->out, want), "report --ranks: expected '%s'", want);
	}
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" html rec -o r.html && grep -c '<h2>Ranks</h2>' r.html");
	SS_E2E_CHECK(t, !strcmp(t->out, "1\n"), "html: expected the Ranks section");
	ss_e2e_pass(t);
}

static void record_launcher(struct ss_e2e *t)
{
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -o rec --set step.function=train_step"
		     " -- " MPIRUN " ./s-mpi");
}

/* `stepscope record -- mpirun ...`: the ranks inherit the preloads. */
static void test_mpi_record_launcher(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_CHECK(t, have_mpi(), "mpicc, mpirun or %s missing: apt-get install openmpi-bin "
		     "libopenmpi-dev, then make (make test installs them)",
		     SS_BUILD_DIR "/lib/libstepscope-mpi.so");
	build_mpi(t);
	record_checked(t, record_launcher, "rec", NULL);
	ss_e2e_pass(t);
}

/* Each trace of run directory dir, opened, handed to fn; returns how many
 * there are. */
static int each_trace(struct ss_e2e *t, const char *dir,
		      void (*fn)(struct ss_e2e *, const char *, struct ss_reader *, void *),
		      void *arg)
{
	char cmd[600], path[4600], err[512];
	snprintf(cmd, sizeof(cmd), "ls %s/%s/*.sstrace", t->dir, dir);
	FILE *ls = popen(cmd, "r");
	int n = 0;
	SS_E2E_CHECK(t, ls != NULL, "popen ls");
	while (fgets(path, sizeof(path), ls)) {
		path[strcspn(path, "\n")] = 0;
		struct ss_reader *r = ss_reader_open(path, err, sizeof(err));
		SS_E2E_CHECK(t, r != NULL, "%s", err);
		fn(t, path, r, arg);
		ss_reader_free(r);
		n++;
	}
	pclose(ls);
	return n;
}

struct fake {
	const char *host;
	int64_t shift_ns;
};

static void fake_trace(struct ss_e2e *t, const char *path, struct ss_reader *r, void *arg)
{
	const struct fake *f = arg;
	int fd = open(path, O_WRONLY);
	SS_E2E_CHECK(t, fd >= 0, "cannot open %s", path);
	char name[256] = { 0 };
	snprintf(name, sizeof(name), "%s", f->host);
	SS_E2E_CHECK(t, pwrite(fd, name, sizeof(name), offsetof(struct ss_file_header, hostname)) ==
			     (ssize_t)sizeof(name), "pwrite");
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		struct ss_meta_rank rk;
		if (m.type != SS_META_RANK)
			continue;
		memcpy(&rk, m.data, sizeof(rk));
		rk.real_ns += (uint64_t)f->shift_ns;
		SS_E2E_CHECK(t, pwrite(fd, &rk, sizeof(rk), m.data - r->map) == (ssize_t)sizeof(rk),
			     "pwrite");
	}
	close(fd);
}

/* Rewrite what the traces of dir say about their host: the name, and the
 * wall clock of their rank records moved by shift_ns. */
static void fake_host(struct ss_e2e *t, const char *dir, const char *host, int64_t shift_ns)
{
	struct fake f = { host, shift_ns };
	int n = each_trace(t, dir, fake_trace, &f);
	SS_E2E_CHECK(t, n == 2, "%s: expected 2 traces, got %d", dir, n);
}

/* Per clock-sync round: the first and last exit of a rank from its
 * barrier (rounds 0-4 at MPI_Init in slots 0-4, 1000-1004 at
 * MPI_Finalize in 8-12). */
struct exits {
	uint64_t lo[16], hi[16];
	int seen[16];
};

static void sync_exits(struct ss_e2e *t, const char *path, struct ss_reader *r, void *arg)
{
	struct exits *x = arg;
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	(void)t, (void)path;
	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		struct ss_meta_sync sy;
		if (m.type != SS_META_SYNC || m.len < sizeof(sy))
			continue;
		memcpy(&sy, m.data, sizeof(sy));
		uint64_t k = sy.round < 1000 ? sy.round : sy.round - 1000 + 8;
		uint64_t ns = ss_reader_ns(r, m.ts);
		if (k >= 16)
			continue;
		if (!x->seen[k] || ns < x->lo[k])
			x->lo[k] = ns;
		if (!x->seen[k] || ns > x->hi[k])
			x->hi[k] = ns;
		x->seen[k] = 1;
	}
}

/* The barrier exit skew this run had: its ranks ran on this one host, on
 * one CLOCK_MONOTONIC, so per clock-sync round the last rank's exit minus
 * the first's; the largest over the rounds, in ms.  The merge's offset is
 * the median of per-round differences each within that round's skew, so
 * it is off by no more than this (docs/mpi.md, Accuracy): 0.05-0.6 ms
 * for 4 ranks on 2 idle cores, 1-8 ms with both cores busy. */
static double sync_skew_ms(struct ss_e2e *t)
{
	struct exits x = { .seen = { 0 } };
	double skew = 0;
	each_trace(t, "host0", sync_exits, &x);
	each_trace(t, "host1", sync_exits, &x);
	for (int k = 0; k < 16; k++)
		if (x.seen[k] && (double)(x.hi[k] - x.lo[k]) / 1e6 > skew)
			skew = (double)(x.hi[k] - x.lo[k]) / 1e6;
	return skew;
}

/* ranks 0, 1 write host0/, ranks 2, 3 host1/: one directory per host,
 * made to look like two hosts, merged */
static void record_merge(struct ss_e2e *t)
{
	SS_E2E_SH_OK(t, MPIRUN " sh -c '\"$SS_E2E_BUILD/bin/stepscope\" record"
		     " -o host$((OMPI_COMM_WORLD_RANK / 2)) --set step.function=train_step -- ./s-mpi'");
	fake_host(t, "host0", "node-a", 0);
	fake_host(t, "host1", "node-b", 50000000); /* its wall clock 50 ms ahead */
	/* within 1 ms, or the run's own barrier exit skew where that is more */
	double skew = sync_skew_ms(t), tol = skew + 0.05 > 1 ? skew + 0.05 : 1;
	merge_err_ms = skew + 0.05; /* check_ranks allows it to merged ranks */
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" merge host0 host1 -o run");
	SS_E2E_EXPECT_STATUS(t, st, 0);
	const char *off = strstr(t->err, "host node-b: clock offset ");
	double ms = off ? atof(off + strlen("host node-b: clock offset ")) : 0;
	SS_E2E_CHECK(t, off && ms > -50 - tol && ms < -50 + tol &&
			     strstr(t->err, "host node-a: reference clock") &&
			     strstr(t->err, "merged 4 trace(s) from 2 host(s) into run"),
		     "merge: expected node-a the reference, node-b's offset -50 ms within %.3f ms "
		     "(got %.3f; the barriers' exit skew was %.3f ms) and 4 traces from 2 hosts",
		     tol, ms, skew);
	print_message("  merge: node-b's offset %.3f ms (barrier exit skew %.3f ms)\n", ms, skew);
}

static void test_mpi_merge_two_hosts(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	SS_E2E_CHECK(t, have_mpi(), "mpicc, mpirun or %s missing: apt-get install openmpi-bin "
		     "libopenmpi-dev, then make (make test installs them)",
		     SS_BUILD_DIR "/lib/libstepscope-mpi.so");
	build_mpi(t);
	const char *hosts[4] = { "node-a", "node-a", "node-b", "node-b" };
	record_checked(t, record_merge, "run", hosts);
	/* a second merge into the same RUN is refused */
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" merge host0 -o run");
	SS_E2E_EXPECT_STATUS(t, st, 2);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_mpi_ranks_straggler),
		SS_E2E_TEST(test_mpi_record_launcher),
		SS_E2E_TEST(test_mpi_merge_two_hosts),
	};
	/* OpenMPI refuses root without these; harmless otherwise */
	setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
	setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
