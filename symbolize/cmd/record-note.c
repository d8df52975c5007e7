/*
 * record-note.c - what `stepscope record` says around a run besides its
 * result: the first line names the config the run uses and what it
 * changes from the defaults (a ./stepscope.yaml in the working directory
 * changes what a bare run records: never silently), and a run in the
 * default output directory ends by counting the earlier runs left beside
 * it (directories with traces) and the room they take (record deletes
 * none: docs/commands.md).
 *
 * Must never: fail or hold up a run (what cannot be read is left out), or
 * print more than one line each.
 */
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmds.h"
#include "config.h"

#define SS_NOTE_MAX 300 /* the keys' part of the config line, in bytes */

void ss_record_note_config(const struct ss_config *cfg, const char *cli_path,
			   int nsets)
{
	struct ss_config def;
	const char *env = getenv("STEPSCOPE_CONFIG"), *set = getenv("STEPSCOPE_SET");
	char src[SS_CONFIG_PATH_MAX + 64], keys[SS_NOTE_MAX + 4] = "";
	char *d = NULL, *c = NULL, *l, *save = NULL;
	size_t n, k = 0;

	if (cli_path && *cli_path)
		snprintf(src, sizeof(src), "config -c %s", cli_path);
	else if (env && *env)
		snprintf(src, sizeof(src), "config STEPSCOPE_CONFIG=%s", env);
	else if (cfg->source[0])
		snprintf(src, sizeof(src), "config ./%s (found in the working directory)",
			 cfg->source);
	else
		snprintf(src, sizeof(src), "no config file");
	if (nsets)
		strcat(src, cfg->source[0] ? " + --set" : ", --set");
	if (set && *set)
		strcat(src, cfg->source[0] || nsets ? " + STEPSCOPE_SET" : ", STEPSCOPE_SET");

	/* the keys whose values differ from the defaults, in dump order */
	ss_config_defaults(&def);
	n = ss_config_dump(&def, NULL, 0) + 1;
	if ((d = malloc(n)))
		ss_config_dump(&def, d, n);
	n = ss_config_dump(cfg, NULL, 0) + 1;
	if ((c = malloc(n)))
		ss_config_dump(cfg, c, n);
	for (l = c ? strtok_r(c, "\n", &save) : NULL; l && d; l = strtok_r(NULL, "\n", &save)) {
		size_t ll = strlen(l), kl = strcspn(l, "=");
		const char *p = strstr(d, l), *q = d;
		if (p && (p == d || p[-1] == '\n') && (p[ll] == '\n' || !p[ll]))
			continue; /* as in the defaults */
		while (q && strncmp(q, l, kl + 1) && (q = strchr(q, '\n')))
			q++;
		if (!q && !strcmp(l + kl, "=0"))
			continue; /* a key the defaults leave out (the schedule's), at 0 */
		if (k + ll + 2 > SS_NOTE_MAX) {
			strcpy(keys + k, ", ...");
			k += 5;
			break;
		}
		k += (size_t)sprintf(keys + k, "%s%s", k ? ", " : "", l);
	}
	free(c);
	free(d);
	if (!strcmp(src, "no config file") && !k)
		fprintf(stderr, "stepscope: no config: the whole run, every call (the defaults)\n");
	else
		fprintf(stderr, "stepscope: %s: %s\n", src, k ? keys : "the defaults (the whole run)");
}

static unsigned long long ss_note_bytes;

static int ss_note_add(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)path;
	(void)f;
	if (flag == FTW_F)
		ss_note_bytes += (unsigned long long)st->st_blocks * 512;
	return 0;
}

/* Whether directory `path` holds a recorded run (a *.sstrace at its top):
 * an output_dir shared with other things counts only the runs. */
static int ss_note_is_run(const char *path)
{
	DIR *dp = opendir(path);
	struct dirent *e;
	int run = 0;

	if (!dp)
		return 0;
	while (!run && (e = readdir(dp))) {
		size_t n = strlen(e->d_name);
		run = n > 8 && !strcmp(e->d_name + n - 8, ".sstrace");
	}
	closedir(dp);
	return run;
}

void ss_record_note_earlier(const char *base, const char *dir)
{
	const char *self = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	DIR *dp = opendir(base);
	struct dirent *e;
	int runs = 0;
	double mb;

	if (!dp)
		return;
	ss_note_bytes = 0;
	while ((e = readdir(dp))) {
		char path[SS_CONFIG_PATH_MAX + 256];
		struct stat st;
		if (e->d_name[0] == '.' || !strcmp(e->d_name, self) ||
		    snprintf(path, sizeof(path), "%s/%s", base, e->d_name) >= (int)sizeof(path) ||
		    lstat(path, &st) || !S_ISDIR(st.st_mode) || !ss_note_is_run(path))
			continue;
		runs++;
		nftw(path, ss_note_add, 16, FTW_PHYS);
	}
	closedir(dp);
	if (!runs)
		return;
	mb = (double)ss_note_bytes / (1024.0 * 1024.0);
	fprintf(stderr, "stepscope: %d earlier run%s in %s/ take%s %.*f MB (record deletes none: "
		"remove those you are done with)\n", runs, runs == 1 ? "" : "s", base,
		runs == 1 ? "s" : "", mb < 10 ? 1 : 0, mb);
}
