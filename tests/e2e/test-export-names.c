/*
 * test-export-names.c - end to end: names as every format shows them.
 * s-cc-omp (gcc -fopenmp) recorded with record.stack: libgomp's entry
 * points come from its .dynsym, whose names carry symbol versions
 * (GOMP_parallel@@GOMP_4.0, __libc_start_main@@GLIBC_2.34 in libc); the
 * Chrome trace's stack frames, the Perfetto file and the folded stacks
 * must say GOMP_parallel and never "@".  With --details, slices that carry
 * a native stack keep their args.file.  Skips when the compiler has no
 * OpenMP.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e.h"

#define E2E "\"$SS_E2E_SRC/tests/e2e\""

static void test_no_symbol_versions(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);

	if (ss_e2e_sh(t, "echo 'int main(void){return 0;}' > p.c && %s -fopenmp -o p p.c",
		      t->v->cc) != 0) {
		print_message("e2e: skipped: %s -fopenmp cannot build here\n", t->v->cc);
		ss_e2e_pass(t);
		skip();
	}
	ss_e2e_build(t, "cc-omp", "-fopenmp -I" E2E " -I" E2E "/cc");
	SS_E2E_SH_OK(t, "printf 'record:\\n  stack: true\\n' > st.yaml");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" record -c st.yaml -o rec -- ./s-cc-omp "
		     ">/dev/null");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" symbolize -q --details -o t.json rec");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" symbolize -q --format folded "
		     "-o t.folded rec");
	SS_E2E_SH_OK(t, "\"$SS_E2E_BUILD/bin/stepscope\" symbolize -q --format perfetto "
		     "-o t.pf rec");
	/* the frames are there, named without versions */
	SS_E2E_SH_OK(t, "grep -q '\"name\":\"GOMP_parallel\"' t.json");
	SS_E2E_SH_OK(t, "grep -q ';GOMP_parallel;' t.folded");
	SS_E2E_SH_OK(t, "grep -aq 'GOMP_parallel' t.pf");
	SS_E2E_CHECK(t, ss_e2e_sh(t, "grep -aE '[A-Za-z_]@@?[A-Z]+_[0-9]' t.json t.folded t.pf") == 1,
		     "a name with a symbol version: %s", t->out);
	/* a slice with a native stack ("sf") keeps its file with --details */
	SS_E2E_SH_OK(t, "grep -q '\"name\":\"region_work\",[^}]*\"sf\":[^}]*\"file\":\"[^\"]*"
		     "s-cc-omp.c:[0-9]' t.json");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_no_symbol_versions),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
