/*
 * test-layout.c - the tree stays one a newcomer can hold in mind
 * (docs/architecture.md): no C or CUDA source or header outside tests/ is
 * over 800 lines, and symbolize/ keeps its folders by stage of the data
 * flow, with no C file left at its top but main.c (util.h and version.h,
 * which every stage includes, stay there).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MAX_LINES 800

/* Every source file outside tests/ (and build outputs), with its length. */
static void test_no_file_over_800_lines(void **state)
{
	char line[4200], bad[8192] = "";
	size_t files = 0, nbad = 0;
	FILE *p;

	(void)state;
	p = popen("cd '" SS_SOURCE_DIR "' && find . -path ./tests -prune -o -path ./build -prune "
		  "-o -path '*/build' -prune -o -path ./.git -prune -o "
		  "\\( -name '*.c' -o -name '*.h' -o -name '*.cu' \\) -type f -print | "
		  "while read -r f; do echo \"$(wc -l < \"$f\") $f\"; done", "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		long n = strtol(line, NULL, 10);
		files++;
		if (n > MAX_LINES && strlen(bad) + strlen(line) < sizeof(bad)) {
			strcat(bad, line);
			nbad++;
		}
	}
	assert_int_equal(pclose(p), 0);
	if (files < 100)
		fail_msg("found only %zu source files under %s", files, SS_SOURCE_DIR);
	if (nbad)
		fail_msg("%zu files over %d lines (split them along their seams):\n%s", nbad,
			 MAX_LINES, bad);
}

static void test_symbolize_folders(void **state)
{
	char line[4200], out[4200] = "";
	FILE *p;

	(void)state;
	p = popen("cd '" SS_SOURCE_DIR "/symbolize' && ls *.c 2>/dev/null; "
		  "for d in read names analyze export cmd; do test -d $d || echo \"no $d/\"; done",
		  "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (strcmp(line, "main.c\n") && strlen(out) + strlen(line) < sizeof(out))
			strcat(out, line);
	pclose(p);
	if (*out)
		fail_msg("symbolize/ should hold main.c and the stage folders, nothing else in C:\n%s", out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_file_over_800_lines),
		cmocka_unit_test(test_symbolize_folders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
