/* SPDX-License-Identifier: BSD-3-Clause */
/* control/base/file.h: files replaced whole, never through a link, only
 * in directories no one else can subvert. Runs as root (CI) to hand
 * directories to another user; as anyone else those cases are skipped. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "control/base/file.h"

#define OTHER_UID 65534

struct tmp {
	char dir[64];
	char path[128];
	char why[512];
};

static int setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "/tmp/mlv-file-XXXXXX");
	if (!mkdtemp(t->dir))
		return -1;
	snprintf(t->path, sizeof(t->path), "%s/out.json", t->dir);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tmp *t = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", t->dir);
	if (system(cmd) != 0)
		return -1;
	free(t);
	return 0;
}

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* Written whole with the mode asked, whatever the umask; nothing left
 * beside it. */
static void test_replace_mode_and_content(void **state)
{
	struct tmp *t = *state;
	mode_t old = umask(077);
	struct stat st;

	assert_int_equal(mlv_file_replace(t->path, "one\n", 4, 0644,
					  MLV_FILE_DURABLE, t->why,
					  sizeof(t->why)), MLV_OK);
	umask(old);
	assert_string_equal(slurp(t->path), "one\n");
	assert_int_equal(lstat(t->path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(mlv_file_replace(t->path, "two\n", 4, 0600, 0, t->why,
					  sizeof(t->why)), MLV_OK);
	assert_string_equal(slurp(t->path), "two\n");
	{
		char cmd[160];

		/* only out.json in the directory: no temporary file left */
		snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 1",
			 t->dir);
		assert_int_equal(system(cmd), 0);
	}
}

/* Links planted where the writer might go (the target's name, the
 * temporary names an older scheme used) are never followed: the file
 * they point to keeps its content. */
static void test_replace_never_follows_links(void **state)
{
	struct tmp *t = *state;
	char victim[128], planted[192];
	struct stat st;

	snprintf(victim, sizeof(victim), "%s/victim", t->dir);
	put(victim, "precious\n");
	snprintf(planted, sizeof(planted), "%s.tmp.%d", t->path, (int)getpid());
	assert_int_equal(symlink(victim, planted), 0);
	snprintf(planted, sizeof(planted), "%s/.out.json.%d.tmp", t->dir,
		 (int)getpid());
	assert_int_equal(symlink(victim, planted), 0);
	assert_int_equal(symlink(victim, t->path), 0);

	assert_int_equal(mlv_file_replace(t->path, "new\n", 4, 0644, 0, t->why,
					  sizeof(t->why)), MLV_OK);
	assert_string_equal(slurp(victim), "precious\n");
	/* the link at the name itself is replaced, not written through */
	assert_int_equal(lstat(t->path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_string_equal(slurp(t->path), "new\n");
}

/* Directories others could subvert are refused, naming the reason;
 * a sticky one that root owns (/tmp) is fine; so is a private one. */
static void test_directory_checks(void **state)
{
	struct tmp *t = *state;
	char sub[128], path[192], link[128];
	int dfd;

	snprintf(sub, sizeof(sub), "%s/d", t->dir);
	assert_int_equal(mlv_dir_open(sub, 0, &dfd, t->why, sizeof(t->why)),
			 MLV_E_NOT_FOUND);
	/* created with the mode asked (umask aside: 0750 under 022) */
	assert_int_equal(mlv_dir_open(sub, 0750, &dfd, t->why, sizeof(t->why)),
			 MLV_OK);
	assert_true(dfd >= 0);
	close(dfd);
	snprintf(path, sizeof(path), "%s/f", sub);

	assert_int_equal(chmod(sub, 0777), 0);
	assert_int_equal(mlv_file_replace(path, "x", 1, 0600, 0, t->why,
					  sizeof(t->why)), MLV_E_PERM);
	assert_non_null(strstr(t->why, "writable by others without the sticky bit"));
	assert_non_null(strstr(t->why, sub));
	assert_int_equal(access(path, F_OK), -1);

	assert_int_equal(chmod(sub, 01777), 0);
	assert_int_equal(mlv_file_replace(path, "x", 1, 0600, 0, t->why,
					  sizeof(t->why)), MLV_OK);

	/* the directory itself a link: refused */
	snprintf(link, sizeof(link), "%s/l", t->dir);
	assert_int_equal(symlink(sub, link), 0);
	snprintf(path, sizeof(path), "%s/f", link);
	assert_int_equal(mlv_file_replace(path, "x", 1, 0600, 0, t->why,
					  sizeof(t->why)), MLV_E_PERM);
	assert_non_null(strstr(t->why, "symbolic link"));

	if (geteuid() != 0)
		return;
	/* sticky but someone else's: refused */
	assert_int_equal(chown(sub, OTHER_UID, OTHER_UID), 0);
	snprintf(path, sizeof(path), "%s/f", sub);
	assert_int_equal(mlv_file_replace(path, "y", 1, 0600, 0, t->why,
					  sizeof(t->why)), MLV_E_PERM);
	assert_non_null(strstr(t->why, "owner uid 65534"));
}

/* A file someone else made is not read as ours. */
static void test_read_trusts_only_own_files(void **state)
{
	struct tmp *t = *state;
	char *data = NULL;
	size_t len = 0;

	put(t->path, "ours\n");
	assert_int_equal(mlv_file_read(t->path, 64, &data, &len, t->why,
				       sizeof(t->why)), MLV_OK);
	assert_int_equal(len, 5);
	free(data);
	assert_int_equal(mlv_file_read(t->path, 4, &data, &len, t->why,
				       sizeof(t->why)), MLV_E_INVAL);
	assert_non_null(strstr(t->why, "too large"));
	if (geteuid() != 0)
		return;
	assert_int_equal(chown(t->path, OTHER_UID, OTHER_UID), 0);
	assert_int_equal(mlv_file_read(t->path, 64, &data, &len, t->why,
				       sizeof(t->why)), MLV_E_PERM);
	assert_null(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_replace_mode_and_content,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_never_follows_links,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory_checks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_read_trusts_only_own_files,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
