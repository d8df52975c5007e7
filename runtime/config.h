/*
 * config.h - stepscope's window config: defaults, the YAML file, overrides.
 *
 * Shared by the runtime (which reads it before main) and the stepscope
 * command (which checks it before starting the program), so both accept and
 * refuse exactly the same input with the same message.  Parsing allocates
 * and may be slow; it never runs on the hot path.
 *
 * Errors are one line, "FILE:LINE:COL: what is wrong" where a position is
 * known ("FILE: ..." otherwise, or "ORIGIN KEY=VALUE: ..." for an override,
 * e.g. "--set schedule.active=x: ..."), lowercase, no final period, written
 * into the caller's buffer.  docs/config.md is the user's reference.
 */
#ifndef SS_CONFIG_H
#define SS_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define SS_CONFIG_PATH_MAX 4096
#define SS_CONFIG_NAME_MAX 256
#define SS_FLOPS_MAX 64         /* flops: entries */
#define SS_CONFIG_MAX_KEYS 48   /* room in ss_config.mark[] (config.c's key table) */
#define SS_CONFIG_ORIGIN_MAX 64
#define SS_CONFIG_LIST_MAX 4096 /* filter.exclude / filter.include */

enum ss_sched_mode {
	SS_SCHED_ALL = 0,      /* no schedule: every step (the whole run) */
	SS_SCHED_TORCH = 1,    /* skip_first, then cycles of wait/warmup/active */
	SS_SCHED_WINDOW = 2,   /* JAX style: start_step <= step < end_step */
	SS_SCHED_EVERY_N = 3,  /* Lightning style: cycles of every_n_steps steps,
	                        * each: wait, warmup, active, rest idle */
};

enum ss_stats_scope {
	SS_STATS_WINDOW = 0,     /* stats: window (default) - recorded steps only */
	SS_STATS_WHOLE_RUN = 1,  /* stats: whole_run */
};

/* Where a key got its value, so cross-key errors can point at it. */
struct ss_config_mark {
	uint32_t line, col;                  /* 1-based in `source`; 0 = not from the file */
	char origin[SS_CONFIG_ORIGIN_MAX];   /* "--set key=val" for an override, else "" */
};

struct ss_config {
	int enabled;                           /* enabled: true */
	char output_dir[SS_CONFIG_PATH_MAX];   /* output_dir: stepscope-out */
	char step_function[SS_CONFIG_NAME_MAX];/* step.function: "" = none */
	enum ss_sched_mode mode;
	/* schedule: (also read by every_n_steps mode) */
	int64_t skip_first, wait, warmup, active, repeat;
	/* window: */
	int64_t start_step, end_step;
	int64_t every_n_steps;
	/* limits */
	int64_t max_trace_mb;                  /* default 4096; 0 = unlimited */
	int64_t buffer_kb;                     /* per-thread chunk, default 1024 */
	/* record: stack capture at each recorded entry */
	int record_stack;                      /* record.stack: false */
	int64_t record_stack_depth;            /* record.stack_depth: 16, 1..128 */
	int record_sched;                      /* record.sched: false (sched.c) */
	/* record.args: name globs of the functions whose calls keep their
	 * arguments (runtime/args.c, docs/shapes.md), "" = none */
	char record_args[SS_CONFIG_LIST_MAX];
	/* flops: "function=expression" entries separated by ';' (the YAML
	 * mapping, in file order; flops-expr.c), and the line of each */
	char flops[SS_CONFIG_LIST_MAX];
	uint32_t flops_line[SS_FLOPS_MAX];
	/* bytes: the same for the bytes a call reads and writes (advise's
	 * "peak" check: compute- or memory-bound); SS_FLOPS_MAX entries */
	char bytes[SS_CONFIG_LIST_MAX];
	uint32_t bytes_line[SS_FLOPS_MAX];
	/* memory: poller */
	int memory_enabled;                    /* memory.enabled: false */
	int64_t memory_interval_ms;            /* memory.interval_ms: 10, 1..60000 */
	int64_t memory_every_n_steps;          /* memory.every_n_steps: 100, > 0 */
	int memory_allocations;                /* memory.allocations: false (alloc.c) */
	int gpu_enabled;                       /* gpu.enabled: false (CUPTI) */
	enum ss_stats_scope stats;             /* stats: window */
	int64_t log_every_n_steps;             /* log.every_n_steps: 0 = never */
	/* filter: which calls are recorded (runtime/filter.c, docs/filters.md);
	 * lists are name globs separated by commas or spaces */
	char filter_exclude[SS_CONFIG_LIST_MAX];   /* filter.exclude: "" */
	char filter_include[SS_CONFIG_LIST_MAX];   /* filter.include: "" = all */
	char filter_exclude_file[SS_CONFIG_PATH_MAX]; /* filter.exclude_file */
	int64_t filter_max_depth;              /* filter.max_depth: 0 = any */
	int64_t filter_min_duration_us;        /* filter.min_duration_us: 0 */
	/* where it came from, for messages; "" = defaults only */
	char source[SS_CONFIG_PATH_MAX];
	/* per key, indexed by config.c's key table; filled by load_file/set */
	struct ss_config_mark mark[SS_CONFIG_MAX_KEYS];
};

/* Defaults: enabled, output_dir "stepscope-out", mode ALL. */
void ss_config_defaults(struct ss_config *c);

/* Read a YAML file on top of *c.  0 on success, -1 with err filled. */
int ss_config_load_file(struct ss_config *c, const char *path, char *err,
			size_t errlen);

/* Apply one "dotted.key=value" override; origin names it in messages
 * ("--set", "STEPSCOPE_SET").  0 or -1 with err. */
int ss_config_set(struct ss_config *c, const char *keyval, const char *origin,
		  char *err, size_t errlen);

/* Cross-key checks (active > 0 when a schedule is given, end > start, ...).
 * 0 or -1 with err. */
int ss_config_check(const struct ss_config *c, char *err, size_t errlen);

/* The whole lookup a user gets: defaults; then the file (cli_path if not
 * NULL, else $STEPSCOPE_CONFIG, else ./stepscope.yaml if it exists); then
 * each of the `nsets` cli overrides; then $STEPSCOPE_SET (comma-separated);
 * then ss_config_check.  0 or -1 with err. */
int ss_config_resolve(struct ss_config *c, const char *cli_path,
		      const char *const *sets, size_t nsets, char *err,
		      size_t errlen);

/* Where `key` (a dotted name) got its value, as a message prefix:
 * "FILE:LINE:COL: ", "--set key=value: ", "FILE: " or "config: ". */
void ss_config_where(const struct ss_config *c, const char *key, char *buf,
		     size_t len);

/* Edit distance (insertions, deletions, substitutions) between two names
 * of under 64 bytes; 99 for longer ones.  For "did you mean" suggestions. */
int ss_config_distance(const char *a, const char *b);

/* Whether `cand` is near enough to `want` to be suggested for it: a
 * distance of 1 .. one in three of want's characters (at least 1). */
int ss_config_near(const char *want, const char *cand, int *dist);

/* Write the effective config as "key=value\n" lines (the form --set and
 * STEPSCOPE_SET accept).  Returns the length it needed, like snprintf. */
size_t ss_config_dump(const struct ss_config *c, char *buf, size_t len);

#endif /* SS_CONFIG_H */
