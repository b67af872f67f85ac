/* SPDX-License-Identifier: BSD-3-Clause */
/* `maglevctl top -n 2` (its path is argv[1]) against the control-socket
 * fixture: a real server and real command handlers over a fake daemon.
 * Traffic is simulated deterministically: every time a handler asks for
 * the generation (each vips/backends request, so every poll of top), the
 * counters of web/web-1 and a drop reason move on, so every frame must
 * show a positive rate for them and zero for the idle VIP. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "tests/support/ctl_fixture.h"

static const char *maglevctl;
static struct ctl_fx *traffic_fx;
static const struct mlv_generation *(*real_generation)(void *ctx);
static bool heavy;     /* every counter and drop reason moves, by a lot */

/* Runs on the server thread, inside the handlers. */
static const struct mlv_generation *generation_with_traffic(void *ctx)
{
	struct ctl_fx *fx = traffic_fx;
	const struct mlv_gen_vip *web = NULL;
	uint32_t b, v;

	for (v = 0; v < fx->gen->n_vips && !web; v++)
		if (strcmp(fx->gen->vips[v].name, "web") == 0)
			web = &fx->gen->vips[v];
	assert_non_null(web);
	assert_string_equal(web->backends[0].name, "web-1");
	b = mlv_gen_backend_index(fx->gen, &web->backends[0]);
	fx->gen->backend_ctr[0][b].v[MLV_FLOW_PACKETS] += 100;
	fx->gen->backend_ctr[0][b].v[MLV_FLOW_BYTES] += 6400;
	fx->gen->backend_ctr[0][b].v[MLV_FLOW_NEW_FLOWS] += 1;
	fx->ctr[1].ctr[MLV_CTR_RX_PACKETS] += 105;
	fx->ctr[1].drop[MLV_DROP_NOT_VIP] += 5;
	if (heavy) {
		for (int c = 0; c < MLV_CTR__COUNT; c++)
			fx->ctr[0].ctr[c] += 123456789012ull;
		for (int d = 0; d < MLV_DROP__COUNT; d++)
			fx->ctr[0].drop[d] += 98765432109ull;
		fx->gen->backend_ctr[0][b].v[MLV_FLOW_BYTES] += 987654321098ull;
	}
	return real_generation(ctx);
}

/* Run maglevctl with args; returns its exit status and output. */
static int run(const char *args, char **out)
{
	char cmd[512];
	size_t cap = 1 << 16, len = 0, n;
	FILE *p;
	int status;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", maglevctl, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	*out = malloc(cap);
	assert_non_null(*out);
	while ((n = fread(*out + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (len + 1 == cap) {
			cap *= 2;
			*out = realloc(*out, cap);
			assert_non_null(*out);
		}
	}
	(*out)[len] = '\0';
	status = pclose(p);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int count(const char *text, const char *what)
{
	int n = 0;

	for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* A rate as top prints it: "950", "1.20k", "-". NAN for "-". */
static double parse_rate(const char *s, const char **end)
{
	static const char suffix[] = "kMGTP";
	double scale = 1, v;
	char *e;
	const char *p;

	while (*s == ' ')
		s++;
	if (*s == '-' && (s[1] == ' ' || s[1] == '\n' || s[1] == '\0')) {
		*end = s + 1;
		return -1;
	}
	v = strtod(s, &e);
	if (e == s)
		fail_msg("not a number: %.40s", s);
	if (*e && (p = strchr(suffix, *e)) != NULL) {
		for (const char *q = suffix; q <= p; q++)
			scale *= 1000;
		e++;
	}
	*end = e;
	return v * scale;
}

/* The n-th table row starting with `name` followed by a space; its
 * three rates (pkt/s, bytes/s, flows/s). */
static void row_rates(const char *out, const char *prefix, int nth,
		      double rates[3])
{
	size_t n = strlen(prefix);
	const char *line = out;

	for (int seen = 0; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *p;
		char state[32];
		unsigned long long weight_or_dash, slots;
		int used;

		if (strncmp(line, prefix, n) != 0 || line[n] != ' ' || seen++ < nth)
			continue;
		p = line + n;
		/* STATE WEIGHT SLOTS: STATE is one word ("active") or "3/4 up" */
		if (sscanf(p, " %31s%n", state, &used) != 1)
			fail_msg("bad row: %.120s", line);
		p += used;
		if (strncmp(p, " up", 3) == 0)
			p += 3;
		if (sscanf(p, " %llu %llu%n", &weight_or_dash, &slots, &used) != 2 &&
		    sscanf(p, " - %llu%n", &slots, &used) != 1)
			fail_msg("bad row: %.120s", line);
		p += used;
		for (int i = 0; i < 3; i++)
			rates[i] = parse_rate(p, &p);
		return;
	}
	fail_msg("no row %d for \"%s\" in:\n%s", nth, prefix, out);
}

static void test_top_two_frames(void **state)
{
	struct ctl_fx fx;
	struct mlv_ctl_server_params p = { 0 };
	double rates[3];
	char args[256], *out;

	(void)state;
	ctl_fx_init(&fx);
	traffic_fx = &fx;
	real_generation = fx.st.generation;
	fx.st.generation = generation_with_traffic;
	ctl_fx_start(&fx, p);

	snprintf(args, sizeof(args), "-s %s top -n 2 -i 0.05", fx.path);
	if (run(args, &out) != 0)
		fail_msg("maglevctl %s failed:\n%s", args, out);
	/* two frames, no escape codes when not on a terminal */
	assert_null(strchr(out, '\033'));
	for (int frame = 0; frame < 2; frame++) {
		row_rates(out, "web", frame, rates);
		assert_true(rates[0] > 0);            /* pkt/s */
		assert_true(rates[1] > rates[0]);     /* 64 bytes per packet */
		assert_true(rates[2] > 0);            /* new flows/s */
		row_rates(out, "  web-1", frame, rates);
		assert_true(rates[0] > 0);
		row_rates(out, "  web-2", frame, rates);
		assert_true(rates[0] == 0);
		row_rates(out, "dns", frame, rates);
		assert_true(rates[0] == 0);
		row_rates(out, "big", frame, rates);
		assert_true(rates[0] == 0);
	}
	assert_int_equal(count(out, "maglevd top:"), 2);
	assert_non_null(strstr(out, "drops/s: not_vip "));
	assert_non_null(strstr(out, "conntrack 0 / 2048 entries"));
	free(out);

	/* one VIP only */
	snprintf(args, sizeof(args), "-s %s top dns -n 1 -i 0.05", fx.path);
	assert_int_equal(run(args, &out), 0);
	row_rates(out, "dns", 0, rates);
	row_rates(out, "  dns-1", 0, rates);
	assert_null(strstr(out, "\nweb "));
	free(out);

	/* an unknown VIP is the daemon's error, exit 1 */
	snprintf(args, sizeof(args), "-s %s top nosuch -n 1 -i 0.05", fx.path);
	assert_int_equal(run(args, &out), 1);
	assert_non_null(strstr(out, "nosuch"));
	free(out);

	ctl_fx_free(&fx);
}

/* Every line of a frame fits an 80-column terminal, even with every
 * rate at its widest and every drop reason listed. */
static void test_top_fits_80_columns(void **state)
{
	struct ctl_fx fx;
	struct mlv_ctl_server_params p = { 0 };
	char args[256], *out;
	int lines = 0;

	(void)state;
	ctl_fx_init(&fx);
	traffic_fx = &fx;
	real_generation = fx.st.generation;
	fx.st.generation = generation_with_traffic;
	heavy = true;
	ctl_fx_start(&fx, p);

	snprintf(args, sizeof(args), "-s %s top -n 2 -i 0.05", fx.path);
	if (run(args, &out) != 0)
		fail_msg("maglevctl %s failed:\n%s", args, out);
	for (const char *l = out; *l; lines++) {
		size_t n = strcspn(l, "\n");

		if (n > 80)
			fail_msg("a %zu-column line: \"%.*s\"", n, (int)n, l);
		l += n + (l[n] == '\n');
	}
	assert_true(lines > 10);
	/* every reason is listed, wrapped onto further lines */
	for (int d = 0; d < MLV_DROP__COUNT; d++)
		assert_non_null(strstr(out, mlv_drop_reason_name((enum mlv_drop_reason)d)));
	free(out);
	heavy = false;
	ctl_fx_free(&fx);
}

static void test_top_usage_and_errors(void **state)
{
	char *out;

	(void)state;
	assert_int_equal(run("top --help", &out), 0);
	assert_non_null(strstr(out, "usage: maglevctl [-s SOCKET] top"));
	free(out);
	assert_int_equal(run("top -i 0", &out), 2);
	free(out);
	assert_int_equal(run("top -n 0", &out), 2);
	free(out);
	assert_int_equal(run("top a b", &out), 2);
	free(out);
	assert_int_equal(run("-s /nonexistent/maglevd.sock top -n 1", &out), 3);
	assert_non_null(strstr(out, "cannot connect"));
	free(out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_top_two_frames),
		cmocka_unit_test(test_top_fits_80_columns),
		cmocka_unit_test(test_top_usage_and_errors),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH-TO-MAGLEVCTL\n", argv[0]);
		return 2;
	}
	maglevctl = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
