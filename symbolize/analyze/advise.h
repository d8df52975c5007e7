/*
 * advise.h - `stepscope advise RUN` (and the overview at the top of
 * `stepscope html`): where each recorded step's time went, split into
 * categories that add up to the step, and findings ranked by the time
 * they would save per step, each with its evidence and what to do.
 *
 * The core (advise.c) walks the run once with an aggregator, the
 * allocation and argument reports, and whatever exporters the checks ask
 * for; it splits every recorded step into enum ss_adv_cat; then it gives
 * the run to every check of ss_adv_checks (advise-checks.c).  A check
 * lives in its own file (advise-<name>.c), defines one
 * `const struct ss_adv_check ss_adv_check_<name>` and adds findings, or
 * says why it could not judge this run (no record.sched, no MPI ranks,
 * ...).  A check that judged and found nothing is printed as "nothing
 * found" with what it looked at.
 *
 * Every saving is computed from this run's numbers (docs/advise.md says
 * how, per check): a finding is a promise the user can test by applying
 * its advice.
 */
#ifndef SS_ADVISE_H
#define SS_ADVISE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "agg.h"
#include "export.h"
#include "overhead.h"

struct ss_alloc_report;
struct ss_args_report;
struct ss_adv_core;

/* Where a step's time went.  The categories of a step add up to its
 * duration (end - begin) exactly: SS_ADV_OPS takes what no other
 * category claims. */
enum ss_adv_cat {
	SS_ADV_OPS = 0,        /* the user's operators on the CPU */
	SS_ADV_OMP_WAIT,       /* "omp start/barrier: wait for the team" */
	SS_ADV_PREEMPTED,      /* off the CPU, runnable (record.sched) */
	SS_ADV_BLOCKED,        /* off the CPU, blocked: I/O, locks, sleep */
	SS_ADV_ALLOC,          /* in malloc/free/... (record.alloc) */
	SS_ADV_HOOKS,          /* stepscope's own hooks (calls x pair_ns) */
	SS_ADV_GPU_WAIT,       /* the host waiting for the GPU (sync API) */
	SS_ADV_GPU_API,        /* other CUDA API calls (launches, copies) */
	SS_ADV_NCAT
};

/* "operators", "omp team wait", ... (column heads), and a key for CSV
 * and JSON ("ops", "omp_wait", ...). */
const char *ss_adv_cat_name(enum ss_adv_cat c);
const char *ss_adv_cat_key(enum ss_adv_cat c);
struct ss_adv_run;
/* Whether c is a row of run's breakdown: the run can have it (off-CPU
 * with record.sched, hooks with a calibration, ...) or it is not zero
 * (advise-print.c; the html overview shows the same rows). */
int ss_adv_cat_shown(const struct ss_adv_run *run, enum ss_adv_cat c);

/* One top-level operator of a step: a function called directly by the
 * step function (or the outermost calls in the step), its time in it. */
struct ss_adv_op {
	const char *name;      /* owned by the run */
	uint64_t ns;           /* inclusive, in this step */
};

/* One recorded step on its stepping thread. */
struct ss_adv_step {
	uint64_t pid, tid, step;
	uint64_t begin_ns, end_ns;
	uint64_t cat[SS_ADV_NCAT];   /* sum == end_ns - begin_ns */
	int off_unknown;             /* no switch ring: off-CPU not known */
	struct ss_adv_op *op;        /* by ns, descending */
	size_t nop;
};

/* The run as the checks see it.  Everything is owned by the core and
 * valid until ss_adv_release. */
struct ss_adv_run {
	const char *dir, *backend;
	struct ss_agg *agg;          /* walked: rows, trees, steps, counters */
	struct ss_overhead ovh;      /* ss_overhead_read of dir */
	const struct ss_alloc_report *alloc;  /* NULL: no allocation records */
	struct ss_args_report *args; /* NULL: no record.args */
	int have_offcpu;             /* record.sched was on */
	int have_gpu;                /* gpu activity recorded */
	struct ss_adv_step *steps;   /* recorded steps, by (pid, begin) */
	size_t nsteps;
	uint64_t median_step_ns;     /* over steps */
	uint64_t cat_mean[SS_ADV_NCAT];  /* mean per step */
	struct ss_adv_core *core;    /* the core's own (advise.c) */
};

/* Recorded calls in step s on its own thread (what the hooks category
 * charges pair_ns for), and in *all_threads (may be NULL) those of every
 * thread of its process that began in that step (worker threads too). */
uint64_t ss_adv_calls(const struct ss_adv_run *run, const struct ss_adv_step *s,
		      uint64_t *all_threads);

#define SS_ADV_FUNCS 4

/* One finding. */
struct ss_adv_finding {
	const char *check;           /* the check's name */
	double save_ns;              /* predicted saving per step, ns (ranks) */
	double save_lo, save_hi;     /* its range, when the check knows one
	                              * (else both == save_ns) */
	char title[200];             /* one line: what is wrong */
	char evidence[1200];         /* numbers from this run, sentences */
	char advice[600];            /* what to do, concretely */
	char how[300];               /* how save_ns was computed, one line */
	/* the report rows it names (the HTML links to them) */
	char funcs[SS_ADV_FUNCS][128];
	int nfuncs;
};

struct ss_adv_list {
	struct ss_adv_finding *v;
	size_t n, cap;
};

/* A new finding in l (zeroed, check set), or NULL when out of memory. */
struct ss_adv_finding *ss_adv_add(struct ss_adv_list *l, const char *check);

/* For the checks that read argument shapes (peak, shape): 1 with the
 * reason in why when the run has no record.args or no recorded step
 * (the check cannot judge it), else 0. */
int ss_adv_need_args(const struct ss_adv_run *run, char *why, size_t whylen);

/* The cost of one malloc or free of `size` bytes on this machine, ns:
 * half a malloc/free pair, timed once per size bucket in this process
 * (advise-alloc-cost.c); what the allocation category charges per
 * allocation record. */
double ss_adv_alloc_call_ns(uint64_t size);

/* One check. */
struct ss_adv_check {
	const char *name;            /* "omp-oversubscribed", ... */
	const char *looks_at;        /* for "nothing found": what it judged */
	/* Optional: an exporter to feed in the core's walk, its state in
	 * *state (NULL: the check needs none).  The core feeds it and calls
	 * its end; release(state) frees the exporter with the state. */
	struct ss_exporter *(*exporter)(const char *dir, void **state);
	/* Judge the run: add findings to out and return 0; or return 1 when
	 * it cannot judge this run, with the reason in why ("the run has no
	 * record.sched"); -1 out of memory. */
	int (*judge)(const struct ss_adv_run *run, void *state, struct ss_adv_list *out,
		     char *why, size_t whylen);
	void (*release)(void *state);
};

/* Every check (advise-checks.c); an entry is NULL where that check's
 * file is not built in.  ss_adv_nchecks entries. */
extern const struct ss_adv_check *const ss_adv_checks[];
extern const size_t ss_adv_nchecks;

/* The result: the run, the findings sorted by save_ns descending, and
 * per check whether it judged (0), could not (1, why[i]), or is not
 * built in (-1: its ss_adv_checks entry is NULL). */
struct ss_adv_result {
	struct ss_adv_run run;
	struct ss_adv_list found;
	size_t nchecks;
	int *status;
	char (*why)[200];
};

/* Walk dir and judge it.  0; 2 bad input (message in err); 1 internal. */
int ss_adv_build(const char *dir, const char *backend, int quiet, struct ss_adv_result *r,
		 char *err, size_t errlen);
void ss_adv_release(struct ss_adv_result *r);

/* The breakdown and the findings, as text, csv or json (advise-print.c;
 * csv: the per-step table only).  0, -1 on a write error or an unknown
 * format. */
int ss_adv_print(FILE *f, const struct ss_adv_result *r, const char *format);
/* ... with flags: SS_ADV_PRINT_STEPS adds a row per step to the text */
enum ss_adv_print_flags {
	SS_ADV_PRINT_STEPS = 1 << 0,
};
int ss_adv_print_opts(FILE *f, const struct ss_adv_result *r, const char *format,
		      unsigned flags);

#endif /* SS_ADVISE_H */
