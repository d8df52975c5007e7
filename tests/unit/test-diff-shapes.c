/*
 * test-diff-shapes.c - what `stepscope diff` concludes (analyze/diff-compare.c,
 * diff-verdict.c) on synthetic step sets of four trainer shapes, as a
 * shared machine makes them: every run has its own speed (a machine busier
 * or slower for the whole run), every step its own noise (3% on each
 * operator, one step in ten preempted inside one operator).  20 seeded
 * pairs of each case, so every figure below is exact and fixed:
 *
 * - same build, NEW's machine 30% slower (and 20% faster): no step
 *   verdict significant in any pair, and the line says "not conclusive"
 *   (the old test over raw times called the step +30% significant in
 *   every pair); a row significant by chance (p < 0.01) in at most 1 pair
 *   of 20;
 * - one operator +30% on a machine of equal speed, 30% slower, 20%
 *   faster: in at least 19 of 20 pairs that operator is the first row and
 *   significant, its +vsRest within 30 +- 6%, the verdict significant with the step's
 *   change at equal machine speed within 20% (1.5 points at least;
 *   the convnet's yardstick is 15% of a step) of the
 *   operator's share times 30%, where that is 5% or more (below it the
 *   verdict says the change is under --min-change), and the machine's
 *   part within twice that of the two runs' speeds (3 points with no
 *   operator changed); another row
 *   significant in at most 1 pair of 20;
 * - the whole machine and no operator: the verdict line says "not
 *   conclusive" and why.
 *
 * Shapes: kann's rnn-bit (many small operators, the largest cmul), an
 * MLP (linear forward and backward), an LLM block (attention, matmul)
 * and a convnet whose conv is 85% of the step.  The operator made slower
 * is never the largest: a machine-wide slowdown adds most to the largest.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diff.h"

struct shape {
	const char *name;
	const char *ops[12];
	double us[12];               /* each operator's self time a step */
	int slow;                    /* the operator made 30% slower */
};

static const struct shape shapes[] = {
	{ "kann rnn-bit",
	  { "kann_cost", "kad_eval_at", "kad_op_cmul", "kad_op_add", "kad_op_sigm", "kad_op_tanh",
	    "kad_op_mul", "kad_op_ce_bin", "kad_sync_dim", "kad_grad", "kad_saxpy", NULL },
	  { 40, 300, 2100, 600, 700, 550, 450, 150, 250, 600, 260 }, 4 },
	{ "mlp", { "train_step", "linear_fwd", "relu", "softmax", "linear_bwd", "sgd_update", NULL },
	  { 10, 4000, 500, 600, 4200, 900 }, 3 },
	{ "llm block", { "gpt2_step", "attention", "matmul", "layernorm", "gelu", "adamw", NULL },
	  { 20, 5500, 3000, 500, 450, 550 }, 2 },
	{ "convnet", { "train_step", "conv2d", "maxpool", "batchnorm", "loss", NULL },
	  { 10, 8500, 500, 500, 500 }, 1 },
};

static uint64_t rng_state;

static double rnd(void) /* 0..1 */
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) / (double)(UINT64_C(1) << 53);
}

static double noise(void) /* about +-3%, roughly normal */
{
	return (rnd() + rnd() + rnd() - 1.5) * 0.06;
}

#define STEPS 20

/* One run of shape sh: machine speed factor m, operator sh->slow times
 * slow; the step is every operator's self time (on-CPU, as with
 * record.sched). */
static void mkrun(struct ss_diff_run *r, const struct shape *sh, double m, double slow)
{
	size_t nops = 0, i, k;

	while (sh->ops[nops])
		nops++;
	memset(r, 0, sizeof(*r));
	r->nsteps = STEPS;
	r->step_ns = calloc(STEPS, sizeof(uint64_t));
	r->s = calloc(nops, sizeof(*r->s));
	r->ns = nops;
	for (k = 0; k < nops; k++) {
		r->s[k].name = strdup(sh->ops[k]);
		r->s[k].kind = SS_AGG_FUNCTION;
		r->s[k].calls = calloc(STEPS, sizeof(uint64_t));
		r->s[k].self_ns = calloc(STEPS, sizeof(uint64_t));
		r->s[k].total_ns = calloc(STEPS, sizeof(uint64_t));
	}
	for (i = 0; i < STEPS; i++) {
		/* one step in ten: one operator preempted, +50% */
		size_t hit = rnd() < 0.1 ? (size_t)(rnd() * (double)nops) : nops;
		for (k = 0; k < nops; k++) {
			double v = sh->us[k] * 1e3 * m * (1 + noise());
			if ((int)k == sh->slow)
				v *= slow;
			if (k == hit)
				v *= 1.5;
			r->s[k].calls[i] = 1;
			r->s[k].self_ns[i] = r->s[k].total_ns[i] = (uint64_t)v;
			r->step_ns[i] += (uint64_t)v;
		}
	}
}

/* The share of operator k of shape sh in a step. */
static double share_of(const struct shape *sh, int k)
{
	double sum = 0;

	for (size_t i = 0; sh->ops[i]; i++)
		sum += sh->us[i];
	return sh->us[k] / sum;
}

struct tally {
	int rows_sig, pairs_flagged, step_sig, first_slow, slow_sig, adj_ok, pct_ok, machine_ok, inconclusive;
};

static void pair(const struct shape *sh, double m, double slow, struct tally *t)
{
	struct ss_diff_run a, b;
	struct ss_diff_opts o;
	struct ss_diff_stat st;
	struct ss_diff_verdict v;
	struct ss_diff_row *rows;
	char line[768];
	long n;

	double ma = 0.97 + 0.06 * rnd(), mb = m * (0.97 + 0.06 * rnd());

	ss_diff_opts_default(&o);
	/* a run's own speed: 0.97..1.03, and NEW's machine m times that */
	mkrun(&a, sh, ma, 1);
	mkrun(&b, sh, mb, slow);
	n = ss_diff_compare(&a, &b, &o, &st, &rows);
	assert_true(n == (long)a.ns);
	assert_int_equal(ss_diff_verdict(&a, &b, rows, (size_t)n, &o, &st, &v), 0);
	ss_diff_verdict_line(line, sizeof(line), &v, &st, &o);
	int flagged = 0;

	for (long i = 0; i < n; i++)
		if (rows[i].self.significant && (slow == 1 || strcmp(rows[i].name, sh->ops[sh->slow]))) {
			t->rows_sig++;
			flagged = 1;
			print_message("  %s: %s significant: +vsRest %+.1f%%, p=%.2g\n", sh->name,
				      rows[i].name, rows[i].self.adj_pct, rows[i].self.p);
		}
	t->pairs_flagged += flagged;
	t->step_sig += st.significant;
	t->first_slow += !strcmp(rows[0].name, sh->ops[sh->slow]);
	t->slow_sig += !strcmp(rows[0].name, sh->ops[sh->slow]) && rows[0].self.significant;
	t->adj_ok += !strcmp(rows[0].name, sh->ops[sh->slow]) && fabs(rows[0].self.adj_pct - 30) < 6;
	{
		/* what the slowed operator adds; the machine's part is measured
		 * by the same yardstick, so it takes the same error */
		double want = slow > 1 ? 30 * share_of(sh, sh->slow) : 0;
		double tol = fmax(1.5, 0.2 * want);
		t->pct_ok += v.judged && fabs(v.pct - want) < tol;
		t->machine_ok += v.judged && fabs(v.machine_pct - (mb / ma - 1) * 100) < 2 * tol;
		if (!(v.judged && fabs(v.pct - want) < tol))
			print_message("  %s: %s\n", sh->name, line);
	}
	t->inconclusive += !strncmp(line, "not conclusive: the step changed", 32) &&
			   strstr(line, "every function kept its share of it") != NULL;
	free(rows);
	ss_diff_release(&a);
	ss_diff_release(&b);
}

static void run_case(const struct shape *sh, double m, double slow, struct tally *t)
{
	memset(t, 0, sizeof(*t));
	rng_state = UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)(m * 1000) ^ (uint64_t)(slow * 7);
	for (int k = 0; k < 20; k++)
		pair(sh, m, slow, t);
}

static void test_machine_slower(void **state)
{
	struct tally t;

	(void)state;
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		const double ms[] = { 1.3, 0.8 };
		for (size_t k = 0; k < 2; k++) {
			run_case(&shapes[s], ms[k], 1, &t);
			print_message("%s, machine x%.1f: pairs with a row significant %d, step verdicts "
				      "%d, 'not conclusive' %d of 20, machine part within 3 points %d\n",
				      shapes[s].name, ms[k], t.pairs_flagged, t.step_sig, t.inconclusive,
				      t.machine_ok);
			/* a row at p < 0.01 by chance: at most 1 pair of 20 */
			assert_true(t.pairs_flagged <= 1);
			assert_int_equal(t.step_sig, 0);
			assert_int_equal(t.inconclusive + t.pairs_flagged, 20);
			assert_true(t.machine_ok >= 19);
		}
	}
}

static void test_one_operator(void **state)
{
	struct tally t;

	(void)state;
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		const double ms[] = { 1.0, 1.3, 0.8 };
		for (size_t k = 0; k < 3; k++) {
			run_case(&shapes[s], ms[k], 1.3, &t);
			print_message("%s, %s +30%%, machine x%.1f: first %d, first and significant %d, "
				      "+vsRest 30+-6 %d, step at equal speed %+.1f%% (within 20%%) %d, machine part %d, "
				      "step verdicts %d, pairs with another row significant %d of 20\n",
				      shapes[s].name, shapes[s].ops[shapes[s].slow], ms[k], t.first_slow,
				      t.slow_sig, t.adj_ok, 30 * share_of(&shapes[s], shapes[s].slow),
				      t.pct_ok, t.machine_ok, t.step_sig, t.pairs_flagged);
			/* the goal: ranked first and flagged in 19 of 20 */
			assert_true(t.first_slow >= 19);
			assert_true(t.slow_sig >= 19);
			assert_true(t.adj_ok >= 19);
			assert_true(t.pct_ok >= 19);
			assert_true(t.machine_ok >= 19);
			/* the step's change is the operator's share times 30%:
			 * significant where that is 5% (--min-change) or more */
			assert_int_equal(t.step_sig,
					 30 * share_of(&shapes[s], shapes[s].slow) >= 5 ? 20 : 0);
			assert_true(t.pairs_flagged <= 1);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_machine_slower),
		cmocka_unit_test(test_one_operator),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
