/* SPDX-License-Identifier: BSD-3-Clause */
/* VIP routes (daemon/netlink/announce.c) against the real kernel, in a
 * network namespace of the test's own (unshare): the routes a set leaves,
 * stale routes removed at start, and the device and its routes gone with
 * the process that owned them, even after SIGKILL. Needs root (CAP_NET_ADMIN
 * for the namespace); exits 77 (skipped) without. The kernel's view is read
 * with iproute2, not with the code under test. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/netlink/announce.h"

#define TABLE 100
#define DEV "mlv-t0"

static struct mlv_ip ip(const char *text)
{
	struct mlv_ip a;

	assert_true(mlv_ip_parse(text, &a));
	return a;
}

/* The output of a shell command (at most 4 KiB), or NULL if it failed. */
__attribute__((format(printf, 1, 2)))
static char *run(const char *fmt, ...)
{
	static char out[4096];
	char cmd[512];
	va_list ap;
	FILE *p;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	return pclose(p) == 0 ? out : NULL;
}

/* Our protocol's routes in TABLE, both families, as "ADDR DEV" lines. */
static const char *routes(void)
{
	const char *r = run("{ ip -4 route show table %d proto %d; "
			    "ip -6 route show table %d proto %d; } 2>/dev/null | "
			    "awk '{ print $1, $3 }' | sort", TABLE,
			    MLV_RTPROT_MAGLEVD, TABLE, MLV_RTPROT_MAGLEVD);

	assert_non_null(r);
	return r;
}

static bool link_exists(const char *name)
{
	return run("ip link show dev %s >/dev/null 2>&1", name) != NULL;
}

static void open_ok(struct mlv_announce *a)
{
	char why[256] = "";

	mlv_announce_init(a);
	if (mlv_announce_open(a, DEV, TABLE, why, sizeof(why)) != MLV_OK)
		fail_msg("open: %s", why);
	assert_true(mlv_announce_is_open(a));
}

static void test_set_adds_and_withdraws(void **state)
{
	struct mlv_ip both[] = { ip("2001:db8::10"), ip("192.0.2.10"),
				 ip("192.0.2.10") };
	struct mlv_ip one = ip("2001:db8::10");
	struct mlv_announce a;
	(void)state;

	open_ok(&a);
	assert_true(link_exists(DEV));
	assert_string_equal(routes(), "");

	assert_int_equal(mlv_announce_set(&a, both, 3), MLV_OK);
	assert_string_equal(routes(), "192.0.2.10 " DEV "\n2001:db8::10 " DEV "\n");
	assert_true(mlv_announce_has(&a, &both[1]));
	assert_int_equal(a.announces, 2);

	/* the same set again changes nothing */
	assert_int_equal(mlv_announce_set(&a, both, 2), MLV_OK);
	assert_int_equal(a.announces, 2);
	assert_int_equal(a.withdraws, 0);

	assert_int_equal(mlv_announce_set(&a, &one, 1), MLV_OK);
	assert_string_equal(routes(), "2001:db8::10 " DEV "\n");
	assert_false(mlv_announce_has(&a, &both[1]));
	assert_int_equal(a.withdraws, 1);

	/* a route deleted behind our back: a withdraw still succeeds, and a
	 * later set puts it back */
	assert_non_null(run("ip -6 route del 2001:db8::10/128 table %d", TABLE));
	mlv_announce_withdraw_all(&a);
	assert_int_equal(a.n_routes, 0);
	assert_int_equal(a.errors, 0);
	assert_int_equal(mlv_announce_set(&a, &one, 1), MLV_OK);
	assert_string_equal(routes(), "2001:db8::10 " DEV "\n");

	mlv_announce_close(&a);
	assert_false(link_exists(DEV));
	assert_string_equal(routes(), "");
	assert_false(mlv_announce_is_open(&a));
	assert_int_equal(mlv_announce_set(&a, &one, 1), MLV_E_INVAL);
}

static void test_stale_routes_removed_at_open(void **state)
{
	struct mlv_announce a;
	const char *other;
	(void)state;

	assert_non_null(run("ip link add mlv-stale type dummy 2>/dev/null || "
			    "ip tuntap add mode tun mlv-stale"));
	assert_non_null(run("ip link set mlv-stale up"));
	assert_non_null(run("ip route add 198.51.100.1/32 dev mlv-stale table %d "
			    "proto %d", TABLE, MLV_RTPROT_MAGLEVD));
	/* another protocol's route in the same table is not ours */
	assert_non_null(run("ip route add 198.51.100.2/32 dev mlv-stale table %d "
			    "proto static", TABLE));
	assert_string_equal(routes(), "198.51.100.1 mlv-stale\n");

	open_ok(&a);
	assert_string_equal(routes(), "");
	other = run("ip route show table %d", TABLE);
	assert_non_null(other);
	assert_non_null(strstr(other, "198.51.100.2"));
	mlv_announce_close(&a);
	assert_non_null(run("ip link del mlv-stale"));
}

static void test_refused(void **state)
{
	struct mlv_announce a, b;
	char why[256] = "";
	(void)state;

	mlv_announce_init(&b);
	assert_int_equal(mlv_announce_open(&b, DEV, 0, why, sizeof(why)),
			 MLV_E_INVAL);
	assert_int_equal(mlv_announce_open(&b, "a-name-too-long-for-linux", TABLE,
					   why, sizeof(why)), MLV_E_INVAL);

	/* a second instance with the same device is refused, and leaves the
	 * first one's device and routes alone */
	open_ok(&a);
	assert_int_equal(mlv_announce_set(&a, (struct mlv_ip[]){ ip("192.0.2.7") },
					  1), MLV_OK);
	assert_int_equal(mlv_announce_open(&b, DEV, TABLE, why, sizeof(why)),
			 MLV_E_IO);
	assert_non_null(strstr(why, "each instance needs its own announce.device"));
	assert_false(mlv_announce_is_open(&b));
	assert_string_equal(routes(), "192.0.2.7 " DEV "\n");
	mlv_announce_close(&a);
}

/* Poll up to 5 s for the kernel to have dropped the dead owner's device. */
static bool gone_within_5s(void)
{
	for (int i = 0; i < 500; i++) {
		if (!link_exists(DEV) && routes()[0] == '\0')
			return true;
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	return false;
}

static void test_routes_die_with_the_process(void **state)
{
	int ready[2], status;
	pid_t child;
	char c;
	(void)state;

	assert_int_equal(pipe(ready), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct mlv_announce a;
		struct mlv_ip v[] = { ip("192.0.2.20"), ip("2001:db8::20") };
		char why[256];

		close(ready[0]);
		mlv_announce_init(&a);
		if (mlv_announce_open(&a, DEV, TABLE, why, sizeof(why)) != MLV_OK ||
		    mlv_announce_set(&a, v, 2) != MLV_OK)
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	assert_string_equal(routes(), "192.0.2.20 " DEV "\n2001:db8::20 " DEV "\n");

	assert_int_equal(kill(child, SIGKILL), 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFSIGNALED(status));
	assert_true(gone_within_5s());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_adds_and_withdraws),
		cmocka_unit_test(test_stale_routes_removed_at_open),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_routes_die_with_the_process),
	};

	if (geteuid() != 0 || unshare(CLONE_NEWNET) != 0) {
		fprintf(stderr, "test_announce: needs root for a network "
			"namespace of its own (%s); skipped\n", strerror(errno));
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
