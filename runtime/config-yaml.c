/*
 * config-yaml.c - a config file: read it whole, refuse what is too big or
 * nested too deep, load it with libyaml's document API and walk its
 * mappings against the key table (config-keys.h), then decide the
 * schedule mode from the sections given.
 *
 * Design: the walk fills a heap copy of the config and records where each
 * key was written (line:col, for later cross-key errors); the caller's
 * config is replaced only when the whole file is good.  Errors are one
 * line, "FILE:LINE:COL: what", libyaml's own text for malformed YAML.
 *
 * Runs before main in the profiled program and inside the stepscope
 * command: must never print, exit, or leak on an error path.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "config.h"
#include "config-keys.h"
#include "flops-expr.h"

/* ------------------------------------------------------------ YAML file */

struct loader {
	struct ss_config *c;         /* the copy being filled */
	const char *path;
	yaml_document_t *doc;
	yaml_mark_t seen_at[I_NKEYS];  /* where each key was written */
	int seen[I_NKEYS];
	yaml_mark_t used_at[I_NKEYS];  /* first key written under each section */
	int used[I_NKEYS];
	char *err;
	size_t errlen;
};

static int load_fail(struct loader *L, yaml_mark_t m, const char *msg)
{
	ss_cfg_fmt(L->err, L->errlen, "%s:%zu:%zu: %s", L->path, m.line + 1, m.column + 1, msg);
	return -1;
}

static int node_is_null(const yaml_node_t *n)
{
	const char *s = (const char *)n->data.scalar.value;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

static const char *node_kind(const yaml_node_t *n)
{
	return n->type == YAML_MAPPING_NODE ? "a mapping" : "a list";
}

/* flops: (and bytes:, key k) a mapping of function names to
 * expressions, kept as "fn=expr;..." with each entry's line (config.h);
 * each expression is checked here, at its own line. */
static int load_flops(struct loader *L, yaml_node_t *map, int k)
{
	const char *key = k == I_BYTES ? "bytes" : "flops";
	uint32_t *lines = k == I_BYTES ? L->c->bytes_line : L->c->flops_line;
	char list[SS_CONFIG_LIST_MAX + 1] = "", msg[SS_MSG_MAX], why[256];
	size_t used = 0, n = 0;

	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(L->doc, p->key);
		yaml_node_t *vn = yaml_document_get_node(L->doc, p->value);
		const char *fn, *ex;

		if (!kn || !vn)
			continue;
		if (kn->type != YAML_SCALAR_NODE || vn->type != YAML_SCALAR_NODE) {
			ss_cfg_fmt(msg, sizeof(msg), "%s must map function names to expressions (matmul_forward: \"%s\")",
			    key, k == I_BYTES ? "4*(B*T*C+C*OC+B*T*OC)" : "2*B*T*C*OC");
			return load_fail(L, kn->start_mark, msg);
		}
		fn = (const char *)kn->data.scalar.value;
		ex = (const char *)vn->data.scalar.value;
		if (strchr(fn, '=') || strchr(fn, ';') || strchr(ex, ';') || !*fn) {
			ss_cfg_fmt(msg, sizeof(msg), "%s: '%s' is not a function name", key, fn);
			return load_fail(L, kn->start_mark, msg);
		}
		if (ss_flops_check(ex, strlen(ex), why, sizeof(why))) {
			ss_cfg_fmt(msg, sizeof(msg), "%s: %s: %s", key, fn, why);
			return load_fail(L, vn->start_mark, msg);
		}
		if (n >= SS_FLOPS_MAX || used + strlen(fn) + strlen(ex) + 3 > sizeof(list)) {
			ss_cfg_fmt(msg, sizeof(msg), "%s has too many entries (at most %d, %d characters)",
			    key, SS_FLOPS_MAX, SS_CONFIG_LIST_MAX - 1);
			return load_fail(L, kn->start_mark, msg);
		}
		lines[n++] = (uint32_t)kn->start_mark.line + 1;
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s=%s", used ? ";" : "", fn, ex);
	}
	if (ss_cfg_key_apply(L->c, k, list, msg, sizeof(msg)))
		return load_fail(L, map->start_mark, msg);
	return 0;
}

static int walk_mapping(struct loader *L, yaml_node_t *map, int parent)
{
	char name[SS_KEY_NAME_MAX], msg[SS_MSG_MAX];

	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(L->doc, p->key);
		yaml_node_t *vn = yaml_document_get_node(L->doc, p->value);
		int k, section;

		if (!kn || !vn)
			continue;
		if (kn->type != YAML_SCALAR_NODE) {
			ss_cfg_fmt(msg, sizeof(msg), "a key must be a plain name, got %s", node_kind(kn));
			return load_fail(L, kn->start_mark, msg);
		}
		if (strlen((const char *)kn->data.scalar.value) != kn->data.scalar.length) {
			char shown[SS_KEY_NAME_MAX];

			ss_cfg_show_bytes((const char *)kn->data.scalar.value, kn->data.scalar.length, shown,
				   sizeof(shown));
			ss_cfg_fmt(msg, sizeof(msg), "a key must not contain a NUL byte, got '%s'", shown);
			return load_fail(L, kn->start_mark, msg);
		}
		if (parent >= 0)
			ss_cfg_fmt(name, sizeof(name), "%s.%s", ss_cfg_keys[parent].name, (const char *)kn->data.scalar.value);
		else
			ss_cfg_fmt(name, sizeof(name), "%s", (const char *)kn->data.scalar.value);
		k = ss_cfg_key_find(name);
		if (k < 0) {
			ss_cfg_unknown_key_msg(msg, sizeof(msg), name);
			return load_fail(L, kn->start_mark, msg);
		}
		if (L->seen[k]) {
			ss_cfg_fmt(msg, sizeof(msg), "duplicate key '%s' (first given at %zu:%zu)", name,
			    L->seen_at[k].line + 1, L->seen_at[k].column + 1);
			return load_fail(L, kn->start_mark, msg);
		}
		L->seen[k] = 1;
		L->seen_at[k] = kn->start_mark;
		L->c->mark[k].line = (uint32_t)kn->start_mark.line + 1;
		L->c->mark[k].col = (uint32_t)kn->start_mark.column + 1;
		section = ss_cfg_keys[k].type == T_SECTION ? k : ss_cfg_keys[k].section;
		if (section >= 0 && !L->used[section]) {
			L->used[section] = 1;
			L->used_at[section] = kn->start_mark;
		}

		if (ss_cfg_keys[k].type == T_SECTION) {
			if (vn->type == YAML_MAPPING_NODE) {
				if (walk_mapping(L, vn, k))
					return -1;
				continue;
			}
			if (node_is_null(vn))
				continue;
			if (vn->type == YAML_SCALAR_NODE)
				ss_cfg_fmt(msg, sizeof(msg), "%s must be a mapping of keys (e.g. %s: {%s: ...}), got '%s'",
				    name, name, ss_cfg_last_part(ss_cfg_keys[ss_cfg_first_child(k)].name),
				    (const char *)vn->data.scalar.value);
			else
				ss_cfg_fmt(msg, sizeof(msg), "%s must be a mapping of keys, got a list", name);
			return load_fail(L, vn->start_mark, msg);
		}
		/* flops:, bytes: function -> expression (flops-expr.c) */
		if ((k == I_FLOPS || k == I_BYTES) && vn->type == YAML_MAPPING_NODE) {
			if (load_flops(L, vn, k))
				return -1;
			continue;
		}
		/* filter.exclude / filter.include / record.args: a list of globs */
		if (vn->type == YAML_SEQUENCE_NODE &&
		    (k == I_FILTER_EXCLUDE || k == I_FILTER_INCLUDE || k == I_RECORD_ARGS)) {
			char list[SS_CONFIG_LIST_MAX + 1] = "";
			size_t used = 0;

			for (yaml_node_item_t *it = vn->data.sequence.items.start;
			     it < vn->data.sequence.items.top; it++) {
				yaml_node_t *in = yaml_document_get_node(L->doc, *it);
				const char *v;

				if (!in || in->type != YAML_SCALAR_NODE) {
					ss_cfg_fmt(msg, sizeof(msg), "%s must be a list of name globs, got %s",
					    name, in ? node_kind(in) : "an empty item");
					return load_fail(L, in ? in->start_mark : vn->start_mark, msg);
				}
				v = (const char *)in->data.scalar.value;
				if (strlen(v) != in->data.scalar.length) {
					char shown[SS_KEY_NAME_MAX];

					ss_cfg_show_bytes(v, in->data.scalar.length, shown, sizeof(shown));
					ss_cfg_fmt(msg, sizeof(msg), "%s must not contain a NUL byte, got '%s'",
					    name, shown);
					return load_fail(L, in->start_mark, msg);
				}
				if (used + strlen(v) + 2 > sizeof(list)) {
					ss_cfg_fmt(msg, sizeof(msg), "%s is too long (at most %d characters)",
					    name, SS_CONFIG_LIST_MAX - 1);
					return load_fail(L, in->start_mark, msg);
				}
				used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
							 used ? "," : "", v);
			}
			if (ss_cfg_key_apply(L->c, k, list, msg, sizeof(msg)))
				return load_fail(L, vn->start_mark, msg);
			continue;
		}
		if (vn->type != YAML_SCALAR_NODE) {
			ss_cfg_fmt(msg, sizeof(msg), "%s must be %s, got %s", name, ss_cfg_type_words(ss_cfg_keys[k].type),
			    node_kind(vn));
			return load_fail(L, vn->start_mark, msg);
		}
		if (strlen((const char *)vn->data.scalar.value) != vn->data.scalar.length) {
			char shown[SS_KEY_NAME_MAX];

			ss_cfg_show_bytes((const char *)vn->data.scalar.value, vn->data.scalar.length, shown,
				   sizeof(shown));
			ss_cfg_fmt(msg, sizeof(msg), "%s must not contain a NUL byte, got '%s'", name, shown);
			return load_fail(L, vn->start_mark, msg);
		}
		if (ss_cfg_key_apply(L->c, k, node_is_null(vn) ? "" : (const char *)vn->data.scalar.value,
			      msg, sizeof(msg)))
			return load_fail(L, vn->start_mark, msg);
	}
	return 0;
}

static int mark_before(yaml_mark_t a, yaml_mark_t b)
{
	return a.index < b.index;
}

/* which schedule the file chose; refuses two at once */
static int load_mode(struct loader *L)
{
	int sched = L->used[I_SCHEDULE], window = L->used[I_WINDOW], every = L->seen[I_EVERY_N];

	if (sched && window) {
		yaml_mark_t later = mark_before(L->used_at[I_SCHEDULE], L->used_at[I_WINDOW])
					    ? L->used_at[I_WINDOW] : L->used_at[I_SCHEDULE];

		return load_fail(L, later, "schedule and window cannot both be given (choose one)");
	}
	if (window && every) {
		yaml_mark_t later = mark_before(L->used_at[I_WINDOW], L->seen_at[I_EVERY_N])
					    ? L->seen_at[I_EVERY_N] : L->used_at[I_WINDOW];

		return load_fail(L, later, "window and every_n_steps cannot both be given (choose one)");
	}
	/* a section only written through dotted keys gets the first one's mark */
	if (sched && !L->seen[I_SCHEDULE]) {
		L->c->mark[I_SCHEDULE].line = (uint32_t)L->used_at[I_SCHEDULE].line + 1;
		L->c->mark[I_SCHEDULE].col = (uint32_t)L->used_at[I_SCHEDULE].column + 1;
	}
	if (window && !L->seen[I_WINDOW]) {
		L->c->mark[I_WINDOW].line = (uint32_t)L->used_at[I_WINDOW].line + 1;
		L->c->mark[I_WINDOW].col = (uint32_t)L->used_at[I_WINDOW].column + 1;
	}
	if (every)
		L->c->mode = SS_SCHED_EVERY_N;
	else if (sched)
		L->c->mode = SS_SCHED_TORCH;
	else if (window)
		L->c->mode = SS_SCHED_WINDOW;
	return 0;
}

static void parser_error(struct loader *L, yaml_parser_t *ps, const char *buf, size_t n)
{
	const char *hint = "";

	switch (ps->error) {
	case YAML_MEMORY_ERROR:
		ss_cfg_fmt(L->err, L->errlen, "%s: out of memory while reading config", L->path);
		return;
	case YAML_READER_ERROR:
		ss_cfg_fmt(L->err, L->errlen, "%s: %s at byte %zu", L->path,
		    ps->problem ? ps->problem : "cannot read", ps->problem_offset);
		return;
	default:
		break;
	}
	if (ps->problem_mark.index < n && buf[ps->problem_mark.index] == '\t')
		hint = " (tabs are not allowed in YAML indentation; use spaces)";
	if (ps->context)
		ss_cfg_fmt(L->err, L->errlen, "%s:%zu:%zu: %s (%s at %zu:%zu)%s", L->path,
		    ps->problem_mark.line + 1, ps->problem_mark.column + 1,
		    ps->problem ? ps->problem : "invalid YAML", ps->context,
		    ps->context_mark.line + 1, ps->context_mark.column + 1, hint);
	else
		ss_cfg_fmt(L->err, L->errlen, "%s:%zu:%zu: %s%s", L->path, ps->problem_mark.line + 1,
		    ps->problem_mark.column + 1, ps->problem ? ps->problem : "invalid YAML", hint);
}

/* whole file into a NUL-terminated heap buffer; NULL with errno set */
static char *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, len = 0;

	if (!f)
		return NULL;
	for (;;) {
		size_t got;

		if (len + 4096 + 1 > cap) {
			char *nb;

			cap = cap ? cap * 2 : 8192;
			if (cap > SS_CONFIG_FILE_MAX + 8192) {
				errno = EFBIG;
				goto fail;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				errno = ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
		if (got == 0) {
			if (ferror(f)) {
				if (!errno)
					errno = EIO;
				goto fail;
			}
			break;
		}
		if (len > SS_CONFIG_FILE_MAX) {
			errno = EFBIG;
			goto fail;
		}
	}
	fclose(f);
	buf[len] = 0;
	*n = len;
	return buf;
fail:
	{
		int e = errno;

		free(buf);
		fclose(f);
		errno = e;
	}
	return NULL;
}

/* Refuse nesting deeper than SS_CONFIG_DEPTH_MAX before loading the
 * document: libyaml's loader takes time quadratic in the depth (100k
 * nested '[' take a minute), and no config nests past three levels.  The
 * events are read only up to the first node too deep, so the scanner never
 * holds more than a few hundred open collections.  0 when the depth is
 * fine (a syntax error is left to the loader, which reports it). */
static int check_depth(struct loader *L, const char *text, size_t n)
{
	yaml_parser_t ps;
	yaml_event_t ev;
	int depth = 0, rc = 0;

	if (!yaml_parser_initialize(&ps))
		return 0; /* the loader reports it */
	yaml_parser_set_input_string(&ps, (const unsigned char *)text, n);
	for (;;) {
		if (!yaml_parser_parse(&ps, &ev))
			break;
		yaml_event_type_t type = ev.type;
		if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
			if (++depth > SS_CONFIG_DEPTH_MAX) {
				char msg[SS_MSG_MAX];

				ss_cfg_fmt(msg, sizeof(msg), "nested more than %d levels deep (a config needs three)",
				    SS_CONFIG_DEPTH_MAX);
				rc = load_fail(L, ev.start_mark, msg);
				yaml_event_delete(&ev);
				break;
			}
		} else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) {
			depth--;
		}
		yaml_event_delete(&ev);
		if (type == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&ps);
	return rc;
}

int ss_cfg_load_file(struct ss_config *c, const char *path, char *err, size_t errlen)
{
	struct loader *L = NULL;
	struct ss_config *copy = NULL;
	yaml_parser_t parser;
	yaml_document_t doc, next;
	yaml_node_t *root;
	char *text;
	size_t n = 0;
	int rc = -1, have_doc = 0, have_next = 0;

	if (!path || !*path) {
		ss_cfg_fmt(err, errlen, "config: no config file named");
		return -1;
	}
	text = read_file(path, &n);
	if (!text) {
		ss_cfg_fmt(err, errlen, "%s: cannot read config: %s", path, strerror(errno));
		return -1;
	}
	copy = malloc(sizeof(*copy));
	L = calloc(1, sizeof(*L));
	if (!copy || !L) {
		ss_cfg_fmt(err, errlen, "%s: out of memory while reading config", path);
		free(copy);
		free(L);
		free(text);
		return -1;
	}
	memcpy(copy, c, sizeof(*copy));
	/* positions from an earlier source would point into the wrong file */
	memset(copy->mark, 0, sizeof(copy->mark));
	ss_cfg_fmt(copy->source, sizeof(copy->source), "%s", path);
	L->c = copy;
	L->path = path;
	L->doc = &doc;
	L->err = err;
	L->errlen = errlen;

	if (check_depth(L, text, n))
		goto out_text;
	if (!yaml_parser_initialize(&parser)) {
		ss_cfg_fmt(err, errlen, "%s: out of memory while reading config", path);
		goto out_text;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, n);
	if (!yaml_parser_load(&parser, &doc)) {
		parser_error(L, &parser, text, n);
		goto out;
	}
	have_doc = 1;
	root = yaml_document_get_root_node(&doc);
	if (root) {
		if (root->type != YAML_MAPPING_NODE && !node_is_null(root)) {
			char msg[SS_MSG_MAX];

			ss_cfg_fmt(msg, sizeof(msg), "the config must be a mapping of keys (e.g. 'enabled: true'), got %s",
			    root->type == YAML_SCALAR_NODE ? "a single value" : "a list");
			load_fail(L, root->start_mark, msg);
			goto out;
		}
		if (root->type == YAML_MAPPING_NODE && walk_mapping(L, root, -1))
			goto out;
		if (!yaml_parser_load(&parser, &next)) {
			parser_error(L, &parser, text, n);
			goto out;
		}
		have_next = 1;
		if (yaml_document_get_root_node(&next)) {
			load_fail(L, next.start_mark, "only one YAML document is allowed in a config (remove the '---' and what follows)");
			goto out;
		}
	}
	if (load_mode(L))
		goto out;
	memcpy(c, copy, sizeof(*c));
	rc = 0;
out:
	if (have_next)
		yaml_document_delete(&next);
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
out_text:
	free(text);
	free(copy);
	free(L);
	return rc;
}
