/*
 * config-keys.h - the table of config keys and the helpers that config.c
 * (defaults, overrides, checks, dump) and config-yaml.c (the YAML file)
 * both use.  Not a public header: config.h is.  Everything here is hidden
 * in the runtime (-fvisibility=hidden) and prefixed ss_cfg_, so nothing
 * can clash with a program linking libstepscope.a.
 */
#ifndef SS_CONFIG_KEYS_H
#define SS_CONFIG_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define SS_CONFIG_FILE_MAX (1u << 20)   /* a config larger than 1 MiB is a mistake */
#define SS_KEY_NAME_MAX 128
#define SS_MSG_MAX 512
#define SS_CONFIG_DEPTH_MAX 64          /* collections inside collections */

enum key_type { T_SECTION, T_BOOL, T_INT, T_STR, T_STATS };

/* index of each key in ss_cfg_keys[]; also the index into ss_config.mark[] */
enum key_index {
	I_ENABLED,
	I_OUTPUT_DIR,
	I_STEP,
	I_STEP_FUNCTION,
	I_SCHEDULE,
	I_SKIP_FIRST,
	I_WAIT,
	I_WARMUP,
	I_ACTIVE,
	I_REPEAT,
	I_WINDOW,
	I_START_STEP,
	I_END_STEP,
	I_EVERY_N,
	I_MAX_TRACE_MB,
	I_BUFFER_KB,
	I_RECORD,
	I_RECORD_STACK,
	I_RECORD_DEPTH,
	I_RECORD_SCHED,
	I_RECORD_ARGS,
	I_MEMORY,
	I_MEMORY_ENABLED,
	I_MEMORY_INTERVAL,
	I_MEMORY_EVERY_N,
	I_MEMORY_ALLOCATIONS,
	I_GPU,
	I_GPU_ENABLED,
	I_STATS,
	I_LOG,
	I_LOG_EVERY_N,
	I_FILTER,
	I_FILTER_EXCLUDE,
	I_FILTER_INCLUDE,
	I_FILTER_EXCLUDE_FILE,
	I_FILTER_MAX_DEPTH,
	I_FILTER_MIN_DURATION,
	I_FLOPS,
	I_BYTES,
	I_NKEYS
};

_Static_assert(I_NKEYS <= SS_CONFIG_MAX_KEYS, "grow SS_CONFIG_MAX_KEYS in config.h");

#define MODE_BIT(m) (1u << (m))
#define ANY_MODE 0u

struct key {
	const char *name;      /* dotted name, as in the file and in --set */
	enum key_type type;
	size_t off;            /* field in struct ss_config (not for sections) */
	size_t size;           /* T_STR: capacity of the field */
	int64_t min, max;      /* T_INT: accepted range */
	int section;           /* enum key_index of the parent, -1 at top level */
	unsigned modes;        /* T_INT: range only checked in these modes */
};

/* snprintf into buf, never more than len bytes */
void ss_cfg_fmt(char *buf, size_t len, const char *f, ...)
	__attribute__((format(printf, 3, 4)));
void ss_cfg_show_bytes(const char *s, size_t n, char *out, size_t len);
int ss_cfg_key_find(const char *name);
int ss_cfg_first_child(int section);
const char *ss_cfg_last_part(const char *name);
void ss_cfg_unknown_key_msg(char *msg, size_t len, const char *name);
const char *ss_cfg_type_words(enum key_type t);
int ss_cfg_key_apply(struct ss_config *c, int k, const char *text, char *msg, size_t len);
int ss_cfg_load_file(struct ss_config *c, const char *path, char *err, size_t errlen);

extern const struct key ss_cfg_keys[I_NKEYS];

#endif /* SS_CONFIG_KEYS_H */
