/*
 * test-schedule.c - exact step-by-step actions, cycles and "done" for every
 * schedule mode (runtime/schedule.c).
 *
 * Each schedule is written out as one character per step for steps 0..20
 * ('.' nothing, 'w' warmup, 'R' recorded) and compared as a string, so a
 * failure shows the whole expected and actual sequence side by side.  The
 * configs are built through ss_config_set, the way a user would write them.
 * Never depends on files, the environment or the clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "schedule.h"

#define NSTEPS 21

/* defaults plus the given overrides; fails the test on a bad override */
static void make(struct ss_config *c, const char *const *sets)
{
	char err[512] = "";

	ss_config_defaults(c);
	for (; *sets; sets++) {
		if (ss_config_set(c, *sets, "--set", err, sizeof(err)))
			fail_msg("override '%s' refused: %s", *sets, err);
	}
	if (ss_config_check(c, err, sizeof(err)))
		fail_msg("config refused: %s", err);
}

static void actions(const struct ss_config *c, char out[NSTEPS + 1])
{
	for (uint64_t s = 0; s < NSTEPS; s++) {
		switch (ss_schedule_action(c, s)) {
		case SS_STEP_NONE: out[s] = '.'; break;
		case SS_STEP_WARMUP: out[s] = 'w'; break;
		case SS_STEP_RECORD: out[s] = 'R'; break;
		default: out[s] = '?'; break;
		}
	}
	out[NSTEPS] = 0;
}

static void cycles(const struct ss_config *c, char out[NSTEPS + 1])
{
	for (uint64_t s = 0; s < NSTEPS; s++) {
		uint32_t cy = ss_schedule_cycle(c, s);

		out[s] = cy < 10 ? (char)('0' + cy) : '+';
	}
	out[NSTEPS] = 0;
}

static void dones(const struct ss_config *c, char out[NSTEPS + 1])
{
	for (uint64_t s = 0; s < NSTEPS; s++)
		out[s] = ss_schedule_done(c, s) ? 'D' : '-';
	out[NSTEPS] = 0;
}

static void expect(const char *const *sets, const char *act, const char *cyc, const char *done)
{
	struct ss_config c;
	char got[NSTEPS + 1];

	make(&c, sets);
	actions(&c, got);
	assert_string_equal(got, act);
	cycles(&c, got);
	assert_string_equal(got, cyc);
	dones(&c, got);
	assert_string_equal(got, done);
}

/* steps: 0         1         2
 *        012345678901234567890 */

static void test_all(void **state)
{
	static const char *const sets[] = { NULL };

	expect(sets, "RRRRRRRRRRRRRRRRRRRRR", "000000000000000000000", "---------------------");
}

/* the torch.profiler docs example: steps 2,3,4 and 7,8,9 recorded */
static void test_torch_docs_example(void **state)
{
	static const char *const sets[] = { "schedule.wait=1", "schedule.warmup=1",
					    "schedule.active=3", "schedule.repeat=2", NULL };

	expect(sets, ".wRRR.wRRR...........", "000001111122222333334", "----------DDDDDDDDDDD");
}

static void test_torch_skip_first(void **state)
{
	static const char *const sets[] = { "schedule.skip_first=3", "schedule.wait=1",
					    "schedule.warmup=1", "schedule.active=3",
					    "schedule.repeat=2", NULL };

	expect(sets, "....wRRR.wRRR........", "000000001111122222333", "-------------DDDDDDDD");
}

static void test_torch_repeat_forever(void **state)
{
	static const char *const sets[] = { "schedule.wait=1", "schedule.warmup=1",
					    "schedule.active=3", NULL };

	expect(sets, ".wRRR.wRRR.wRRR.wRRR.", "000001111122222333334", "---------------------");
}

static void test_torch_active_only(void **state)
{
	static const char *const sets[] = { "schedule.active=2", "schedule.repeat=3", NULL };

	expect(sets, "RRRRRR...............", "00112233445566778899+", "------DDDDDDDDDDDDDDD");
}

static void test_torch_no_wait_warmup(void **state)
{
	static const char *const sets[] = { "schedule.wait=2", "schedule.active=1",
					    "schedule.repeat=1", NULL };

	expect(sets, "..R..................", "000111222333444555666", "---DDDDDDDDDDDDDDDDDD");
}

static void test_window(void **state)
{
	static const char *const sets[] = { "window.start_step=10", "window.end_step=20", NULL };

	expect(sets, "..........RRRRRRRRRR.", "000000000000000000000", "--------------------D");
}

static void test_window_from_zero(void **state)
{
	static const char *const sets[] = { "window.end_step=3", NULL };

	expect(sets, "RRR..................", "000000000000000000000", "---DDDDDDDDDDDDDDDDDD");
}

/* Lightning style: cycles of 7 steps, each wait 1, warmup 1, active 2, idle 3 */
static void test_every_n(void **state)
{
	static const char *const sets[] = { "schedule.wait=1", "schedule.warmup=1",
					    "schedule.active=2", "schedule.repeat=2",
					    "every_n_steps=7", NULL };

	expect(sets, ".wRR....wRR..........", "000000011111112222222", "-----------DDDDDDDDDD");
}

static void test_every_n_forever_skip_first(void **state)
{
	static const char *const sets[] = { "schedule.skip_first=2", "schedule.active=3",
					    "every_n_steps=5", NULL };

	expect(sets, "..RRR..RRR..RRR..RRR.", "000000011111222223333", "---------------------");
}

/* every_n_steps equal to the torch cycle length behaves like torch */
static void test_every_n_equals_torch(void **state)
{
	static const char *const torch[] = { "schedule.wait=1", "schedule.warmup=1",
					     "schedule.active=3", "schedule.repeat=3", NULL };
	static const char *const every[] = { "schedule.wait=1", "schedule.warmup=1",
					     "schedule.active=3", "schedule.repeat=3",
					     "every_n_steps=5", NULL };
	struct ss_config a, b;
	char x[NSTEPS + 1], y[NSTEPS + 1];

	make(&a, torch);
	make(&b, every);
	assert_int_equal(a.mode, SS_SCHED_TORCH);
	assert_int_equal(b.mode, SS_SCHED_EVERY_N);
	actions(&a, x);
	actions(&b, y);
	assert_string_equal(x, y);
	cycles(&a, x);
	cycles(&b, y);
	assert_string_equal(x, y);
	dones(&a, x);
	dones(&b, y);
	assert_string_equal(x, y);
}

static void test_disabled_records_nothing(void **state)
{
	static const char *const sets[] = { "enabled=false", NULL };

	expect(sets, ".....................", "000000000000000000000", "DDDDDDDDDDDDDDDDDDDDD");
}

/* large step numbers: no overflow, cycle saturates */
static void test_big_steps(void **state)
{
	struct ss_config c;
	static const char *const sets[] = { "schedule.active=1", NULL };

	make(&c, sets);
	assert_int_equal(ss_schedule_action(&c, UINT64_MAX), SS_STEP_RECORD);
	assert_int_equal(ss_schedule_cycle(&c, UINT64_MAX), UINT32_MAX);
	assert_int_equal(ss_schedule_done(&c, UINT64_MAX), 0);

	c.repeat = INT64_MAX;
	c.skip_first = INT64_MAX;
	/* last recorded step: 2 * INT64_MAX - 1 = UINT64_MAX - 2 */
	assert_int_equal(ss_schedule_action(&c, 5), SS_STEP_NONE);
	assert_int_equal(ss_schedule_action(&c, UINT64_MAX - 2), SS_STEP_RECORD);
	assert_int_equal(ss_schedule_action(&c, UINT64_MAX - 1), SS_STEP_NONE);
	assert_int_equal(ss_schedule_done(&c, UINT64_MAX - 2), 0);
	assert_int_equal(ss_schedule_done(&c, UINT64_MAX - 1), 1);
}

/* an unchecked config with an empty cycle never divides by zero */
static void test_unchecked_zero_cycle(void **state)
{
	struct ss_config c;

	ss_config_defaults(&c);
	c.mode = SS_SCHED_TORCH;
	assert_int_equal(ss_schedule_action(&c, 0), SS_STEP_NONE);
	assert_int_equal(ss_schedule_cycle(&c, 7), 0);
	assert_int_equal(ss_schedule_done(&c, 0), 1);
	c.mode = SS_SCHED_EVERY_N;
	c.active = 2;
	assert_int_equal(ss_schedule_action(&c, 0), SS_STEP_NONE);
	assert_int_equal(ss_schedule_done(&c, 0), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all),
		cmocka_unit_test(test_torch_docs_example),
		cmocka_unit_test(test_torch_skip_first),
		cmocka_unit_test(test_torch_repeat_forever),
		cmocka_unit_test(test_torch_active_only),
		cmocka_unit_test(test_torch_no_wait_warmup),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_window_from_zero),
		cmocka_unit_test(test_every_n),
		cmocka_unit_test(test_every_n_forever_skip_first),
		cmocka_unit_test(test_every_n_equals_torch),
		cmocka_unit_test(test_disabled_records_nothing),
		cmocka_unit_test(test_big_steps),
		cmocka_unit_test(test_unchecked_zero_cycle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
