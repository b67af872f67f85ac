/* SPDX-License-Identifier: BSD-3-Clause */
/* Second chance's readiness checks (tools/bin/maglev-decap/readiness.h)
 * over a sysctl tree written here: every setting right is ready, each
 * wrong one fails its own check and no other, with a hint; the larger
 * of all/dev rp_filter decides; IPv6 forwarding is checked only for a
 * device that decapsulates IPv6; an unreadable setting fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tools/bin/maglev-decap/readiness.h"

static char root[64];

static void put(const char *path, const char *value)
{
	char file[256], dir[256], *slash;
	FILE *f;

	snprintf(file, sizeof(file), "%s/%s", root, path);
	snprintf(dir, sizeof(dir), "%s", file);
	for (char *p = dir + strlen(root) + 1; (slash = strchr(p, '/'));
	     p = slash + 1) {
		*slash = '\0';
		mkdir(dir, 0700);
		*slash = '/';
	}
	f = fopen(file, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", value);
	assert_int_equal(fclose(f), 0);
}

/* A host set up as docs/deployment.md says. */
static void good_host(void)
{
	put("net/ipv4/conf/eth0/forwarding", "1");
	put("net/ipv4/conf/all/send_redirects", "0");
	put("net/ipv4/conf/eth0/send_redirects", "0");
	put("net/ipv4/conf/all/rp_filter", "0");
	put("net/ipv4/conf/eth0/rp_filter", "2");
	put("net/ipv6/conf/all/forwarding", "1");
	put("net/ipv6/conf/eth0/forwarding", "1");
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/mlv-ready-XXXXXX");
	assert_non_null(mkdtemp(root));
	good_host();
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* The names of the failing checks, space-separated. */
static void failing(bool v6, bool gue, char *out, size_t len)
{
	struct mlv_sc_check c[MLV_SC_CHECKS_MAX];
	size_t n = mlv_sc_readiness(root, "eth0", v6, gue, c), k = 0;

	assert_true(n <= MLV_SC_CHECKS_MAX);
	assert_int_equal(n, v6 ? 5 : 4);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		assert_true(c[i].detail[0] != '\0');
		if (!c[i].ok)
			k += (size_t)snprintf(out + k, len - k, "%s%s",
					      k ? " " : "", c[i].name);
	}
}

static void test_ready(void **state)
{
	char f[256];
	(void)state;

	good_host();
	failing(true, true, f, sizeof(f));
	assert_string_equal(f, "");
	failing(false, true, f, sizeof(f));
	assert_string_equal(f, "");
}

static void test_each_fault(void **state)
{
	char f[256];
	(void)state;

	good_host();
	put("net/ipv4/conf/eth0/forwarding", "0");
	failing(false, true, f, sizeof(f));
	assert_string_equal(f, "ipv4_forwarding");

	good_host();
	put("net/ipv4/conf/all/send_redirects", "1");
	failing(false, true, f, sizeof(f));
	assert_string_equal(f, "icmp_redirects_off");
	good_host();
	put("net/ipv4/conf/eth0/send_redirects", "1");
	failing(false, true, f, sizeof(f));
	assert_string_equal(f, "icmp_redirects_off");

	/* the larger of all and dev: 1 (strict) on either side with 0 on
	 * the other is strict; 2 anywhere is loose */
	good_host();
	put("net/ipv4/conf/all/rp_filter", "1");
	put("net/ipv4/conf/eth0/rp_filter", "0");
	failing(false, true, f, sizeof(f));
	assert_string_equal(f, "rp_filter_not_strict");
	put("net/ipv4/conf/all/rp_filter", "1");
	put("net/ipv4/conf/eth0/rp_filter", "2");
	failing(false, true, f, sizeof(f));
	assert_string_equal(f, "");

	good_host();
	put("net/ipv6/conf/all/forwarding", "0");
	failing(true, true, f, sizeof(f));
	assert_string_equal(f, "ipv6_forwarding");
	/* not asked for a device without IPv6 addresses */
	failing(false, true, f, sizeof(f));
	assert_string_equal(f, "");

	good_host();
	failing(false, false, f, sizeof(f));
	assert_string_equal(f, "gue_ports");
}

static void test_unreadable(void **state)
{
	char p[256], f[256];
	struct mlv_sc_check c[MLV_SC_CHECKS_MAX];
	(void)state;

	good_host();
	snprintf(p, sizeof(p), "%s/net/ipv4/conf/eth0/forwarding", root);
	assert_int_equal(unlink(p), 0);
	failing(false, true, f, sizeof(f));
	assert_string_equal(f, "ipv4_forwarding");
	put("net/ipv4/conf/eth0/forwarding", "one");
	failing(false, true, f, sizeof(f));
	assert_string_equal(f, "ipv4_forwarding");
	/* the hint says what to set */
	mlv_sc_readiness(root, "eth0", false, true, c);
	assert_non_null(strstr(c[0].detail, "set it to 1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ready),
		cmocka_unit_test(test_each_fault),
		cmocka_unit_test(test_unreadable),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
