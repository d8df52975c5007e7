/*
 * test-static.c - end to end: s-static + s-static-b, two translation units
 * that each have a static twin(); calls through function pointers.  Checks
 * names, counts, and that args.file tells the twins apart down to the line.
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

/* "s-static.c:N" where N is the line of tests/e2e/FILE holding `marker`. */
static void where(struct ss_e2e *t, const char *file, const char *marker,
		  char *out, size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/e2e/%s", SS_SOURCE_DIR, file);
	FILE *f = fopen(path, "r");
	SS_E2E_CHECK(t, f != NULL, "cannot open %s", path);
	char line[512];
	int n = 0, found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		n++;
		found = strstr(line, marker) != NULL;
	}
	fclose(f);
	SS_E2E_CHECK(t, found, "no %s in %s", marker, path);
	snprintf(out, len, "%s:%d", file, n);
}

/* Slices named `name` whose args.file ends in "/" + file_line (or is it). */
static size_t count_at(const struct ss_e2e_trace *tr, const char *name,
		       const char *file_line)
{
	size_t n = 0, fl = strlen(file_line);
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->name, name) != 0 || !s->file)
			continue;
		size_t l = strlen(s->file);
		if (l >= fl && !strcmp(s->file + l - fl, file_line) &&
		    (l == fl || s->file[l - fl - 1] == '/'))
			n++;
	}
	return n;
}

static void show_files(const struct ss_e2e_trace *tr, const char *name)
{
	print_message("  args.file of '%s':", name);
	for (size_t i = 0; i < tr->nslices; i++)
		if (!strcmp(tr->slices[i].name, name))
			print_message(" %s", tr->slices[i].file
						     ? tr->slices[i].file
						     : "(none)");
	print_message("\n");
}

static void expect_at(struct ss_e2e *t, const struct ss_e2e_trace *tr,
		      const char *name, const char *file, const char *marker,
		      size_t want)
{
	char fl[300];
	where(t, file, marker, fl, sizeof(fl));
	size_t got = count_at(tr, name, fl);
	if (got != want) {
		show_files(tr, name);
		SS_E2E_FAIL(t, "'%s' with args.file \".../%s\": expected %zu, "
			    "got %zu",
			    name, fl, want, got);
	}
}

static void test_static(void **state)
{
	struct ss_e2e *t = ss_e2e_begin(state);
	struct ss_e2e_trace *tr = ss_e2e_profile(
		t, "static", "\"$SS_E2E_SRC/tests/e2e/s-static-b.c\"", NULL);
	SS_E2E_EXPECT_NESTED(t, tr);

	SS_E2E_EXPECT_CALLS(t, tr, "main", 0, 1);
	SS_E2E_EXPECT_CALLS(t, tr, "twin", 0, 2 + 3);
	expect_at(t, tr, "twin", "s-static.c", "@twin-a", 2);
	expect_at(t, tr, "twin", "s-static-b.c", "@twin-b", 3);
	expect_at(t, tr, "b_entry", "s-static-b.c", "@b_entry", 1);
	expect_at(t, tr, "by_pointer", "s-static.c", "@by_pointer", 4);
	expect_at(t, tr, "op_add", "s-static.c", "@op_add", 3);
	expect_at(t, tr, "op_mul", "s-static.c", "@op_mul", 3);
	SS_E2E_EXPECT_COUNT(t, tr, NULL, "function", 0, 1 + 5 + 1 + 4 + 3 + 3);

	SS_E2E_EXPECT_INSIDE(t, tr, "b_entry", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "by_pointer", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "op_add", "main");
	SS_E2E_EXPECT_INSIDE(t, tr, "op_mul", "main");
	/* the twins of s-static-b.c are exactly the ones inside b_entry */
	size_t in_b = 0;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		const char *p = ss_e2e_parent_name(tr, s);
		if (!strcmp(s->name, "twin") && p && !strcmp(p, "b_entry")) {
			in_b++;
			SS_E2E_CHECK(t, s->file && strstr(s->file, "s-static-b.c"),
				     "twin inside b_entry: expected args.file "
				     "in s-static-b.c, got %s",
				     s->file ? s->file : "none");
		}
	}
	SS_E2E_CHECK(t, in_b == 3, "twin inside b_entry: expected 3, got %zu",
		     in_b);

	/* The two twins are different code: different addresses. */
	const char *addr_a = NULL, *addr_b = NULL;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->name, "twin") || !s->file || !s->addr)
			continue;
		if (strstr(s->file, "s-static-b.c"))
			addr_b = s->addr;
		else
			addr_a = s->addr;
	}
	SS_E2E_CHECK(t, addr_a && addr_b && strcmp(addr_a, addr_b) != 0,
		     "twin addresses: expected two different, got %s and %s",
		     addr_a ? addr_a : "none", addr_b ? addr_b : "none");
	ss_e2e_pass(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SS_E2E_VARIANTS(test_static),
	};
	ss_e2e_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
