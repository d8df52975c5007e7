/*
 * test-args-parse.c - the pieces of record.args and flops: (issue 33)
 * that need no program: flops expressions (values, names, syntax errors
 * with where), the config keys (record.args as a list and with --set,
 * flops: as a mapping with each entry's line, errors at file:line:col),
 * the ARGS record parser on good and damaged payloads, and the clang -O0
 * prologue decoder on real instruction bytes.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "args-int.h"
#include "args-read.h"
#include "config.h"
#include "flops-expr.h"
#include "format.h"

/* ------------------------------------------------------------ flops */

struct vals {
	const char *const *names;
	const double *v;
	size_t n;
};

static int look(void *ctx, const char *name, size_t len, double *out)
{
	const struct vals *vs = ctx;
	for (size_t i = 0; i < vs->n; i++)
		if (strlen(vs->names[i]) == len && !memcmp(vs->names[i], name, len)) {
			if (vs->v[i] < 0)
				return -1; /* "optimized out" */
			*out = vs->v[i];
			return 0;
		}
	return -1;
}

static void test_flops_eval(void **state)
{
	static const char *const names[] = { "B", "T", "C", "OC", "nh" };
	static const double v[] = { 4, 64, 768, 2304, -1 };
	struct vals vs = { names, v, 5 };
	double out = 0;
	(void)state;

	assert_int_equal(ss_flops_eval("2*B*T*C*OC", 10, look, &vs, &out), 0);
	assert_true(out == 2.0 * 4 * 64 * 768 * 2304);
	assert_int_equal(ss_flops_eval(" ( B + T ) * 0.5 - -C / 2 ", 26, look, &vs, &out), 0);
	assert_true(out == (4 + 64) * 0.5 + 768 / 2.0);
	assert_int_equal(ss_flops_eval("B - T - C", 9, look, &vs, &out), 0); /* left to right */
	assert_true(out == 4.0 - 64 - 768);
	/* a divisor the call's values make 0: no value, as a missing name */
	assert_int_equal(ss_flops_eval("C / (B - 4)", 11, look, &vs, &out), 1);
	assert_int_equal(ss_flops_eval("C / (T - T) + B", 15, look, &vs, &out), 1);
	assert_int_equal(ss_flops_eval("C / B / 0.5", 11, look, &vs, &out), 0);
	assert_true(out == 768 / 4.0 / 0.5);
	/* a name without a value: 1, not a number */
	assert_int_equal(ss_flops_eval("2*nh*T", 6, look, &vs, &out), 1);
	assert_int_equal(ss_flops_eval("2*X", 3, look, &vs, &out), 1);
	assert_int_equal(ss_flops_eval("2*(B", 4, look, &vs, &out), -1);
}

static void collect(void *ctx, const char *name, size_t len)
{
	char *buf = ctx;
	strncat(buf, name, len);
	strcat(buf, ",");
}

static void test_flops_syntax(void **state)
{
	char err[256], names[128] = "";
	(void)state;

	assert_int_equal(ss_flops_names("2*B*T + (C/nh)*x1", 17, collect, names), 0);
	assert_string_equal(names, "B,T,C,nh,x1,");
	assert_int_equal(ss_flops_check("2*B*T*C*OC", 10, err, sizeof(err)), 0);
	assert_int_equal(ss_flops_check("2*(B+T", 6, err, sizeof(err)), -1);
	assert_string_equal(err, "a '(' is not closed (at '')");
	assert_int_equal(ss_flops_check("2*B)", 4, err, sizeof(err)), -1);
	assert_string_equal(err, "a ')' has no '(' (at ')')");
	assert_int_equal(ss_flops_check("B^2", 3, err, sizeof(err)), -1);
	assert_string_equal(err, "only + - * / ( ), numbers and parameter names may appear (at '^2')");
	assert_int_equal(ss_flops_check("2*", 2, err, sizeof(err)), -1);
	assert_int_equal(ss_flops_check("1.2.3", 5, err, sizeof(err)), -1);
	assert_int_equal(ss_flops_check_all("f=2*a;g=b)", err, sizeof(err)), 1);
	assert_string_equal(err, "flops: g: a ')' has no '(' (at ')')");
	assert_int_equal(ss_flops_check_all("f=2*a;g=b*c", err, sizeof(err)), -1);
	/* a divisor that is 0 whatever the call: refused where it is */
	assert_int_equal(ss_flops_check("C / 0", 5, err, sizeof(err)), -1);
	assert_string_equal(err, "divides by zero (at '/ 0')");
	assert_int_equal(ss_flops_check("C*2/(1 - 1.0)", 13, err, sizeof(err)), -1);
	assert_string_equal(err, "divides by zero (at '/(1 - 1.0)')");
	assert_int_equal(ss_flops_check("C / -(B - 0)", 12, err, sizeof(err)), 0);
}

/* Deep, long and wide expressions: refused with a reason, never a crash
 * (100,000 '-' before a name overran the stack before the bound). */
static void test_flops_bounds(void **state)
{
	static char deep[100002];
	char err[256], name[SS_FLOPS_NAME_MAX + 3];
	size_t i;
	(void)state;

	memset(deep, '-', 100000);
	deep[100000] = 'B';
	assert_int_equal(ss_flops_check(deep, 100001, err, sizeof(err)), -1);
	assert_string_equal(err, "the expression is longer than 512 characters (at '--------------------')");
	/* depth: 64 levels pass, 65 do not, for '-' and '(' alike */
	assert_int_equal(ss_flops_check(deep + 100000 - 64, 65, err, sizeof(err)), 0);
	assert_int_equal(ss_flops_check(deep + 100000 - 65, 66, err, sizeof(err)), -1);
	assert_string_equal(err, "the expression nests deeper than 64 levels of '(' and '-' (at '-B')");
	for (i = 0; i < 65; i++)
		deep[i] = '(';
	deep[65] = 'B';
	for (i = 0; i < 65; i++)
		deep[66 + i] = ')';
	assert_int_equal(ss_flops_check(deep + 1, 129, err, sizeof(err)), 0);
	assert_int_equal(ss_flops_check(deep, 131, err, sizeof(err)), -1);
	assert_string_equal(err, "the expression nests deeper than 64 levels of '(' and '-' (at '(B))))))))))))))))))')");
	name[0] = 0;
	assert_int_equal(ss_flops_names(deep, 131, collect, name), -1);
	assert_string_equal(name, "");
	/* names: 63 characters pass, 64 do not */
	memset(name, 'x', sizeof(name));
	assert_int_equal(ss_flops_check(name, SS_FLOPS_NAME_MAX, err, sizeof(err)), 0);
	assert_int_equal(ss_flops_check(name, SS_FLOPS_NAME_MAX + 1, err, sizeof(err)), -1);
	assert_string_equal(err, "a name is longer than 63 characters (at 'xxxxxxxxxxxxxxxxxxxx')");
}

/* ------------------------------------------------------------ config */

static char tmpdir[] = "/tmp/ss-test-args-XXXXXX";
static char old_cwd[PATH_MAX];

static int group_setup(void **state)
{
	(void)state;
	if (!getcwd(old_cwd, sizeof(old_cwd)) || !mkdtemp(tmpdir) || chdir(tmpdir))
		return -1;
	unsetenv("STEPSCOPE_CONFIG");
	unsetenv("STEPSCOPE_SET");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	unlink("c.yaml");
	if (chdir(old_cwd))
		return -1;
	return rmdir(tmpdir);
}

static const char *load(struct ss_config *c, const char *text)
{
	static char err[1024];
	FILE *f = fopen("c.yaml", "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	err[0] = 0;
	ss_config_defaults(c);
	if (!ss_config_load_file(c, "c.yaml", err, sizeof(err)) &&
	    !ss_config_check(c, err, sizeof(err)))
		return "";
	return err;
}

static void test_config(void **state)
{
	struct ss_config c;
	char err[1024], buf[4096];
	(void)state;

	assert_string_equal(load(&c, "record:\n  args: [matmul_forward, 'adamw_*', attention]\n"
				  "flops:\n  matmul_forward: \"2*B*T*C*OC\"\n"
				  "  attention: 4 * B * T\n"),
			    "");
	assert_string_equal(c.record_args, "matmul_forward,adamw_*,attention");
	assert_string_equal(c.flops, "matmul_forward=2*B*T*C*OC;attention=4 * B * T");
	assert_int_equal(c.flops_line[0], 4);
	assert_int_equal(c.flops_line[1], 5);
	/* the dump carries both, and only when given */
	ss_config_dump(&c, buf, sizeof(buf));
	assert_non_null(strstr(buf, "record.args=matmul_forward,adamw_*,attention\n"));
	assert_non_null(strstr(buf, "flops=matmul_forward=2*B*T*C*OC;attention=4 * B * T\n"));
	ss_config_defaults(&c);
	ss_config_dump(&c, buf, sizeof(buf));
	assert_null(strstr(buf, "record.args"));
	assert_null(strstr(buf, "flops"));
	/* errors where they are */
	assert_string_equal(load(&c, "flops:\n  matmul_forward: \"2*(B\"\n"),
			    "c.yaml:2:19: flops: matmul_forward: a '(' is not closed (at '')");
	assert_string_equal(load(&c, "flops:\n  matmul_forward: [2, B]\n"),
			    "c.yaml:2:3: flops must map function names to expressions (matmul_forward: \"2*B*T*C*OC\")");
	/* --set: a list of names; flops as its text */
	ss_config_defaults(&c);
	assert_int_equal(ss_config_set(&c, "record.args=matmul_forward attention", "--set", err,
				       sizeof(err)),
			 0);
	assert_string_equal(c.record_args, "matmul_forward attention");
	assert_int_equal(ss_config_set(&c, "flops=f=2*(a", "--set", err, sizeof(err)), 0);
	assert_int_equal(ss_config_check(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "flops: f: a '(' is not closed"));
	/* record.args: every name is kept, however many and however long (a
	 * 369-character mangled C++ name, a 65th glob: args.c honours them
	 * all); the list as a whole is bounded by its 4095 characters */
	size_t n = (size_t)snprintf(buf, sizeof(buf), "record.args=");
	for (int i = 0; i < 65; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%sfn%d", i ? "," : "", i);
	ss_config_defaults(&c);
	assert_int_equal(ss_config_set(&c, buf, "--set", err, sizeof(err)), 0);
	assert_int_equal(ss_config_check(&c, err, sizeof(err)), 0);
	memset(buf, 0, sizeof(buf));
	n = (size_t)snprintf(buf, sizeof(buf), "record.args=ok,");
	memset(buf + n, 'x', 369);
	ss_config_defaults(&c);
	assert_int_equal(ss_config_set(&c, buf, "--set", err, sizeof(err)), 0);
	assert_int_equal(ss_config_check(&c, err, sizeof(err)), 0);
	assert_int_equal(strlen(c.record_args), 3 + 369);
	{
		static char big[SS_CONFIG_LIST_MAX + 64];
		n = (size_t)snprintf(big, sizeof(big), "record.args=");
		memset(big + n, 'y', SS_CONFIG_LIST_MAX);
		ss_config_defaults(&c);
		assert_int_equal(ss_config_set(&c, big, "--set", err, sizeof(err)), -1);
		assert_non_null(strstr(err, "record.args"));
	}
	/* flops only for a function record.args lists */
	ss_config_defaults(&c);
	assert_int_equal(ss_config_set(&c, "record.args=matmul_*", "--set", err, sizeof(err)), 0);
	assert_int_equal(ss_config_set(&c, "flops=matmul_forward=2*b;attention=4*b", "--set", err,
				       sizeof(err)), 0);
	assert_int_equal(ss_config_check(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "flops: attention: attention is not listed in record.args"));
	assert_int_equal(ss_config_set(&c, "record.args=matmul_*,attention", "--set", err,
				       sizeof(err)), 0);
	assert_int_equal(ss_config_check(&c, err, sizeof(err)), 0);
}

/* ------------------------------------------------------------ records */

static void put(uint8_t *p, size_t i, uint64_t w)
{
	memcpy(p + 8 * i, &w, 8);
}

static void test_record_parse(void **state)
{
	uint8_t p[8 * 32];
	struct ss_args_head h = { SS_ARGS_X86_64, 6, 1, 0x401000, 0x401020, 0x7ffd0000 };
	struct ss_args_cap cap;
	(void)state;

	memset(p, 0, sizeof(p));
	memcpy(p, &h, sizeof(h));
	for (int i = 0; i < 6; i++)
		put(p, 4 + i, 100 + i);
	put(p, 10, 0x7ffd0000);
	put(p, 11, 32);
	for (int i = 0; i < 4; i++)
		put(p, 12 + i, 1000 + i);
	put(p, 16, SS_ARGS_END);
	assert_int_equal(ss_args_parse(p, 17, &cap), 0);
	assert_int_equal(cap.fn, 0x401000);
	assert_int_equal(cap.pc, 0x401020);
	assert_int_equal(cap.sp, 0x7ffd0000);
	assert_int_equal(cap.nregs, 6);
	assert_int_equal(cap.nwin, 1);
	assert_int_equal(cap.waddr[0], 0x7ffd0000);
	assert_int_equal(cap.wlen[0], 32);
	uint64_t w;
	memcpy(&w, cap.wdata[0] + 24, 8);
	assert_int_equal(w, 1003);
	memcpy(&w, cap.regs + 8 * 5, 8);
	assert_int_equal(w, 105);
	/* damaged: a window longer than the record, odd lengths, too many
	 * registers or windows, another architecture, too short */
	assert_int_equal(ss_args_parse(p, 14, &cap), -1);
	put(p, 11, 33);
	assert_int_equal(ss_args_parse(p, 17, &cap), -1);
	put(p, 11, 32);
	h.nwin = 3;
	memcpy(p, &h, sizeof(h));
	assert_int_equal(ss_args_parse(p, 17, &cap), -1);
	h.nwin = 1;
	h.nregs = 17;
	memcpy(p, &h, sizeof(h));
	assert_int_equal(ss_args_parse(p, 17, &cap), -1);
	h.nregs = 6;
	h.arch = 7;
	memcpy(p, &h, sizeof(h));
	assert_int_equal(ss_args_parse(p, 17, &cap), -1);
	assert_int_equal(ss_args_parse(p, 3, &cap), -1);
}

/* clang -O0's adamw_update up to its hook call (objdump of s-args) */
static void test_prologue(void **state)
{
	static const uint8_t code[] = {
		0x55,                                     /* push %rbp */
		0x48, 0x89, 0xe5,                         /* mov %rsp,%rbp */
		0x48, 0x81, 0xec, 0xa0, 0x00, 0x00, 0x00, /* sub $0xa0,%rsp */
		0x48, 0x89, 0xbd, 0x68, 0xff, 0xff, 0xff, /* mov %rdi,-0x98(%rbp) */
		0x48, 0x89, 0xb5, 0x70, 0xff, 0xff, 0xff, /* mov %rsi,-0x90(%rbp) */
		0x48, 0x89, 0x95, 0x78, 0xff, 0xff, 0xff, /* mov %rdx,-0x88(%rbp) */
		0x48, 0x89, 0x4d, 0x80,                   /* mov %rcx,-0x80(%rbp) */
		0x4c, 0x89, 0x45, 0x88,                   /* mov %r8,-0x78(%rbp) */
		0xf3, 0x0f, 0x11, 0x45, 0x94,             /* movss %xmm0,-0x6c(%rbp) */
		0xf3, 0x0f, 0x11, 0x4d, 0x98,             /* movss %xmm1,-0x68(%rbp) */
		0x44, 0x89, 0x4d, 0xa8,                   /* mov %r9d,-0x58(%rbp) */
		0x48, 0x8b, 0x75, 0x08,                   /* mov 0x8(%rbp),%rsi */
		0x48, 0x8d, 0x3d, 0xb0, 0xff, 0xff, 0xff, /* lea -0x50(%rip),%rdi */
		0xe8, 0xbb, 0x08, 0x00, 0x00,             /* call */
	};
	struct ss_prologue pr;
	(void)state;

	assert_int_equal(ss_args_prologue(code, sizeof(code), &pr), 1);
	assert_int_equal(pr.int_disp[0], -0x98);
	assert_int_equal(pr.int_size[0], 8);
	assert_int_equal(pr.int_disp[1], -0x90);  /* stored before rsi was loaded */
	assert_int_equal(pr.int_disp[3], -0x80);
	assert_int_equal(pr.int_disp[4], -0x78);
	assert_int_equal(pr.int_disp[5], -0x58);
	assert_int_equal(pr.int_size[5], 4);
	assert_int_equal(pr.sse_disp[0], -0x6c);
	assert_int_equal(pr.sse_size[1], 4);
	assert_int_equal(pr.sse_size[2], 0);
	/* an instruction it does not know: nothing */
	uint8_t odd[sizeof(code)];
	memcpy(odd, code, sizeof(code));
	odd[11] = 0x0f; /* not a mov */
	assert_int_equal(ss_args_prologue(odd, sizeof(odd), &pr), 0);
	/* cut before the call */
	assert_int_equal(ss_args_prologue(code, 20, &pr), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flops_eval),
		cmocka_unit_test(test_flops_syntax),
		cmocka_unit_test(test_flops_bounds),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_record_parse),
		cmocka_unit_test(test_prologue),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
