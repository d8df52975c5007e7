/*
 * config-suggest.c - the known key nearest to one the config misspelt
 * ("unknown key 'schedule.activ' (did you mean 'schedule.active'?)"), and
 * the edit distance other near-name suggestions use (record.args'
 * function names, the command line's options).
 *
 * Runs inside the profiled program before main, like config.c: no output,
 * no global state, no allocation.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "config-keys.h"

/* edit distance, capped: names longer than 63 characters are never near */
int ss_config_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[64], prev_diag, tmp;

	if (la >= 64 || lb >= 64)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		prev_diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int best = prev_diag + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev_diag = tmp;
		}
	}
	return row[lb];
}

int ss_config_near(const char *want, const char *cand, int *dist)
{
	int limit = (int)strlen(want) / 3, d;

	if (limit < 1)
		limit = 1;
	d = ss_config_distance(want, cand);
	if (dist)
		*dist = d;
	return d >= 1 && d <= limit;
}

const char *ss_cfg_last_part(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot ? dot + 1 : name;
}

static int starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/*
 * Nearest known key to an unknown one, or -1.  Ranked: the same last part
 * under another section ("active" -> "schedule.active"), then edit distance
 * up to 2, then one name being a prefix of the other (3+ characters).
 */
static int key_suggest(const char *name)
{
	int best = -1, best_score = 1000;

	for (int k = 0; k < I_NKEYS; k++) {
		const char *cand = ss_cfg_keys[k].name;
		int score = 1000, d;

		if (!strcmp(ss_cfg_last_part(name), ss_cfg_last_part(cand)) && strcmp(name, cand))
			score = 1;
		d = ss_config_distance(name, cand);
		if (d <= 2 && d * 2 < score)
			score = d * 2;
		/* a prefix either way, but "schedule.foo" is not near "schedule" */
		if (score > 5 && strlen(name) >= 3 &&
		    (starts_with(cand, name) ||
		     (starts_with(name, cand) && name[strlen(cand)] != '.')))
			score = 5;
		/* among prefixes, the longest shared one wins */
		if (score < best_score ||
		    (score == 5 && best_score == 5 && strlen(cand) > strlen(ss_cfg_keys[best].name))) {
			best_score = score;
			best = k;
		}
	}
	return best;
}

void ss_cfg_unknown_key_msg(char *msg, size_t len, const char *name)
{
	int s = key_suggest(name);

	if (s >= 0)
		ss_cfg_fmt(msg, len, "unknown key '%s' (did you mean '%s'?)", name, ss_cfg_keys[s].name);
	else
		ss_cfg_fmt(msg, len, "unknown key '%s' (docs/config.md lists the keys)", name);
}
