/*
 * test-man.c - the manual page (docs/man/stepscope.1) and the commands'
 * --help texts agree: every command that `stepscope --help` lists has its
 * own .SS section, every long option a command's --help names is in that
 * section, and every long option the section names is in the --help.
 *
 * Design: options are the "--word" tokens of each text (roff writes
 * "\-\-word"); a failing check prints the command and the option.
 * stepscope-cc is left out: its --help goes to the compiler (tracker
 * issue 27, part 8).  test_synopsis: every option a command's parser
 * takes (each whole "--word" string literal of symbolize/cmd/CMD.c) is
 * listed in its --help, and every option listed is in the usage lines.
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

/* Options a --help names that are not its own and that the section need
 * not repeat: "COMMAND --option". */
static const char *const not_own[] = {
	/* filter's help names stepscope-cc's flag (its section too) */
	"filter --exclude-file",
	/* html's help points at 'html --diff --help' */
	"html --help",
	/* diff.c's parser is html --diff's too: html's usage names it */
	"diff --diff",
};

static int is_not_own(const char *cmd, const char *opt)
{
	char key[128];
	snprintf(key, sizeof(key), "%s %s", cmd, opt);
	for (size_t i = 0; i < sizeof(not_own) / sizeof(not_own[0]); i++)
		if (!strcmp(not_own[i], key))
			return 1;
	return 0;
}

/* The next "--word" of text from *p (with roff, "\-\-word" with "\-"
 * inside), copied to opt as "--word"; 0 at the end. */
static int next_opt(const char **p, int roff, char *opt, size_t len)
{
	const char *dash = roff ? "\\-\\-" : "--";
	size_t dl = strlen(dash), n = 2;
	const char *s = *p;

	while ((s = strstr(s, dash))) {
		const char *w = s + dl;
		if (*w >= 'a' && *w <= 'z' && (s == *p || (s[-1] != '-' && s[-1] != '\\' &&
							   !(s[-1] >= 'a' && s[-1] <= 'z'))))
			break;
		s = w;
	}
	if (!s)
		return 0;
	s += dl;
	snprintf(opt, len, "--");
	while ((*s >= 'a' && *s <= 'z') || *s == '-' || (roff && *s == '\\' && s[1] == '-')) {
		if (*s == '\\')
			s++;
		if (n + 1 < len)
			opt[n++] = *s;
		s++;
	}
	while (n > 2 && opt[n - 1] == '-')
		n--;
	opt[n] = 0;
	*p = s;
	return 1;
}

/* Does text name option opt ("--word")? */
static int has_opt(const char *text, int roff, const char *opt)
{
	char o[128];
	for (const char *p = text; next_opt(&p, roff, o, sizeof(o));)
		if (!strcmp(o, opt))
			return 1;
	return 0;
}

static void test_man_help(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	char *man, *help, cmds[32][32], o[128];
	size_t ncmds = 0;
	int bad = 0;

	SS_E2E_SH_OK(t, "cat \"$SS_E2E_SRC/docs/man/stepscope.1\"");
	man = strdup(t->out);
	SS_E2E_SH_OK(t, SS " --help");
	for (const char *l = t->out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
		if (!strncmp(l, "   ", 3) && l[3] >= 'a' && l[3] <= 'z' && ncmds < 32)
			sscanf(l + 3, "%31s", cmds[ncmds++]);
	SS_E2E_CHECK(t, ncmds >= 9, "stepscope --help lists %zu commands:\n%s", ncmds, t->out);
	for (size_t i = 0; i < ncmds; i++) {
		char head[64], *sec, *end;
		snprintf(head, sizeof(head), "\n.SS %s\n", cmds[i]);
		sec = strstr(man, head);
		if (!sec) {
			fprintf(stderr, "man: no section '.SS %s'\n", cmds[i]);
			bad++;
			continue;
		}
		sec += strlen(head);
		end = sec + strcspn(sec, "");
		{
			char *ss = strstr(sec, "\n.SS "), *sh = strstr(sec, "\n.SH ");
			if (ss && ss < end)
				end = ss;
			if (sh && sh < end)
				end = sh;
		}
		sec = strndup(sec, (size_t)(end - sec));
		SS_E2E_SH_OK(t, SS " %s --help", cmds[i]);
		help = strdup(t->out);
		for (const char *p = help; next_opt(&p, 0, o, sizeof(o));)
			if (!has_opt(sec, 1, o) && !is_not_own(cmds[i], o)) {
				fprintf(stderr, "man: '.SS %s' lacks %s (in its --help)\n",
					cmds[i], o);
				bad++;
			}
		for (const char *p = sec; next_opt(&p, 1, o, sizeof(o));)
			if (!has_opt(help, 0, o) && !is_not_own(cmds[i], o)) {
				fprintf(stderr, "man: '.SS %s' names %s, its --help does not\n",
					cmds[i], o);
				bad++;
			}
		free(help);
		free(sec);
	}
	free(man);
	SS_E2E_CHECK(t, !bad, "%d disagreement(s) between docs/man/stepscope.1 and "
		     "the --help texts (listed above)", bad);
	ss_e2e_pass(t);
}

/* Every long option a --help shows with a value ("--width N") is taken
 * both as "--width N" and as "--width=N" by its command: whatever else
 * is wrong with the command line, it is not called an unknown option. */
static void test_option_forms(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static const char *const cmds[] = { "symbolize", "report", "flame", "html",
					    "memory", "steps", "merge", "filter", "diff" };
	char o[64];
	int bad = 0, seen = 0;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		SS_E2E_SH_OK(t, SS " %s --help", cmds[i]);
		char *help = strdup(t->out);
		for (const char *p = help; next_opt(&p, 0, o, sizeof(o));) {
			const char *after = strstr(help, o);
			/* "--opt VALUE": a space, then an upper-case word */
			if (!after || after[strlen(o)] != ' ' || after[strlen(o) + 1] < 'A' ||
			    after[strlen(o) + 1] > 'Z' || is_not_own(cmds[i], o))
				continue;
			for (int eq = 0; eq < 2; eq++) {
				ss_e2e_sh(t, SS " %s %s%s1 no-such-run-dir", cmds[i], o,
					  eq ? "=" : " ");
				seen++;
				if (strstr(t->err, "unknown option")) {
					fprintf(stderr, "%s: %s%sVALUE: %s", cmds[i], o,
						eq ? "=" : " ", t->err);
					bad++;
				}
			}
		}
		free(help);
	}
	SS_E2E_CHECK(t, seen >= 20, "only %d option forms found in the --help texts", seen);
	SS_E2E_CHECK(t, !bad, "%d option form(s) refused (listed above)", bad);
	ss_e2e_pass(t);
}

/* Is opt ("-o", "--steps") a whole word of text (not "--stepsx")? */
static int has_word(const char *text, const char *opt)
{
	size_t n = strlen(opt);

	for (const char *p = text; (p = strstr(p, opt)); p += n) {
		char before = p == text ? ' ' : p[-1], after = p[n];
		if (before != '-' && !(before >= 'a' && before <= 'z') && after != '-' &&
		    !(after >= 'a' && after <= 'z'))
			return 1;
	}
	return 0;
}

static void test_synopsis(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	static const char *const cmds[] = { "symbolize", "report", "flame", "html", "memory",
					    "steps", "merge", "filter", "diff", "record" };
	int bad = 0, seen = 0;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char path[4096], *src, *help, *syn, *end, *lines = NULL;
		size_t nlines = 0;
		FILE *f, *m;
		long len;

		SS_E2E_SH_OK(t, SS " %s --help", cmds[i]);
		help = strdup(t->out);
		end = strstr(help, "\n\n");
		syn = strndup(help, end ? (size_t)(end - help) : strlen(help));
		/* the option list: lines "   -o, --output OUT   ..." */
		m = open_memstream(&lines, &nlines);
		for (const char *l = help; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
			if (!strncmp(l, "   -", 4))
				fprintf(m, "%.*s\n", (int)strcspn(l, "\n"), l);
		fclose(m);

		/* each listed option, in either of its forms, is in the usage lines */
		for (const char *l = lines; *l; l = strchr(l, '\n') + 1) {
			char a[64] = "", b[64] = "";
			int n = sscanf(l, " %63[-a-z], %63[-a-z]", a, b);

			if (n < 1)
				continue;
			if (n < 2)
				sscanf(l, " %63[-a-z]", a);
			seen++;
			if (!has_word(syn, a) && !(b[0] && has_word(syn, b)) && !is_not_own(cmds[i], a)) {
				fprintf(stderr, "%s --help lists %s, its usage lines do not:\n%s\n",
					cmds[i], a, syn);
				bad++;
			}
		}

		/* each option the parser compares against is listed */
		snprintf(path, sizeof(path), "%s/symbolize/cmd/%s.c", SS_SOURCE_DIR, cmds[i]);
		f = fopen(path, "r");
		SS_E2E_CHECK(t, f, "cannot read %s", path);
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		rewind(f);
		src = calloc(1, (size_t)len + 1);
		SS_E2E_CHECK(t, src && fread(src, 1, (size_t)len, f) == (size_t)len, "cannot read %s", path);
		fclose(f);
		for (const char *p = src; (p = strstr(p, "\"--")); p++) {
			size_t n = strspn(p + 1, "-abcdefghijklmnopqrstuvwxyz");
			char opt[64];

			if (p[1 + n] != '"' || n < 3 || n >= sizeof(opt))
				continue;
			snprintf(opt, sizeof(opt), "%.*s", (int)n, p + 1);
			if (!strcmp(opt, "--help") || is_not_own(cmds[i], opt))
				continue;
			seen++;
			if (!has_word(lines, opt) && !has_word(syn, opt)) {
				fprintf(stderr, "%s: %s takes %s, its --help does not list it\n",
					cmds[i], path, opt);
				bad++;
			}
		}
		free(src);
		free(lines);
		free(syn);
		free(help);
	}
	SS_E2E_CHECK(t, seen >= 60, "only %d options found in the --help texts and parsers", seen);
	SS_E2E_CHECK(t, !bad, "%d option(s) missing from a usage (listed above)", bad);
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_TEST(test_man_help),
		SS_E2E_TEST(test_option_forms),
		SS_E2E_TEST(test_synopsis),
	};

	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
