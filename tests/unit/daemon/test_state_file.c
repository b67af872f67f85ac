/* SPDX-License-Identifier: BSD-3-Clause */
/* The state file that keeps runtime overrides across restarts
 * (daemon/runtime/state_file.c) and the file helpers under it
 * (control/base/file.c): a round trip, a missing file, every way a file
 * can be unusable (malformed, out of range, a link, a FIFO, a directory
 * others can write), and the old file kept when a write cannot happen. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "control/base/file.h"
#include "daemon/runtime/state_file.h"

struct fixture {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/mlv-state-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/maglevd.state", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void write_text(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
}

static void put(struct mlv_overrides *o, const char *vip, const char *be,
		bool drain, bool has_weight, uint32_t weight)
{
	struct mlv_override ov = { .drain = drain, .has_weight = has_weight,
				   .weight = weight };

	snprintf(ov.vip, sizeof(ov.vip), "%s", vip);
	snprintf(ov.backend, sizeof(ov.backend), "%s", be);
	assert_int_equal(mlv_overrides_put(o, &ov, NULL), MLV_OK);
}

static void test_round_trip(void **state)
{
	struct fixture *f = *state;
	struct mlv_overrides o, back;
	struct mlv_override got;
	char why[256] = "";
	struct stat st;

	mlv_overrides_init(&o);
	mlv_overrides_init(&back);
	/* nothing there yet: no overrides, no error */
	assert_int_equal(mlv_state_file_load(f->path, &back, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(back.n, 0);

	put(&o, "web", "b1", true, false, 0);
	put(&o, "web", "b2", false, true, 0);
	put(&o, "dns", "ns-1", true, true, 250);
	assert_int_equal(mlv_state_file_save(f->path, &o, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	assert_int_equal(mlv_state_file_load(f->path, &back, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(back.n, 3);
	assert_true(mlv_overrides_get(&back, "web", "b1", &got));
	assert_true(got.drain);
	assert_false(got.has_weight);
	assert_true(mlv_overrides_get(&back, "web", "b2", &got));
	assert_false(got.drain);
	assert_true(got.has_weight);
	assert_int_equal(got.weight, 0);
	assert_true(mlv_overrides_get(&back, "dns", "ns-1", &got));
	assert_true(got.drain && got.has_weight && got.weight == 250);

	/* saving the empty store leaves an empty list, not the old one */
	mlv_overrides_free(&o);
	mlv_overrides_init(&o);
	assert_int_equal(mlv_state_file_save(f->path, &o, why, sizeof(why)),
			 MLV_OK);
	mlv_overrides_free(&back);
	mlv_overrides_init(&back);
	assert_int_equal(mlv_state_file_load(f->path, &back, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(back.n, 0);
	mlv_overrides_free(&back);
}

/* Each text is refused whole: the store stays empty and why names it. */
static void test_bad_files(void **state)
{
	static const struct { const char *text, *why; } bad[] = {
		{ "{\"maglevd_state\": 1, \"overrides\": [", "t.state:1:" },
		{ "[]", "not a maglevd state file" },
		{ "{\"maglevd_state\": 2, \"overrides\": []}", "not a maglevd state file" },
		{ "{\"maglevd_state\": 1, \"overrides\": [{\"vip\": \"web\", "
		  "\"backend\": \"b1\", \"drain\": true, \"weight\": 1000001}]}",
		  "out of 0..1000000" },
		{ "{\"maglevd_state\": 1, \"overrides\": [{\"vip\": \"web\", "
		  "\"backend\": \"b1\", \"drain\": \"yes\", \"weight\": null}]}",
		  "is not {vip" },
		{ "{\"maglevd_state\": 1, \"overrides\": [{\"vip\": \"web\", \"backend\": "
		  "\"b1\", \"drain\": false, \"weight\": 5}, {\"vip\": \"\", "
		  "\"backend\": \"b1\", \"drain\": true, \"weight\": null}]}",
		  "empty or longer" },
		{ "{\"maglevd_state\": 1, \"maglevd_state\": 1, \"overrides\": []}",
		  "duplicate" },
	};
	struct fixture *f = *state;
	char path[160];

	snprintf(path, sizeof(path), "%s/t.state", f->dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mlv_overrides o;
		char why[256] = "";

		mlv_overrides_init(&o);
		write_text(path, bad[i].text);
		assert_int_equal(mlv_state_file_load(path, &o, why, sizeof(why)),
				 MLV_E_INVAL);
		assert_int_equal(o.n, 0);
		if (!strstr(why, bad[i].why))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, why, bad[i].why);
		mlv_overrides_free(&o);
	}
}

static void test_links_fifos_and_open_dirs(void **state)
{
	struct fixture *f = *state;
	struct mlv_overrides o;
	char why[256] = "", target[160], fifo[160], open_dir[160], in_open[200];
	char *data;
	size_t len;

	mlv_overrides_init(&o);
	put(&o, "web", "b1", true, false, 0);

	/* a link in the file's place is not followed, for reading */
	snprintf(target, sizeof(target), "%s/elsewhere", f->dir);
	write_text(target, "{\"maglevd_state\": 1, \"overrides\": []}");
	assert_int_equal(symlink(target, f->path), 0);
	assert_int_equal(mlv_state_file_load(f->path, &o, why, sizeof(why)),
			 MLV_E_IO);
	/* ... and a save replaces the link itself, never writes through it */
	assert_int_equal(mlv_state_file_save(f->path, &o, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(mlv_file_read(target, 1024, &data, &len, why,
				       sizeof(why)), MLV_OK);
	assert_string_equal(data, "{\"maglevd_state\": 1, \"overrides\": []}");
	free(data);

	/* a FIFO is not a regular file, and the open does not block on it */
	snprintf(fifo, sizeof(fifo), "%s/fifo", f->dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(mlv_file_read(fifo, 1024, &data, &len, why,
				       sizeof(why)), MLV_E_INVAL);
	assert_non_null(strstr(why, "not a regular file"));
	assert_int_equal(mlv_file_read(target, 4, &data, &len, why,
				       sizeof(why)), MLV_E_INVAL);
	assert_non_null(strstr(why, "too large"));

	/* a directory others can write is refused, and nothing is left */
	snprintf(open_dir, sizeof(open_dir), "%s/open", f->dir);
	assert_int_equal(mkdir(open_dir, 0700), 0);
	assert_int_equal(chmod(open_dir, 0777), 0);
	snprintf(in_open, sizeof(in_open), "%s/maglevd.state", open_dir);
	assert_int_equal(mlv_state_file_save(in_open, &o, why, sizeof(why)),
			 MLV_E_PERM);
	assert_non_null(strstr(why, "writable by others"));
	assert_int_equal(access(in_open, F_OK), -1);

	/* reading trusts neither a file in such a directory, nor a file
	 * another user owns, nor one others may write */
	snprintf(in_open, sizeof(in_open), "%s/open/planted.state", f->dir);
	write_text(in_open, "{\"maglevd_state\": 1, \"overrides\": []}");
	assert_int_equal(mlv_file_read(in_open, 1024, &data, &len, why,
				       sizeof(why)), MLV_E_PERM);
	assert_non_null(strstr(why, "writable by others"));
	if (geteuid() == 0) {
		assert_int_equal(chown(target, 65534, 65534), 0);
		assert_int_equal(mlv_file_read(target, 1024, &data, &len, why,
					       sizeof(why)), MLV_E_PERM);
		assert_int_equal(chown(target, 0, 0), 0);
	}
	assert_int_equal(chmod(target, 0666), 0);
	assert_int_equal(mlv_file_read(target, 1024, &data, &len, why,
				       sizeof(why)), MLV_E_PERM);
	assert_int_equal(chmod(target, 0600), 0);
	assert_int_equal(mlv_file_read(target, 1024, &data, &len, why,
				       sizeof(why)), MLV_OK);
	free(data);

	/* a directory that does not exist: an error */
	snprintf(in_open, sizeof(in_open), "%s/none/maglevd.state", f->dir);
	assert_int_equal(mlv_state_file_save(in_open, &o, why, sizeof(why)),
			 MLV_E_IO);

	/* a save that cannot happen leaves the old file as it was */
	{
		struct mlv_overrides empty;
		struct stat st;
		char *before, *after;

		assert_int_equal(mlv_file_read(f->path, 1024, &before, &len, why,
					       sizeof(why)), MLV_OK);
		assert_non_null(strstr(before, "\"b1\""));
		mlv_overrides_init(&empty);
		assert_int_equal(stat(f->dir, &st), 0);
		assert_int_equal(chmod(f->dir, 0777), 0);
		assert_int_equal(mlv_state_file_save(f->path, &empty, why,
						     sizeof(why)), MLV_E_PERM);
		assert_int_equal(chmod(f->dir, st.st_mode & 07777), 0);
		assert_int_equal(mlv_file_read(f->path, 1024, &after, &len, why,
					       sizeof(why)), MLV_OK);
		assert_string_equal(after, before);
		free(before);
		free(after);
		mlv_overrides_free(&empty);
	}
	mlv_overrides_free(&o);
}

static void test_path(void **state)
{
	char out[64];
	(void)state;

	assert_int_equal(mlv_state_file_path("", "/run/maglevd/maglevd.sock",
					     out, sizeof(out)), MLV_OK);
	assert_string_equal(out, "/run/maglevd/maglevd.sock.state");
	assert_int_equal(mlv_state_file_path("/var/lib/maglevd/state.json",
					     "/run/x.sock", out, sizeof(out)),
			 MLV_OK);
	assert_string_equal(out, "/var/lib/maglevd/state.json");
	assert_int_equal(mlv_state_file_path("", "", out, sizeof(out)),
			 MLV_E_INVAL);
	assert_int_equal(mlv_state_file_path("", "/a/very/long/socket/path/that/"
					     "does/not/fit/in/out", out, 32),
			 MLV_E_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_links_fifos_and_open_dirs,
						setup, teardown),
		cmocka_unit_test(test_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
