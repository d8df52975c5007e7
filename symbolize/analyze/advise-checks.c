/*
 * advise-checks.c - the checks `stepscope advise` runs, in the order their
 * "nothing found" lines are printed (findings are ranked by saving).
 * Each is defined in its own advise-<name>.c (advise.h).
 */
#include "advise.h"

#define SS_ADV_CHECK(n) extern const struct ss_adv_check ss_adv_check_##n __attribute__((weak))
SS_ADV_CHECK(omp);
SS_ADV_CHECK(hooks);
SS_ADV_CHECK(shape);
SS_ADV_CHECK(peak);
SS_ADV_CHECK(alloc);
SS_ADV_CHECK(blocked);
SS_ADV_CHECK(outlier);
SS_ADV_CHECK(mpi);
SS_ADV_CHECK(cuda);

const struct ss_adv_check *const ss_adv_checks[] = {
	&ss_adv_check_omp,     /* OpenMP team on more threads than free CPUs */
	&ss_adv_check_hooks,   /* stepscope's hooks dominate: tiny calls */
	&ss_adv_check_shape,   /* one shape of an operator far below its others */
	&ss_adv_check_peak,    /* an operator far below the machine's peak */
	&ss_adv_check_alloc,   /* the same sizes allocated and freed every step */
	&ss_adv_check_blocked, /* steps mostly blocked off the CPU */
	&ss_adv_check_outlier, /* slow steps and the operator that grew */
	&ss_adv_check_mpi,     /* the straggler rank */
	&ss_adv_check_cuda,    /* GPU idle between kernels, launch overhead */
};
const size_t ss_adv_nchecks = sizeof ss_adv_checks / sizeof ss_adv_checks[0];
