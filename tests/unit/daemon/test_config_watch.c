/* SPDX-License-Identifier: BSD-3-Clause */
/* The config file watch (daemon/runtime/config_watch.c) on a real temporary
 * directory: an atomic rename and an in-place write of the file are
 * seen, other files in the directory are not, a burst is one reload, a
 * symlinked config is followed to its target's directory, and a link on
 * the way swapped (ln -sfn, a ConfigMap's ..data) is a change. The debounce
 * timer is waited for with poll on its fd (no sleeps, no timing
 * asserted). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/runtime/config_watch.h"

struct fx {
	char dir[64];
	char path[128];
	struct mlv_config_watch w;
};

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char err[256];

	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/mlv-watch-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->path, sizeof(fx->path), "%s/maglevd.yaml", fx->dir);
	put(fx->path, "a: 1\n");
	assert_int_equal(mlv_config_watch_open(fx->path, &fx->w, err,
					       sizeof(err)), MLV_OK);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[128];

	mlv_config_watch_close(&fx->w);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

/* Read what inotify has; returns whether a change was seen. The events
 * of a completed write or rename are queued before the call returns. */
static bool events(struct fx *fx)
{
	return mlv_config_watch_on_inotify(&fx->w);
}

/* Block until the debounce timer fires, then ask whether a reload is
 * due. */
static bool timer_fires(struct fx *fx)
{
	struct pollfd p = { .fd = fx->w.timer_fd, .events = POLLIN };

	assert_int_equal(poll(&p, 1, 10000), 1);
	return mlv_config_watch_on_timer(&fx->w);
}

static void test_rename_seen(void **state)
{
	struct fx *fx = *state;
	char tmp[160];

	snprintf(tmp, sizeof(tmp), "%s.new", fx->path);
	put(tmp, "a: 2\n");
	/* writing the temporary file is not a change of the config */
	assert_false(events(fx));
	assert_false(fx->w.pending);
	assert_int_equal(rename(tmp, fx->path), 0);
	assert_true(events(fx));
	assert_true(fx->w.pending);
	assert_true(timer_fires(fx));
	assert_false(fx->w.pending);
	/* nothing more is due */
	assert_false(mlv_config_watch_on_timer(&fx->w));
}

static void test_in_place_and_others(void **state)
{
	struct fx *fx = *state;
	char other[160];

	snprintf(other, sizeof(other), "%s/other.yaml", fx->dir);
	put(other, "b: 1\n");
	assert_false(events(fx));
	put(fx->path, "a: 3\n");
	assert_true(events(fx));
	assert_true(timer_fires(fx));
}

static void test_burst_is_one(void **state)
{
	struct fx *fx = *state;

	for (int i = 0; i < 20; i++) {
		put(fx->path, i % 2 ? "a: 4\n" : "a: 5\n");
		assert_true(events(fx));
	}
	assert_int_equal(fx->w.changes, 20);
	/* twenty saves, one reload */
	assert_true(timer_fires(fx));
	assert_false(fx->w.pending);
	assert_false(mlv_config_watch_on_timer(&fx->w));
}

static void test_symlink_target(void **state)
{
	struct fx *fx = *state;
	char sub[96], target[160], link[160], err[256];
	struct mlv_config_watch w;
	struct pollfd p;

	snprintf(sub, sizeof(sub), "%s/real", fx->dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(target, sizeof(target), "%s/lb.yaml", sub);
	put(target, "a: 1\n");
	snprintf(link, sizeof(link), "%s/current.yaml", fx->dir);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(mlv_config_watch_open(link, &w, err, sizeof(err)), MLV_OK);
	assert_int_equal(w.n, 2);
	put(target, "a: 2\n");            /* edit the target in place */
	assert_true(mlv_config_watch_on_inotify(&w));
	p = (struct pollfd){ .fd = w.timer_fd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_true(mlv_config_watch_on_timer(&w));
	mlv_config_watch_close(&w);
}

/* A Kubernetes ConfigMap volume: maglevd.yaml -> ..data/maglevd.yaml,
 * ..data -> ..v1 (a directory). An update writes ..v2 and renames a new
 * ..data link over the old one, then removes ..v1. The swap is a
 * change; so is a later edit in ..v2; the old directory is forgotten. */
static void test_configmap_swap(void **state)
{
	struct fx *fx = *state;
	char vol[96], path[200], cmd[256], err[256];
	struct mlv_config_watch w;
	struct pollfd p;

	snprintf(vol, sizeof(vol), "%s/cm", fx->dir);
	assert_int_equal(mkdir(vol, 0755), 0);
	snprintf(cmd, sizeof(cmd), "cd %s && mkdir ..v1 ..v2 && "
		 "echo 'a: 1' > ..v1/maglevd.yaml && "
		 "echo 'a: 2' > ..v2/maglevd.yaml && ln -s ..v1 ..data && "
		 "ln -s ..data/maglevd.yaml maglevd.yaml", vol);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/maglevd.yaml", vol);
	assert_int_equal(mlv_config_watch_open(path, &w, err, sizeof(err)),
			 MLV_OK);
	/* maglevd.yaml, ..data, and ..v1/maglevd.yaml */
	assert_int_equal(w.n, 3);
	assert_false(mlv_config_watch_on_inotify(&w));

	snprintf(cmd, sizeof(cmd), "cd %s && ln -s ..v2 ..data_tmp && "
		 "mv -T ..data_tmp ..data", vol);
	assert_int_equal(system(cmd), 0);
	assert_true(mlv_config_watch_on_inotify(&w));
	p = (struct pollfd){ .fd = w.timer_fd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_true(mlv_config_watch_on_timer(&w));

	/* the old version goes: not a change (and not a lost watch) */
	snprintf(cmd, sizeof(cmd), "rm -rf %s/..v1", vol);
	assert_int_equal(system(cmd), 0);
	assert_false(mlv_config_watch_on_inotify(&w));
	assert_int_equal(w.n, 3);
	/* an edit in the new version is seen */
	snprintf(path, sizeof(path), "%s/..v2/maglevd.yaml", vol);
	put(path, "a: 3\n");
	assert_true(mlv_config_watch_on_inotify(&w));
	mlv_config_watch_close(&w);
}

/* `ln -sfn NEW current.yaml` (a new link renamed over the old one): a
 * change, and the new target's directory is watched from then on. */
static void test_link_swapped(void **state)
{
	struct fx *fx = *state;
	char a[96], b[96], link[160], file[160], cmd[512], err[256];
	struct mlv_config_watch w;

	snprintf(a, sizeof(a), "%s/release-a", fx->dir);
	snprintf(b, sizeof(b), "%s/release-b", fx->dir);
	assert_int_equal(mkdir(a, 0755), 0);
	assert_int_equal(mkdir(b, 0755), 0);
	snprintf(file, sizeof(file), "%s/lb.yaml", a);
	put(file, "a: 1\n");
	snprintf(file, sizeof(file), "%s/lb.yaml", b);
	put(file, "a: 2\n");
	snprintf(link, sizeof(link), "%s/current.yaml", fx->dir);
	snprintf(cmd, sizeof(cmd), "ln -s release-a/lb.yaml %s", link);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(mlv_config_watch_open(link, &w, err, sizeof(err)),
			 MLV_OK);
	snprintf(cmd, sizeof(cmd), "ln -sfn release-b/lb.yaml %s", link);
	assert_int_equal(system(cmd), 0);
	assert_true(mlv_config_watch_on_inotify(&w));
	/* edits in release-b are now changes; release-a's are not */
	put(file, "a: 3\n");
	assert_true(mlv_config_watch_on_inotify(&w));
	snprintf(file, sizeof(file), "%s/lb.yaml", a);
	put(file, "a: 4\n");
	assert_false(mlv_config_watch_on_inotify(&w));
	mlv_config_watch_close(&w);
}

static void test_bad_directory(void **state)
{
	struct mlv_config_watch w;
	char err[256] = "";

	(void)state;
	assert_int_equal(mlv_config_watch_open("/nonexistent-mlv/dir/x.yaml", &w,
					       err, sizeof(err)), MLV_E_IO);
	assert_non_null(strstr(err, "/nonexistent-mlv/dir"));
	assert_int_equal(w.inotify_fd, -1);
	assert_int_equal(w.timer_fd, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rename_seen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_in_place_and_others, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_burst_is_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_target, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_configmap_swap, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_link_swapped, setup,
						teardown),
		cmocka_unit_test(test_bad_directory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
