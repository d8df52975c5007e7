/*
 * test-advise-mpi.c - the "mpi" check of `stepscope advise` end to end:
 * `mpirun --oversubscribe -np 2` of tests/e2e/s-advise-mpi.c, where rank
 * 1's forward_shard does 3 units of work a step and rank 0's 1 (each unit
 * 15 ms of spinning on the clock), so rank 0 waits 30 ms a step in
 * MPI_Allreduce.
 *
 * Checks: the first finding of advise is the mpi check's, naming rank 1
 * and forward_shard; the advice applied (the shards balanced: 1 unit
 * each) makes the median step faster by the predicted saving within a
 * factor of 2 (medians of 15 steps of 2 ranks; the planted 30 ms is half
 * the step, far above what 2 shared cores add); the balanced run has no
 * mpi finding above 5% of its step.  Skipped, saying why, without mpicc,
 * mpirun or libstepscope-mpi.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "advise.h"
#include "e2e.h"

#define MPIRUN "mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np 2"
#define STEPS 16

/* a strong reference: the check's object is taken from the archive */
extern const struct ss_adv_check ss_adv_check_mpi;

/* Record s-advise-mpi with rank 1 doing skew units into run. */
static void record(struct ss_e2e *t, const char *run, int skew)
{
	SS_E2E_SH_OK(t, MPIRUN " \"$SS_E2E_BUILD/bin/stepscope\" record -o %s "
		     "--set step.function=train_step -- ./s-advise-mpi %d %d", run, STEPS, skew);
}

/* advise on run, in this process: 0 or fails the test */
static void advise(struct ss_e2e *t, const char *run, struct ss_adv_result *r)
{
	char dir[4200], err[2048] = "";
	snprintf(dir, sizeof(dir), "%s/%s", t->dir, run);
	int rc = ss_adv_build(dir, NULL, 1, r, err, sizeof(err));
	SS_E2E_CHECK(t, rc == 0, "advise %s: status %d: %s", run, rc, err);
	for (size_t i = 0; i < r->found.n; i++)
		fprintf(stderr, "  %s: [%s] saves %.3f ms: %s\n", run, r->found.v[i].check,
			r->found.v[i].save_ns / 1e6, r->found.v[i].title);
}

/* The largest saving of check's findings in r (0: none). */
static double biggest(const struct ss_adv_result *r, const char *check)
{
	double best = 0;
	for (size_t i = 0; i < r->found.n; i++)
		if (!strcmp(r->found.v[i].check, check) && r->found.v[i].save_ns > best)
			best = r->found.v[i].save_ns;
	return best;
}

static void test_advise_mpi(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_adv_result bad, good;

	if (system("command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1") ||
	    access(SS_BUILD_DIR "/lib/libstepscope-mpi.so", R_OK))
		ss_e2e_skip(t, "mpicc, mpirun or %s missing (apt-get install openmpi-bin "
			    "libopenmpi-dev, then make)", SS_BUILD_DIR "/lib/libstepscope-mpi.so");
	SS_E2E_CHECK(t, ss_adv_check_mpi.judge != NULL, "the mpi check is not built in");
	ss_e2e_build(t, "advise-mpi", "$(mpicc -showme:compile) $(mpicc -showme:link)");

	record(t, "bad", 3);
	advise(t, "bad", &bad);
	SS_E2E_CHECK(t, bad.found.n > 0, "planted straggler: advise found nothing");
	const struct ss_adv_finding *f = &bad.found.v[0];
	SS_E2E_CHECK(t, !strcmp(f->check, "mpi"), "planted straggler: first finding is %s's (%s), "
		     "expected mpi's", f->check, f->title);
	SS_E2E_CHECK(t, strstr(f->title, "rank 1 is the straggler") != NULL,
		     "title '%s': expected rank 1 named the straggler", f->title);
	SS_E2E_CHECK(t, f->nfuncs >= 1 && !strcmp(f->funcs[0], "forward_shard") &&
			     strstr(f->evidence, "forward_shard takes ") != NULL,
		     "expected forward_shard named as the operator, got '%s' (evidence: %s)",
		     f->nfuncs ? f->funcs[0] : "", f->evidence);
	SS_E2E_CHECK(t, strstr(f->evidence, "MPI_Allreduce") != NULL,
		     "evidence: expected the collective named: %s", f->evidence);
	double predicted = f->save_ns;

	/* the advice applied: the same work on every rank */
	record(t, "good", 1);
	advise(t, "good", &good);
	double left = biggest(&good, "mpi");
	SS_E2E_CHECK(t, left <= 0.05 * (double)good.run.median_step_ns,
		     "balanced run: an mpi finding of %.3f ms, median step %.3f ms", left / 1e6,
		     (double)good.run.median_step_ns / 1e6);
	double measured = (double)bad.run.median_step_ns - (double)good.run.median_step_ns;
	fprintf(stderr, "  median step %.3f ms -> %.3f ms: saved %.3f ms, predicted %.3f ms\n",
		(double)bad.run.median_step_ns / 1e6, (double)good.run.median_step_ns / 1e6,
		measured / 1e6, predicted / 1e6);
	SS_E2E_CHECK(t, measured > 0 && predicted <= 2 * measured && measured <= 2 * predicted,
		     "saved %.3f ms, predicted %.3f ms: not within a factor of 2", measured / 1e6,
		     predicted / 1e6);
	ss_adv_release(&bad);
	ss_adv_release(&good);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_advise_mpi),
	};
	/* OpenMPI refuses root without these; harmless otherwise */
	setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
	setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
