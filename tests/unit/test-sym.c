/*
 * test-sym.c - unit tests of the symbol backends (symbolize/sym*.c): the
 * test binary resolves its own functions through its own /proc/self/maps
 * with libdw and libbfd, and both must give the same exact names, a
 * static function included, and a file:line ending in test-sym.c:<line>.
 * GCC clones of a fixture built here (use_a.isra.0, scale.constprop.0)
 * get the original name, the clone kind and the original's line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym.h"

static char maps_text[1 << 20];
static size_t maps_len;

static const int static_line = __LINE__ + 2;
__attribute__((noinline)) static int
ss_test_static_target(int x)
{
	return x * 3 + 1;
}

static const int global_line = __LINE__ + 1;
__attribute__((noinline)) int ss_test_global_target(int x)
{
	return ss_test_static_target(x) + 2;
}

static void read_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	size_t n;

	assert_non_null(f);
	n = fread(maps_text, 1, sizeof(maps_text) - 1, f);
	fclose(f);
	maps_text[n] = 0;
	maps_len = n;
}

static void check_file_line(const char *file, int line)
{
	char want[64];
	size_t lf, lw;

	assert_non_null(file);
	snprintf(want, sizeof(want), "test-sym.c:%d", line);
	lf = strlen(file);
	lw = strlen(want);
	if (lf < lw || strcmp(file + lf - lw, want) ||
	    (lf > lw && file[lf - lw - 1] != '/'))
		fail_msg("file '%s' does not end in '/%s'", file, want);
}

static void check_backend(const char *backend)
{
	char err[256];
	struct ss_sym *s = ss_sym_new(backend, err, sizeof(err));
	struct ss_sym_space *sp;
	const struct ss_sym_info *i;
	uint64_t a_static = (uint64_t)(uintptr_t)&ss_test_static_target;
	uint64_t a_global = (uint64_t)(uintptr_t)&ss_test_global_target;

	assert_non_null(s);
	ss_sym_set_quiet(s, 1);
	sp = ss_sym_space_new(s);
	assert_non_null(sp);
	ss_sym_space_add_maps(sp, maps_text, maps_len);

	i = ss_sym_lookup(sp, a_static);
	assert_true(i->resolved);
	assert_string_equal(i->name, "ss_test_static_target");
	assert_int_equal(i->start, a_static);
	check_file_line(i->file, static_line);

	i = ss_sym_lookup(sp, a_global);
	assert_string_equal(i->name, "ss_test_global_target");
	check_file_line(i->file, global_line);

	/* inside a function (a return address - 1): same function */
	i = ss_sym_lookup(sp, a_global + 5);
	assert_string_equal(i->name, "ss_test_global_target");
	assert_int_equal(i->start, a_global);

	/* the cache hands back the same answer */
	assert_ptr_equal(ss_sym_lookup(sp, a_static), ss_sym_lookup(sp, a_static));

	/* a symbol from a shared library (one sanitizers do not intercept) */
	i = ss_sym_lookup(sp, (uint64_t)(uintptr_t)&elf_version);
	assert_true(i->resolved);
	assert_string_equal(i->name, "elf_version");

	/* a module that does not exist: module+0xoffset */
	ss_sym_space_add_maps(sp,
		"7ff000000000-7ff000002000 r-xp 00001000 00:00 0   /nonexistent/libgone.so\n",
		SIZE_MAX);
	i = ss_sym_lookup(sp, UINT64_C(0x7ff000000010));
	assert_false(i->resolved);
	assert_string_equal(i->name, "libgone.so+0x1010");
	assert_null(i->file);

	/* in no mapping at all */
	i = ss_sym_lookup(sp, 16);
	assert_false(i->resolved);
	assert_string_equal(i->name, "0x10");

	ss_sym_space_free(sp);
	ss_sym_free(s);
}

static void test_dw(void **state)
{
	(void)state;
	check_backend("dw");
}

static void test_bfd(void **state)
{
	(void)state;
	check_backend("bfd");
}

static void test_bad_backend(void **state)
{
	char err[256];

	(void)state;
	assert_null(ss_sym_new("llvm", err, sizeof(err)));
	assert_string_equal(err, "unknown symbol backend 'llvm' (use dw or bfd)");
}

static void test_demangle(void **state)
{
	char *d = ss_sym_demangle("_ZN5optim3SGD4stepEPfi");

	(void)state;
	assert_non_null(d);
	assert_string_equal(d, "optim::SGD::step(float*, int)");
	free(d);
	assert_null(ss_sym_demangle("main"));
	assert_null(ss_sym_demangle("_Znot a name"));
}

static void test_clone_split(void **state)
{
	const char *c;

	(void)state;
	assert_int_equal(ss_sym_clone_split("use_a.isra.0", &c), 5);
	assert_string_equal(c, "isra.0");
	assert_int_equal(ss_sym_clone_split("f.constprop.0.isra.0", &c), 1);
	assert_string_equal(c, "constprop.0.isra.0");
	assert_int_equal(ss_sym_clone_split("_ZN1a1bEv.part.0", &c), 9);
	assert_string_equal(c, "part.0");
	assert_int_equal(ss_sym_clone_split("main.cold", &c), 4);
	assert_string_equal(c, "cold");
	assert_int_equal(ss_sym_clone_split("plain", &c), 5);
	assert_null(c);
	assert_int_equal(ss_sym_clone_split("x.island", &c), 8);
	assert_null(c);
}

/* vaddr -> file offset through the PT_LOAD headers of path */
static uint64_t clone_file_offset(Elf *e, uint64_t vaddr)
{
	size_t n, i;

	assert_int_equal(elf_getphdrnum(e, &n), 0);
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz)
			return vaddr - ph.p_vaddr + ph.p_offset;
	}
	fail_msg("vaddr 0x%llx in no PT_LOAD", (unsigned long long)vaddr);
	return 0;
}

/* Address of symbol `name` in the ELF as mapped at `base` with offset 0. */
static uint64_t clone_addr(Elf *e, const char *name, uint64_t base)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;
			if (gelf_getsym(d, (int)i, &sym) &&
			    (n = elf_strptr(e, sh.sh_link, sym.st_name)) &&
			    !strcmp(n, name))
				return base + clone_file_offset(e, sym.st_value);
		}
	}
	fail_msg("no symbol %s in the clone fixture", name);
	return 0;
}

static int clone_marker_line(const char *marker)
{
	char want[64], line[512];
	int n = 0;
	FILE *f = fopen(SS_SOURCE_DIR "/tests/e2e/s-names-clone.c", "r");

	assert_non_null(f);
	snprintf(want, sizeof(want), "/* L:%s */", marker);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, want)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("no marker %s", marker);
	return 0;
}

static void check_clone_file(const char *file, int line)
{
	char want[64];
	size_t lf, lw;

	assert_non_null(file);
	snprintf(want, sizeof(want), "/s-names-clone.c:%d", line);
	lf = strlen(file);
	lw = strlen(want);
	if (lf < lw || strcmp(file + lf - lw, want))
		fail_msg("file '%s' does not end in '%s'", file, want);
}

/* GCC clones (gcc -O2 of s-names-clone.c): the original name, the clone
 * kind, the line of the original, alike with both backends. */
static void test_clones(void **state)
{
	static const char *const backends[] = { "dw", "bfd" };
	char dir[] = "/tmp/ss-test-sym-XXXXXX", path[256], cmd[1024], maps[512];
	const uint64_t base = UINT64_C(0x7f0000000000);
	uint64_t a_isra, a_cp;
	struct stat st;
	Elf *e;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/clone", dir);
	snprintf(cmd, sizeof(cmd), "gcc -O2 -g -o %s %s/tests/e2e/s-names-clone.c",
		 path, SS_SOURCE_DIR);
	if (system(cmd))
		fail_msg("cannot build the fixture: %s", cmd);
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	a_isra = clone_addr(e, "use_a.isra.0", base);
	a_cp = clone_addr(e, "scale.constprop.0", base);
	elf_end(e);
	close(fd);
	snprintf(maps, sizeof(maps), "%llx-%llx r-xp 00000000 00:00 0 %s\n",
		 (unsigned long long)base,
		 (unsigned long long)(base + (uint64_t)st.st_size + 4096), path);
	for (size_t b = 0; b < 2; b++) {
		char err[256];
		struct ss_sym *s = ss_sym_new(backends[b], err, sizeof(err));
		struct ss_sym_space *sp;
		const struct ss_sym_info *i;

		assert_non_null(s);
		ss_sym_set_quiet(s, 1);
		sp = ss_sym_space_new(s);
		ss_sym_space_add_maps(sp, maps, strlen(maps));
		i = ss_sym_lookup(sp, a_isra);
		assert_string_equal(i->name, "use_a");
		assert_non_null(i->clone);
		assert_string_equal(i->clone, "isra.0");
		check_clone_file(i->file, clone_marker_line("use_a"));
		i = ss_sym_lookup(sp, a_cp + 2);
		assert_string_equal(i->name, "scale");
		assert_string_equal(i->clone, "constprop.0");
		assert_int_equal(i->start, a_cp);
		check_clone_file(i->file, clone_marker_line("scale"));
		ss_sym_space_free(sp);
		ss_sym_free(s);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clone_split),
		cmocka_unit_test(test_clones),
		cmocka_unit_test(test_dw),
		cmocka_unit_test(test_bfd),
		cmocka_unit_test(test_bad_backend),
		cmocka_unit_test(test_demangle),
	};

	read_maps();
	/* keep the targets alive and called */
	if (ss_test_global_target(1) != 6)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
