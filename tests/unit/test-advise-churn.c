/*
 * test-advise-churn.c - the "alloc" check of `stepscope advise`
 * (advise-alloc.c), fed by hand through its exporter: four recorded steps
 * [0, 100), [100, 200), [200, 300), [300, 400) of one process, and
 *   - get_scratch allocates a 33 MiB block at +10 and frees it at +20 in
 *     steps 0, 1 and 2 (a churned pair in 3 of 4 steps), and in step 3
 *     allocates one it never frees;
 *   - carry allocates a 33 MiB block in each step and frees it in the next
 *     (never within one step: not churn);
 *   - late allocates and frees a block after the last step (outside any);
 *   - a free of a block of unknown size.
 * Expected: one finding, naming get_scratch only, "in 3 of 4 steps"; with
 * get_scratch's pair in one step only, no finding.  The saving is measured
 * on the machine (a 33 MiB block is mapped fresh each time), so only its
 * sign is asserted, against a median step of 1 us.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "advise.h"

#define MIB33 (33ull << 20)

extern const struct ss_adv_check ss_adv_check_alloc;

static struct ss_alloc_ev ev(uint64_t ns, uint64_t addr, int is_free, uint32_t node)
{
	struct ss_alloc_ev e;

	memset(&e, 0, sizeof(e));
	e.ns = ns;
	e.tid = 10;
	e.addr = addr;
	e.size = MIB33;
	e.is_free = (uint8_t)is_free;
	e.known = (uint8_t)is_free;
	e.node = node;
	return e;
}

/* Feed the events (churn_steps: in how many steps get_scratch's pair
 * comes back), judge; the findings in out. */
static int judge(int churn_steps, struct ss_adv_list *out, char *why, size_t whylen)
{
	struct ss_alloc_node nodes[3] = { { 0, 0x1000, "get_scratch" }, { 0, 0x2000, "carry" },
					  { 0, 0x3000, "late" } };
	struct ss_alloc_step steps[4];
	struct ss_alloc_ev e[64];
	struct ss_alloc_data d;
	struct ss_adv_run run;
	size_t n = 0;
	void *state = NULL;
	int rc;

	for (int s = 0; s < 4; s++) {
		uint64_t t = (uint64_t)s * 100;
		memset(&steps[s], 0, sizeof(steps[s]));
		steps[s].step = (uint64_t)s + 1;
		steps[s].begin_ns = t;
		steps[s].end_ns = t + 100;
		if (s)
			e[n++] = ev(t + 5, 0xc000 + (uint64_t)s - 1, 1, 2);  /* carry's last */
		e[n++] = ev(t + 10, 0xa000, 0, 1);
		if (s < churn_steps)
			e[n++] = ev(t + 20, 0xa000, 1, 1);
		else if (s < 3)
			e[n++] = ev(t + 20, 0xa000 + 0x100 * (uint64_t)s, 0, 1); /* kept */
		e[n++] = ev(t + 50, 0xc000 + (uint64_t)s, 0, 2);
	}
	e[n] = ev(350, 0xdead, 1, 1); /* of unknown size */
	e[n++].known = 0;
	e[n++] = ev(450, 0xf000, 0, 3);
	e[n++] = ev(460, 0xf000, 1, 3);
	memset(&d, 0, sizeof(d));
	d.ev = e;
	d.nev = n;
	d.nodes = nodes;
	d.nnodes = 3;
	d.steps = steps;
	d.nsteps = 4;
	for (size_t i = 0; i < n; i++)
		d.allocs += !e[i].is_free;
	struct ss_exporter *x = ss_adv_check_alloc.exporter("run", &state);
	assert_non_null(x);
	x->alloc(x->ctx, 1, &d);
	memset(&run, 0, sizeof(run));
	run.nsteps = 4;
	run.median_step_ns = 1000;
	rc = ss_adv_check_alloc.judge(&run, state, out, why, whylen);
	ss_adv_check_alloc.release(state);
	return rc;
}

static void test_churn_in_3_of_4(void **state)
{
	struct ss_adv_list out = { 0 };
	char why[200] = "";

	(void)state;
	assert_int_equal(judge(3, &out, why, sizeof(why)), 0);
	assert_int_equal(out.n, 1);
	const struct ss_adv_finding *f = &out.v[0];
	assert_string_equal(f->check, "alloc");
	assert_int_equal(f->nfuncs, 1);
	assert_string_equal(f->funcs[0], "get_scratch");
	if (!strstr(f->title, "a 33.00 MiB block again in 3 of 4 steps: 1 size churned"))
		fail_msg("title: %s", f->title);
	if (!strstr(f->evidence, "get_scratch allocates and frees 0.75 blocks of 33.00 MiB a step "
				 "(in 3 of 4 steps)"))
		fail_msg("evidence: %s", f->evidence);
	assert_true(f->save_ns > 0 && f->save_lo <= f->save_ns && f->save_hi == f->save_ns);
	free(out.v);
}

static void test_churn_in_1_of_4(void **state)
{
	struct ss_adv_list out = { 0 };
	char why[200] = "";

	(void)state;
	assert_int_equal(judge(1, &out, why, sizeof(why)), 0);
	assert_int_equal(out.n, 0);
	free(out.v);
}

static void test_no_allocations(void **state)
{
	struct ss_adv_list out = { 0 };
	struct ss_adv_run run;
	char why[200] = "";
	void *st = NULL;

	(void)state;
	assert_non_null(ss_adv_check_alloc.exporter("run", &st));
	memset(&run, 0, sizeof(run));
	run.nsteps = 4;
	run.median_step_ns = 1000;
	assert_int_equal(ss_adv_check_alloc.judge(&run, st, &out, why, sizeof(why)), 1);
	assert_string_equal(why, "the run has no recorded allocations (memory.allocations)");
	ss_adv_check_alloc.release(st);
	assert_int_equal(out.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_churn_in_3_of_4),
		cmocka_unit_test(test_churn_in_1_of_4),
		cmocka_unit_test(test_no_allocations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
