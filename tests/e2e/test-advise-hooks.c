/*
 * test-advise-hooks.c - end to end: `stepscope advise`'s hooks check
 * (issue 47).  s-advise-hooks calls two tiny helpers per element, 100000
 * calls a step: recording makes its steps several times slower, and the
 * hooks finding must come first, name act and scale, and predict what the
 * filter workflow saves.  The test then does what the advice says
 * (`stepscope filter -o`, the rebuild with STEPSCOPE_EXCLUDE_FILE, the
 * same recording again) and checks the step got faster by the predicted
 * saving within a factor of 2: medians of 30 recorded steps each, on a
 * machine that may be busy, so the effect is planted large (5x and more).
 * The rebuilt program's run gets no hooks finding ("nothing found").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "e2e.h"
#include "e2e-advise.h"

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""
/* 40 steps, 5 .. 34 recorded: the others time the unrecorded steps */
#define CFG "printf 'step: {function: train_step}\\nwindow: {start_step: 5, end_step: 35}\\n' > c.yaml"

static void test_hooks_filter_saves(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "advise-hooks", NULL);
	SS_E2E_SH_OK(t, CFG);
	SS_E2E_SH_OK(t, SS " record -o run -c c.yaml -- ./s-advise-hooks 40 50000");
	cJSON *adv = ss_e2e_advise(t, "run");
	const cJSON *f = ss_e2e_advise_finding(adv, 0);
	SS_E2E_CHECK(t, f && !strcmp(ss_e2e_advise_str(f, "check"), "hooks"),
		     "100000 tiny calls a step: expected the hooks finding first, got %s",
		     f ? ss_e2e_advise_str(f, "check") : "no finding");
	SS_E2E_CHECK(t, ss_e2e_advise_names(f, "act") && ss_e2e_advise_names(f, "scale") &&
				!ss_e2e_advise_names(f, "forward") &&
				!ss_e2e_advise_names(f, "update"),
		     "the hooks finding should name act and scale, only");
	SS_E2E_CHECK(t, strstr(ss_e2e_advise_str(f, "evidence"), "act (50000 calls a step") &&
				strstr(ss_e2e_advise_str(f, "evidence"), "scale (50000 calls a step"),
		     "evidence: expected 50000 calls a step of act and scale:\n%s",
		     ss_e2e_advise_str(f, "evidence"));
	SS_E2E_CHECK(t, strstr(ss_e2e_advise_str(f, "advice"), "stepscope filter -o exclude.txt run"),
		     "advice: expected the filter workflow:\n%s", ss_e2e_advise_str(f, "advice"));
	double predicted = ss_e2e_advise_num(f, "save_ns");
	double before = ss_e2e_advise_median(adv);
	/* the advice, done */
	SS_E2E_SH_OK(t, SS " filter -o exclude.txt run");
	SS_E2E_SH_OK(t, "grep -v '^#' exclude.txt");
	SS_E2E_CHECK(t, !strcmp(t->out, "act\nscale\n"), "filter's list: expected act and scale:\n%s",
		     t->out);
	SS_E2E_SH_OK(t, "STEPSCOPE_EXCLUDE_FILE=exclude.txt \"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s "
			"-pthread -I\"$SS_E2E_SRC/tests/e2e\" -o s-advise-hooks-ex "
			"\"$SS_E2E_SRC/tests/e2e/s-advise-hooks.c\"",
		     t->v->cc, t->v->opt);
	SS_E2E_SH_OK(t, SS " record -o re -c c.yaml -- ./s-advise-hooks-ex 40 50000");
	cJSON *re = ss_e2e_advise(t, "re");
	double after = ss_e2e_advise_median(re), measured = before - after;
	print_message("hooks: median step %.0f ns, rebuilt %.0f ns: saved %.0f ns, predicted %.0f "
		      "ns (%.2fx)\n", before, after, measured, predicted,
		      measured > 0 ? predicted / measured : 0.0);
	for (int i = 0; ss_e2e_advise_finding(re, i); i++)
		SS_E2E_CHECK(t, strcmp(ss_e2e_advise_str(ss_e2e_advise_finding(re, i), "check"),
				       "hooks"),
			     "rebuilt without act's and scale's hooks: still a hooks finding");
	SS_E2E_SH_OK(t, SS " advise re");
	SS_E2E_CHECK(t, strstr(t->out, "\n  hooks      nothing found ("),
		     "rebuilt: expected 'hooks nothing found' in the text:\n%s", t->out);
	SS_E2E_CHECK(t, measured > 0 && predicted >= measured / 2 && predicted <= measured * 2,
		     "predicted saving %.0f ns a step, measured %.0f ns (median %.0f -> %.0f): not "
		     "within a factor of 2", predicted, measured, before, after);
	cJSON_Delete(adv);
	cJSON_Delete(re);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* gcc only: clang has no exclude list (docs/filters.md) */
		SS_E2E__ONE(test_hooks_filter_saves, ss_e2e_gcc_O2, "gcc-O2"),
		SS_E2E__ONE(test_hooks_filter_saves, ss_e2e_gcc_O0, "gcc-O0"),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
