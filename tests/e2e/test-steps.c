/*
 * test-steps.c - end to end: step windows.  s-steps (a training loop with
 * load_batch between steps, a recursive train_step re-entry, three worker
 * threads calling kernel inside each step, "optimizer"/"clip" ranges) is
 * recorded under each way of choosing steps (none, torch schedule with
 * repeat 2 and 0, skip_first, a JAX window, every_n_steps, stepscope_step()
 * instead of step.function) and each way of giving the config (-c,
 * STEPSCOPE_CONFIG, ./stepscope.yaml, --set, STEPSCOPE_SET).
 *
 * Each run is checked against a model of the fixture: the exact set of
 * ProfilerStep#k slices, the exact count of every function and range inside
 * each step per thread, main/train_loop clipped to each window and
 * enclosing its steps, nothing recorded outside the windows, proper nesting,
 * and with --split-cycles one file per cycle holding exactly its steps.
 * Bad configs must be refused with their exact one-line message and exit 2
 * before the program starts, by `stepscope record` and by the runtime.
 * test_config_line: record's first line names the config of each way and
 * the keys it sets; a bare run counts the earlier runs beside it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e.h"

#define SS "\"$SS_E2E_BUILD/bin/stepscope\""

enum { N = 12, WORKERS = 3, MAX_STEPS = 32 };

/* ------------------------------------------------------------ the model */

struct ids {
	long pid, main_tid, worker_tid[WORKERS];
};

/* What the fixture was asked to do and which steps must be recorded. */
struct want {
	int api;                /* stepscope_step() mode: steps 0..N */
	int whole_run;          /* no step records at all */
	int nrec;
	int rec[MAX_STEPS];     /* recorded steps, ascending */
};

static int nsteps(const struct want *w)
{
	return w->api ? N + 1 : N;
}

static int is_rec(const struct want *w, int k)
{
	for (int i = 0; i < w->nrec; i++)
		if (w->rec[i] == k)
			return 1;
	return 0;
}

static const char *const main_fns[] = {"load_batch", "train_step", "forward",
				       "matmul", "run_workers",
				       "optimizer_update"};
static const char *const ranges[] = {"optimizer", "clip"};
enum { NMAIN = 6, NRANGES = 2 };

/* Calls of main_fns[f] (f < NMAIN), of ranges[f - NMAIN], or kernel
 * (f == NMAIN + NRANGES, per worker) that step k makes. */
static size_t per_step(const struct want *w, int k, int f)
{
	if (w->api && k == N)
		return 0; /* after the last stepscope_step(): the end of main */
	size_t r = k % 3 == 2; /* the recursive re-entry of train_step */
	switch (f) {
	case 0:
		return w->api ? 1 : k < N - 1; /* fn: the next step's batch */
	case 1:
		return 1 + r;
	case 2:
		return 2 * (1 + r);
	case 3:
		return 4 * (1 + r);
	default:
		return 1; /* run_workers, optimizer_update, ranges, kernel */
	}
}

static const char *fname(int f)
{
	return f < NMAIN ? main_fns[f] : f < NMAIN + NRANGES ? ranges[f - NMAIN] : "kernel";
}

static const char *fcat(int f)
{
	return f >= NMAIN && f < NMAIN + NRANGES ? "user_range" : "function";
}

/* Windows: runs of consecutive recorded steps. */
struct win {
	int first, last;
};

static int windows(const struct want *w, struct win *out)
{
	int n = 0;
	for (int i = 0; i < w->nrec; i++) {
		if (n && out[n - 1].last + 1 == w->rec[i])
			out[n - 1].last = w->rec[i];
		else
			out[n++] = (struct win){w->rec[i], w->rec[i]};
	}
	return n;
}

static void parse_ids(struct ss_e2e *t, struct ids *ids)
{
	memset(ids, 0, sizeof(*ids));
	char *save = NULL, *text = strdup(t->out);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		long v;
		int i;
		if (sscanf(l, "pid %ld", &v) == 1)
			ids->pid = v;
		else if (sscanf(l, "tid main %ld", &v) == 1)
			ids->main_tid = v;
		else if (sscanf(l, "tid worker-%d %ld", &i, &v) == 2 && i >= 0 && i < WORKERS)
			ids->worker_tid[i] = v;
	}
	free(text);
	int ok = ids->pid && ids->main_tid;
	for (int i = 0; i < WORKERS; i++)
		ok = ok && ids->worker_tid[i];
	if (!ok) {
		ss_e2e_show_last(t, -1);
		SS_E2E_FAIL(t, "s-steps did not print its pid and four tids");
	}
}

/* ------------------------------------------------------------ checks */

static const struct ss_e2e_slice *step_slice(const struct ss_e2e_trace *tr, int k)
{
	char name[32];
	snprintf(name, sizeof(name), "ProfilerStep#%d", k);
	for (size_t i = 0; i < tr->nslices; i++)
		if (!strcmp(tr->slices[i].cat, "step") && !strcmp(tr->slices[i].name, name))
			return &tr->slices[i];
	return NULL;
}

static int64_t end_of(const struct ss_e2e_slice *s)
{
	return s->ts_ns + s->dur_ns;
}

static int is_frame(const char *name)
{
	return !strcmp(name, "main") || !strcmp(name, "train_loop") ||
	       !strcmp(name, "worker_main");
}

/* Slices named `name` of `cat` on `tid` beginning in [b, e), frames
 * clipped at their begin left out. */
static size_t count_in(const struct ss_e2e_trace *tr, const char *name, const char *cat,
		       int64_t tid, int64_t b, int64_t e)
{
	size_t n = 0;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		n += !strcmp(s->name, name) && !strcmp(s->cat, cat) && s->tid == tid &&
		     s->ts_ns >= b && s->ts_ns < e;
	}
	return n;
}

static void expect_parent(struct ss_e2e *t, const struct ss_e2e_trace *tr, const char *child,
			  const char *p1, const char *p2)
{
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->name, child))
			continue;
		const char *p = ss_e2e_parent_name(tr, s);
		int ok = (p1 ? p && !strcmp(p, p1) : !p) ||
			 (p2 && (!strcmp(p2, "-") ? !p : p && !strcmp(p, p2)));
		SS_E2E_CHECK(t, ok, "'%s' at %lld ns on tid %lld: expected parent %s%s%s, got %s",
			     child, (long long)s->ts_ns, (long long)s->tid, p1 ? p1 : "(none)",
			     p2 ? " or " : "", p2 ? p2 : "", p ? p : "(none)");
	}
}

static void check_trace(struct ss_e2e *t, struct ss_e2e_trace *tr, const struct ids *ids,
			const struct want *w)
{
	int T = nsteps(w);
	struct win wins[MAX_STEPS];
	int nw = windows(w, wins);

	/* exactly the ProfilerStep#k of the recorded steps, on main */
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "step", 0, (size_t)w->nrec);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "step", ids->main_tid, (size_t)w->nrec);
	for (int i = 0; i < w->nrec; i++)
		SS_E2E_CHECK(t, step_slice(tr, w->rec[i]),
			     "expected a slice ProfilerStep#%d, found none", w->rec[i]);

	/* steps nest under main's clipped frame (step.function mode); a last
	 * step that runs to exit also holds the return of train_loop */
	char err[512];
	if (!w->api && !w->whole_run && !is_rec(w, T - 1))
		SS_E2E_CHECK(t, !ss_e2e_check_nesting(tr, SS_E2E_CAT_FUNCTION | SS_E2E_CAT_USER_RANGE |
							  SS_E2E_CAT_STEP, err, sizeof(err)),
			     "steps, calls and ranges do not nest: %s", err);
	SS_E2E_EXPECT_NESTED(t, tr);

	/* exact counts inside each recorded step, per thread */
	for (int i = 0; i < w->nrec; i++) {
		int k = w->rec[i];
		const struct ss_e2e_slice *st = step_slice(tr, k);
		int64_t b = st->ts_ns, e = end_of(st);
		for (int f = 0; f < NMAIN + NRANGES + 1; f++) {
			size_t want = per_step(w, k, f);
			for (int th = -1; th < WORKERS; th++) {
				int64_t tid = th < 0 ? ids->main_tid : ids->worker_tid[th];
				size_t exp = (th < 0) == (f < NMAIN + NRANGES) ? want : 0;
				size_t got = count_in(tr, fname(f), fcat(f), tid, b, e);
				SS_E2E_CHECK(t, got == exp,
					     "ProfilerStep#%d on tid %lld: expected %zu '%s', got %zu",
					     k, (long long)tid, exp, fname(f), got);
			}
		}
		/* fn mode: the batch loaded in step k comes after its train_step */
		for (size_t j = 0; !w->api && j < tr->nslices; j++) {
			const struct ss_e2e_slice *s = &tr->slices[j];
			if (strcmp(s->name, "load_batch") || s->ts_ns < b || s->ts_ns >= e)
				continue;
			for (size_t m = 0; m < tr->nslices; m++) {
				const struct ss_e2e_slice *ts = &tr->slices[m];
				if (!strcmp(ts->name, "train_step") && ts->ts_ns >= b && ts->ts_ns < e)
					SS_E2E_CHECK(t, s->ts_ns >= end_of(ts),
						     "ProfilerStep#%d: load_batch at %lld ns before "
						     "train_step ends at %lld ns",
						     k, (long long)s->ts_ns, (long long)end_of(ts));
			}
		}
	}

	/* exact totals: every function and range on every thread */
	size_t total = 0;
	for (int f = 0; f < NMAIN + NRANGES + 1; f++) {
		size_t n = 0;
		if (w->whole_run)
			for (int k = 0; k < T; k++)
				n += per_step(w, k, f);
		else
			for (int i = 0; i < w->nrec; i++)
				n += per_step(w, w->rec[i], f);
		if (w->whole_run && f == 0 && !w->api)
			n++; /* load_batch(0), before step 0 */
		if (f < NMAIN + NRANGES) {
			SS_E2E_EXPECT_COUNT(t, tr, fname(f), fcat(f), ids->main_tid, n);
			SS_E2E_EXPECT_COUNT(t, tr, fname(f), fcat(f), 0, n);
			total += f < NMAIN ? n : 0;
		} else {
			for (int th = 0; th < WORKERS; th++)
				SS_E2E_EXPECT_CALLS(t, tr, "kernel", ids->worker_tid[th], n);
			SS_E2E_EXPECT_CALLS(t, tr, "kernel", 0, WORKERS * n);
			total += WORKERS * n;
		}
	}
	size_t frames = w->whole_run ? 1 : (size_t)nw, wframes = w->whole_run;
	for (int i = 0; i < nw && !w->whole_run; i++)
		wframes += (w->api && wins[i].first == 0) || wins[i].last == T - 1;
	SS_E2E_EXPECT_CALLS(t, tr, "main", ids->main_tid, frames);
	SS_E2E_EXPECT_CALLS(t, tr, "train_loop", ids->main_tid, frames);
	for (int th = 0; th < WORKERS; th++)
		SS_E2E_EXPECT_CALLS(t, tr, "worker_main", ids->worker_tid[th], wframes);
	total += 2 * frames + WORKERS * wframes;
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, total);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "user_range", 0,
			    w->whole_run ? 2 * (size_t)(T - w->api) : 2 * (size_t)(w->nrec - (w->api && is_rec(w, N))));

	/* clipping: frames open across a window edge, nothing else */
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->cat, "function") && strcmp(s->cat, "user_range"))
			continue;
		unsigned want_flags = 0;
		if (is_frame(s->name) && !w->whole_run) {
			int wi;
			for (wi = 0; wi < nw; wi++) {
				const struct ss_e2e_slice *a = step_slice(tr, wins[wi].first);
				const struct ss_e2e_slice *z = step_slice(tr, wins[wi].last);
				if (a && z && s->ts_ns >= a->ts_ns && s->ts_ns <= end_of(z))
					break;
			}
			SS_E2E_CHECK(t, wi < nw, "'%s' at %lld ns: in no window", s->name,
				     (long long)s->ts_ns);
			int from_start = w->api && wins[wi].first == 0 && strcmp(s->name, "worker_main") == 0;
			int main_start = w->api && wins[wi].first == 0 && strcmp(s->name, "worker_main") != 0;
			if (!from_start && !main_start)
				want_flags |= SS_E2E_CLIPPED_BEGIN;
			if (wins[wi].last != T - 1)
				want_flags |= SS_E2E_CLIPPED_END;
			const struct ss_e2e_slice *a = step_slice(tr, wins[wi].first);
			const struct ss_e2e_slice *z = step_slice(tr, wins[wi].last);
			if (want_flags & SS_E2E_CLIPPED_BEGIN)
				SS_E2E_CHECK(t, s->ts_ns == a->ts_ns,
					     "clipped '%s' begins at %lld ns, its window at %lld ns",
					     s->name, (long long)s->ts_ns, (long long)a->ts_ns);
			/* step slices end 1 ns before the next step begins
			 * (SS_EXPORT_STEP_GAP), the window at that begin */
			if (want_flags & SS_E2E_CLIPPED_END)
				SS_E2E_CHECK(t, end_of(s) == end_of(z) + 1,
					     "clipped '%s' ends at %lld ns, its window at %lld ns",
					     s->name, (long long)end_of(s), (long long)end_of(z));
			/* in step.function mode main encloses every step of its window */
			for (int k = wins[wi].first; !w->api && !strcmp(s->name, "main") && k <= wins[wi].last; k++) {
				const struct ss_e2e_slice *st = step_slice(tr, k);
				SS_E2E_CHECK(t, st->ts_ns >= s->ts_ns && end_of(st) <= end_of(s),
					     "ProfilerStep#%d is not inside its clipped main", k);
			}
		}
		SS_E2E_CHECK(t, s->flags == want_flags,
			     "'%s' at %lld ns on tid %lld: expected clip flags 0x%x, got 0x%x",
			     s->name, (long long)s->ts_ns, (long long)s->tid, want_flags, s->flags);
		/* nothing outside the recorded steps */
		if (w->whole_run || s->flags)
			continue;
		int inside = 0;
		for (int k = 0; k < w->nrec && !inside; k++) {
			const struct ss_e2e_slice *st = step_slice(tr, w->rec[k]);
			inside = s->ts_ns >= st->ts_ns && s->ts_ns <= end_of(st);
		}
		SS_E2E_CHECK(t, inside || (w->api && is_frame(s->name)),
			     "'%s' at %lld ns on tid %lld: recorded outside every ProfilerStep",
			     s->name, (long long)s->ts_ns, (long long)s->tid);
	}

	/* the call tree, ranges included */
	expect_parent(t, tr, "train_loop", "main", NULL);
	expect_parent(t, tr, "main", NULL, NULL);
	expect_parent(t, tr, "load_batch", "train_loop", NULL);
	expect_parent(t, tr, "train_step", "train_loop", "train_step");
	expect_parent(t, tr, "forward", "train_step", NULL);
	expect_parent(t, tr, "matmul", "forward", NULL);
	expect_parent(t, tr, "run_workers", "train_step", NULL);
	expect_parent(t, tr, "optimizer", "train_step", NULL);
	expect_parent(t, tr, "optimizer_update", "optimizer", NULL);
	expect_parent(t, tr, "clip", "optimizer_update", NULL);
	expect_parent(t, tr, "kernel", "worker_main", "-");
	expect_parent(t, tr, "worker_main", NULL, NULL);
	int reentry = 0;
	for (int k = 0; k < nsteps(w); k++)
		reentry |= (w->whole_run || is_rec(w, k)) && per_step(w, k, 1) == 2;
	SS_E2E_CHECK(t, ss_e2e_max_chain(tr, "train_step") == (reentry ? 2 : 1),
		     "deepest train_step chain: expected %d, got %d", reentry ? 2 : 1,
		     ss_e2e_max_chain(tr, "train_step"));
}

/* ------------------------------------------------------------ runs */

static struct ss_e2e_trace *record_load(struct ss_e2e *t, struct ids *ids, const char *env,
					const char *opts, const char *mode)
{
	ss_e2e_build(t, "steps", NULL);
	int st = ss_e2e_sh(t, "%s " SS " record -o rec %s -- ./s-steps %s %d", env ? env : "",
			   opts ? opts : "", mode, N);
	if (st) {
		ss_e2e_show_last(t, st);
		SS_E2E_FAIL(t, "recording s-steps: expected status 0, got %d", st);
	}
	parse_ids(t, ids);
	return ss_e2e_symbolize_load(t, "rec");
}

static void run(void **state, const char *file, const char *yaml, const char *env,
		const char *opts, const struct want *w)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ids ids;
	if (yaml)
		SS_E2E_SH_OK(t, "printf '%s' > %s", yaml, file);
	struct ss_e2e_trace *tr = record_load(t, &ids, env, opts, w->api ? "api" : "fn");
	check_trace(t, tr, &ids, w);
	ss_e2e_pass(t);
}

#define WANT(api_, ...)                                                        \
	{ .api = (api_), .nrec = sizeof((int[]){__VA_ARGS__}) / sizeof(int),   \
	  .rec = {__VA_ARGS__} }

static void test_default_whole_run(void **state)
{
	struct want w = {.whole_run = 1};
	run(state, NULL, NULL, NULL, NULL, &w);
}

/* torch.profiler's example: wait 1, warmup 1, active 2, repeat 2 */
static void test_torch_repeat2_cli_file(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ids ids;
	struct want w = WANT(0, 2, 3, 6, 7);
	SS_E2E_SH_OK(t, "printf 'step:\\n  function: train_step\\nschedule:\\n  wait: 1\\n"
			"  warmup: 1\\n  active: 2\\n  repeat: 2\\n' > c.yaml");
	struct ss_e2e_trace *tr = record_load(t, &ids, NULL, "-c c.yaml", "fn");
	check_trace(t, tr, &ids, &w);

	/* one file per cycle, each with exactly its steps */
	SS_E2E_SH_OK(t, SS " symbolize --split-cycles rec");
	SS_E2E_SH_OK(t, "test \"$(cd rec && ls trace-cycle*.json | tr '\\n' ' ')\" = "
			"'trace-cycle0.json trace-cycle1.json '");
	static const struct want cyc[2] = {WANT(0, 2, 3), WANT(0, 6, 7)};
	for (int c = 0; c < 2; c++) {
		char path[4200], err[512];
		struct ss_e2e_trace *ct = calloc(1, sizeof(*ct));
		t->traces[t->ntraces++] = ct;
		snprintf(path, sizeof(path), "%s/rec/trace-cycle%d.json", t->dir, c);
		SS_E2E_CHECK(t, !ss_e2e_trace_load(ct, path, err, sizeof(err)), "loading %s: %s",
			     path, err);
		check_trace(t, ct, &ids, &cyc[c]);
	}
	ss_e2e_pass(t);
}

/* repeat 0: cycles until the end; the last window is open at exit */
static void test_torch_repeat0_env_config(void **state)
{
	struct want w = WANT(0, 2, 3, 6, 7, 10, 11);
	run(state, "c.yaml",
	    "step: {function: train_step}\\nschedule: {wait: 1, warmup: 1, active: 2}\\n",
	    "STEPSCOPE_CONFIG=c.yaml", NULL, &w);
}

/* skip_first 3, then warmup 1, active 3, once; from ./stepscope.yaml */
static void test_skip_first_cwd_yaml(void **state)
{
	struct want w = WANT(0, 4, 5, 6);
	run(state, "stepscope.yaml",
	    "step.function: train_step\\nschedule:\\n  skip_first: 3\\n  warmup: 1\\n"
	    "  active: 3\\n  repeat: 1\\n",
	    NULL, NULL, &w);
}

/* JAX style window [5, 8), from --set */
static void test_window_set(void **state)
{
	struct want w = WANT(0, 5, 6, 7);
	run(state, NULL, NULL, NULL,
	    "--set step.function=train_step --set window.start_step=5 --set window.end_step=8",
	    &w);
}

/* Lightning style: every 5 steps, wait 1, active 2, two cycles; from
 * STEPSCOPE_SET */
static void test_every_n_env_set(void **state)
{
	struct want w = WANT(0, 1, 2, 6, 7);
	run(state, NULL, NULL,
	    "STEPSCOPE_SET=step.function=train_step,every_n_steps=5,schedule.wait=1,"
	    "schedule.active=2,schedule.repeat=2",
	    NULL, &w);
}

/* stepscope_step() instead of step.function: N + 1 steps, 0 from start */
static void test_api_torch(void **state)
{
	struct want w = WANT(1, 2, 3, 6, 7);
	run(state, "c.yaml", "schedule: {wait: 1, warmup: 1, active: 2, repeat: 2}\\n", NULL,
	    "-c c.yaml", &w);
}

static void test_api_first_and_last(void **state)
{
	/* step 0 begins before main; step N (after the last stepscope_step)
	 * runs to exit */
	struct want w = WANT(1, 0, 1, 4, 5, 8, 9, 12);
	run(state, NULL, NULL, NULL, "--set every_n_steps=4 --set schedule.active=2", &w);
}

/* ------------------------------------------------------------ refusals */

struct bad {
	const char *yaml;     /* written to c.yaml (NULL: none) */
	const char *how;      /* env before the command, options after record */
	const char *opts;
	const char *msg;      /* the exact line after "stepscope: " */
};

#define NOTFN "is not a function in ./s-steps (check the name, and that the program was built with symbols)"
static const struct bad bad_record[] = {
	{"schedule:\\n  actve: 3\\n", "", "-c c.yaml",
	 "c.yaml:2:3: unknown key 'schedule.actve' (did you mean 'schedule.active'?)"},
	{"schedule:\\n  active: three\\n", "", "-c c.yaml",
	 "c.yaml:2:11: schedule.active must be an integer, got 'three'"},
	{"schedule:\\n  active: 0\\n", "", "-c c.yaml",
	 "c.yaml:2:11: schedule.active must be > 0, got 0"},
	{"buffer_kb: 10\\n", "", "-c c.yaml",
	 "c.yaml:1:12: buffer_kb must be between 64 and 65536, got 10"},
	{"schedule:\\n  active: 2\\nwindow:\\n  end_step: 4\\n", "", "-c c.yaml",
	 "c.yaml:3:1: schedule and window cannot both be given (choose one)"},
	{"window:\\n  start_step: 4\\n  end_step: 4\\n", "STEPSCOPE_CONFIG=c.yaml", "",
	 "c.yaml:3:3: window.end_step must be > window.start_step (4), got 4"},
	{"every_n_steps: 3\\nschedule: {wait: 1, warmup: 1, active: 2}\\n", "", "-c c.yaml",
	 "c.yaml:1:1: every_n_steps must be >= schedule.wait + schedule.warmup + "
	 "schedule.active (4), got 3"},
	{"schedule:\\n  wait: 1\\n", "", "-c c.yaml",
	 "c.yaml:1:1: schedule.active is required (how many steps each cycle records)"},
	{"schedule:\\n  active: 2\\n  active: 3\\n", "", "-c c.yaml",
	 "c.yaml:3:3: duplicate key 'schedule.active' (first given at 2:3)"},
	{"schedule:\\n\\tactive: 2\\n", "", "-c c.yaml",
	 "c.yaml:2:1: found character that cannot start any token (while scanning for the "
	 "next token at 2:1) (tabs are not allowed in YAML indentation; use spaces)"},
	{"schedule.repeat: -1\\nschedule.active: 1\\n", "", "-c c.yaml",
	 "c.yaml:1:18: schedule.repeat must be >= 0, got -1"},
	{"step:\\n  function: no_such_fn\\n", "", "-c c.yaml",
	 "c.yaml:2:3: step.function 'no_such_fn' " NOTFN},
	{"step: {function: train_stp}\\nschedule: {active: 1}\\n", "STEPSCOPE_CONFIG=c.yaml", "",
	 "c.yaml:1:8: step.function 'train_stp' is not a function in ./s-steps (did you mean "
	 "'train_step'?)"},
	/* a misspelling near two names: the nearer one */
	{NULL, "", "--set step.function=matmull",
	 "--set step.function=matmull: step.function 'matmull' is not a function in ./s-steps "
	 "(did you mean 'matmul'?)"},
	{NULL, "", "--set step.function=optimiser_update",
	 "--set step.function=optimiser_update: step.function 'optimiser_update' is not a "
	 "function in ./s-steps (did you mean 'optimizer_update'?)"},
	{NULL, "", "-c missing.yaml",
	 "missing.yaml: cannot read config: No such file or directory"},
	{NULL, "", "--set schedule.active=x",
	 "--set schedule.active=x: schedule.active must be an integer, got 'x'"},
	{NULL, "", "--set step.function=nope", "--set step.function=nope: step.function 'nope' " NOTFN},
	{NULL, "STEPSCOPE_SET=schedule.actve=3", "",
	 "STEPSCOPE_SET schedule.actve=3: unknown key 'schedule.actve' (did you mean "
	 "'schedule.active'?)"},
	{"step.function: train_step\\n", "STEPSCOPE_SET=step.function=nope", "",
	 "STEPSCOPE_SET step.function=nope: step.function 'nope' " NOTFN},
};

static void expect_refusal(struct ss_e2e *t, int st, const char *msg)
{
	char want[1024];
	snprintf(want, sizeof(want), "stepscope: %s\n", msg);
	if (st != 2 || strcmp(t->err, want)) {
		ss_e2e_show_last(t, st);
		SS_E2E_FAIL(t, "expected status 2 and exactly:\n%sgot status %d and:\n%s", want, st,
			    t->err);
	}
	SS_E2E_SH_OK(t, "test ! -e started && test ! -e rec");
}

/* A run without `record` is never stopped by its config (issue 45): the
 * same one line, then the program runs to its end unrecorded. */
static void expect_unrecorded(struct ss_e2e *t, int st, const char *msg)
{
	char want[1024];
	snprintf(want, sizeof(want), "stepscope: %s; the program runs unrecorded\n", msg);
	if (st != 0 || strcmp(t->err, want)) {
		ss_e2e_show_last(t, st);
		SS_E2E_FAIL(t, "expected status 0 and exactly:\n%sgot status %d and:\n%s", want, st,
			    t->err);
	}
	SS_E2E_SH_OK(t, "test -e started && test ! -e rec");
}

static void test_bad_configs_record(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	ss_e2e_build(t, "steps", NULL);
	for (size_t i = 0; i < sizeof(bad_record) / sizeof(bad_record[0]); i++) {
		const struct bad *b = &bad_record[i];
		SS_E2E_SH_OK(t, "rm -f c.yaml && %s%s%s", b->yaml ? "printf '" : "true",
			     b->yaml ? b->yaml : "", b->yaml ? "' > c.yaml" : "");
		int st = ss_e2e_sh(t, "%s " SS " record -o rec %s -- ./s-steps fn 4", b->how,
				   b->opts);
		expect_refusal(t, st, b->msg);
	}
	ss_e2e_pass(t);
}

/* The first line of a run names the config and what it changes from the
 * defaults, however it was given; a run into the default output directory
 * ends by counting the earlier runs there (issue 40). */
#define CLEAN "env -u STEPSCOPE_CONFIG -u STEPSCOPE_SET "
static void test_config_line(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static const struct {
		const char *how, *opts, *first;
	} cases[] = {
		{ "", "-o r1", "no config: the whole run, every call (the defaults)" },
		{ "", "-c c.yaml -o r2", "config -c c.yaml: step.function=train_step" },
		{ "STEPSCOPE_CONFIG=c.yaml", "-o r3",
		  "config STEPSCOPE_CONFIG=c.yaml: step.function=train_step" },
		{ "STEPSCOPE_SET=step.function=train_step", "-o r4",
		  "no config file, STEPSCOPE_SET: step.function=train_step" },
		{ "", "-c /dev/null -o r5", "config -c /dev/null: the defaults (the whole run)" },
	};
	char want[512];

	ss_e2e_build(t, "steps", NULL);
	SS_E2E_SH_OK(t, "printf 'step:\\n  function: train_step\\n' > c.yaml");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		SS_E2E_SH_OK(t, CLEAN "%s " SS " record %s -- ./s-steps fn 4 > /dev/null",
			     cases[i].how, cases[i].opts);
		snprintf(want, sizeof(want), "stepscope: %s\n", cases[i].first);
		SS_E2E_CHECK(t, !strncmp(t->err, want, strlen(want)) && !strstr(t->err, "earlier run"),
			     "record %s %s: expected the first line\n%sgot\n%s", cases[i].how,
			     cases[i].opts, want, t->err);
	}
	/* ./stepscope.yaml, picked up by a bare run, and --set on top */
	SS_E2E_SH_OK(t, "mkdir cwd && printf 'step: {function: train_step}\\nschedule: {wait: 1, "
		     "active: 2}\\n' > cwd/stepscope.yaml && cd cwd && " CLEAN SS " record "
		     "--set max_trace_mb=100 -- ../s-steps fn 4 > /dev/null");
	snprintf(want, sizeof(want), "stepscope: config ./stepscope.yaml (found in the working "
		 "directory) + --set: step.function=train_step, schedule.wait=1, "
		 "schedule.active=2, max_trace_mb=100\n");
	SS_E2E_CHECK(t, !strncmp(t->err, want, strlen(want)) && !strstr(t->err, "earlier run"),
		     "a run with ./stepscope.yaml: expected the first line\n%sgot\n%s", want,
		     t->err);
	/* the second bare run in the same place counts the first, not a
	 * directory without traces */
	SS_E2E_SH_OK(t, "mkdir cwd/stepscope-out/notes && cd cwd && " CLEAN SS " record -- "
		     "../s-steps fn 4 > /dev/null");
	SS_E2E_CHECK(t, ss_e2e_lines_with(t->err, "stepscope: 1 earlier run in stepscope-out/ "
					  "takes ") == 1 &&
		     strstr(t->err, " MB (record deletes none: remove those you are done "
			    "with)\nstepscope: next: stepscope symbolize stepscope-out/s-steps-"),
		     "a second run into stepscope-out/: expected a line counting the first "
		     "before the 'next:' line, got\n%s", t->err);
	SS_E2E_SH_OK(t, "test $(ls cwd/stepscope-out | wc -l) = 3");
	ss_e2e_pass(t);
}

/* The runtime itself refuses before main, without `stepscope record`. */
static void test_bad_configs_runtime(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static const struct bad bad_rt[] = {
		{"schedule:\\n  actve: 3\\n", "STEPSCOPE_CONFIG=c.yaml", "",
		 "c.yaml:2:3: unknown key 'schedule.actve' (did you mean 'schedule.active'?)"},
		{"step:\\n  function: no_such_fn\\n", "STEPSCOPE_CONFIG=c.yaml", "",
		 "c.yaml:2:3: step.function 'no_such_fn' is not a function in this program "
		 "(check the name, and that the program was built with symbols)"},
		{NULL, "STEPSCOPE_SET=step.function=nope", "",
		 "STEPSCOPE_SET step.function=nope: step.function 'nope' is not a function in "
		 "this program (check the name, and that the program was built with symbols)"},
		{NULL, "STEPSCOPE_SET=step.function=train_setp", "",
		 "STEPSCOPE_SET step.function=train_setp: step.function 'train_setp' is not a "
		 "function in this program (did you mean 'train_step'?)"},
		{"window: {start_step: 3, end_step: 2}\\n", "STEPSCOPE_CONFIG=c.yaml", "",
		 "c.yaml:1:25: window.end_step must be > window.start_step (3), got 2"},
		{NULL, "STEPSCOPE_SET=filter.exclude_file=nope.txt", "",
		 "STEPSCOPE_SET filter.exclude_file=nope.txt: cannot read nope.txt (write one function "
		 "name a line, e.g. with stepscope filter RUN -o FILE)"},
	};
	ss_e2e_build(t, "steps", NULL);
	for (size_t i = 0; i < sizeof(bad_rt) / sizeof(bad_rt[0]); i++) {
		const struct bad *b = &bad_rt[i];
		SS_E2E_SH_OK(t, "rm -f c.yaml && %s%s%s", b->yaml ? "printf '" : "true",
			     b->yaml ? b->yaml : "", b->yaml ? "' > c.yaml" : "");
		int st = ss_e2e_sh(t, "rm -f started && %s STEPSCOPE_DIR=\"$PWD/rec\" ./s-steps fn 4",
				   b->how);
		expect_unrecorded(t, st, b->msg);
	}
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_default_whole_run),
		SS_E2E_VARIANTS(test_torch_repeat2_cli_file),
		SS_E2E_VARIANTS(test_torch_repeat0_env_config),
		SS_E2E_VARIANTS(test_skip_first_cwd_yaml),
		SS_E2E_VARIANTS(test_window_set),
		SS_E2E_VARIANTS(test_every_n_env_set),
		SS_E2E_VARIANTS(test_api_torch),
		SS_E2E_VARIANTS(test_api_first_and_last),
		SS_E2E_TEST(test_bad_configs_record),
		SS_E2E_TEST(test_bad_configs_runtime),
		SS_E2E_TEST(test_config_line),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
