/*
 * test-advise-mpi.c - the "mpi" check of `stepscope advise` end to end:
 * `mpirun --oversubscribe -np 2` of tests/e2e/s-advise-mpi.c, where rank
 * 1's forward_shard does 3 units of work a step and rank 0's 1 (each unit
 * 25 ms of spinning on the clock), so rank 0 waits 50 ms a step in
 * MPI_Allreduce.
 *
 * Checks: the first finding of advise is the mpi check's, naming rank 1
 * and forward_shard; the advice applied (the shards balanced: 1 unit
 * each) makes the median step faster by the predicted saving within a
 * factor of 2 (medians of 15 steps of 2 ranks; the planted 50 ms is half
 * the step, far above what 2 shared cores add); the balanced run has no
 * mpi finding above 5% of its step; every step's categories add up to it
 * (tests/lib/e2e-advise.c).  Skipped, saying why, without mpicc,
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
#include <cjson/cJSON.h>

#include "e2e-advise.h"

#define MPIRUN "mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np 2"
#define STEPS 16

/* Record s-advise-mpi with rank 1 doing skew units into run. */
static void record(struct ss_e2e *t, const char *run, int skew)
{
	SS_E2E_SH_OK(t, MPIRUN " \"$SS_E2E_BUILD/bin/stepscope\" record -o %s "
		     "--set step.function=train_step -- ./s-advise-mpi %d %d", run, STEPS, skew);
}

static void test_advise_mpi(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	if (system("command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1") ||
	    access(SS_BUILD_DIR "/lib/libstepscope-mpi.so", R_OK))
		ss_e2e_skip(t, "mpicc, mpirun or %s missing (apt-get install openmpi-bin "
			    "libopenmpi-dev, then make)", SS_BUILD_DIR "/lib/libstepscope-mpi.so");
	ss_e2e_build(t, "advise-mpi", "$(mpicc -showme:compile) $(mpicc -showme:link)");

	record(t, "bad", 3);
	cJSON *bad = ss_e2e_advise_show(t, "bad");
	const cJSON *f = ss_e2e_advise_first(t, bad, "planted straggler", "mpi");
	const char *title = ss_e2e_advise_str(f, "title");
	const char *ev = ss_e2e_advise_str(f, "evidence");
	SS_E2E_CHECK(t, strstr(title, "rank 1 is the straggler") != NULL,
		     "title '%s': expected rank 1 named the straggler", title);
	SS_E2E_CHECK(t, ss_e2e_advise_names(f, "forward_shard") &&
			     strstr(ev, "forward_shard takes ") != NULL,
		     "expected forward_shard named as the operator (evidence: %s)", ev);
	SS_E2E_CHECK(t, strstr(ev, "MPI_Allreduce") != NULL,
		     "evidence: expected the collective named: %s", ev);
	double predicted = ss_e2e_advise_num(f, "save_ns");

	/* the advice applied: the same work on every rank */
	record(t, "good", 1);
	cJSON *good = ss_e2e_advise_show(t, "good");
	ss_e2e_advise_saved(t, bad, good, "mpi", "balanced run", predicted);
	cJSON_Delete(bad);
	cJSON_Delete(good);
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
