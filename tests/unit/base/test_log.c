/* SPDX-License-Identifier: BSD-3-Clause */
/* The logger's line formats (control/base/log.h): journal priority
 * prefixes when stderr is the journal, a UTC timestamp otherwise, and
 * one JSON object per line with --log-format json. Lines are captured
 * through a pipe, the descriptor the logger writes to. */
#define _GNU_SOURCE   /* pipe2 */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include <cmocka.h>

#include "control/base/log.h"

struct cap {
	int fds[2];
};

static int setup(void **state)
{
	struct cap *c = calloc(1, sizeof(*c));

	if (!c || pipe2(c->fds, O_NONBLOCK) != 0)
		return -1;
	unsetenv("JOURNAL_STREAM");
	mlv_log_set_level(MLV_LOG_DEBUG);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct cap *c = *state;

	mlv_log_setup(STDERR_FILENO, MLV_LOG_FORMAT_TEXT);
	mlv_log_set_level(MLV_LOG_INFO);
	unsetenv("JOURNAL_STREAM");
	close(c->fds[0]);
	close(c->fds[1]);
	free(c);
	return 0;
}

/* What was written since the last call, NUL-terminated. */
static const char *drain(struct cap *c)
{
	static char buf[8192];
	ssize_t n = read(c->fds[0], buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void assert_matches(const char *text, const char *pattern)
{
	regex_t re;
	int rc;

	assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
	rc = regexec(&re, text, 0, NULL, 0);
	regfree(&re);
	if (rc != 0)
		fail_msg("'%s' does not match /%s/", text, pattern);
}

static void set_journal_stream(int fd)
{
	struct stat st;
	char v[64];

	assert_int_equal(fstat(fd, &st), 0);
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", v, 1);
}

static void test_text_has_utc_timestamp(void **state)
{
	struct cap *c = *state;

	mlv_log_setup(c->fds[1], MLV_LOG_FORMAT_TEXT);
	assert_false(mlv_log_to_journal());
	mlv_warn("disk %s", "full");
	assert_matches(drain(c), "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:"
		       "[0-9]{2}\\.[0-9]{3}Z maglevd: warning: disk full\n$");
	mlv_log_source(MLV_LOG_INFO, "dpdk", "EAL: %d lcores", 3);
	assert_matches(drain(c), "Z maglevd: info: dpdk: EAL: 3 lcores\n$");
}

static void test_journal_gets_priorities(void **state)
{
	struct cap *c = *state;

	set_journal_stream(c->fds[1]);
	mlv_log_setup(c->fds[1], MLV_LOG_FORMAT_TEXT);
	assert_true(mlv_log_to_journal());
	mlv_err_log("a");
	assert_string_equal(drain(c), "<3>maglevd: error: a\n");
	mlv_warn("b");
	assert_string_equal(drain(c), "<4>maglevd: warning: b\n");
	mlv_info("c");
	assert_string_equal(drain(c), "<6>maglevd: info: c\n");
	mlv_debug("d");
	assert_string_equal(drain(c), "<7>maglevd: debug: d\n");
}

static void test_journal_stream_must_match(void **state)
{
	struct cap *c = *state;
	int other = open("/dev/null", O_WRONLY | O_CLOEXEC);

	/* another file's dev:ino is not ours: inherited from a parent whose
	 * stderr was the journal, while ours was redirected */
	assert_true(other >= 0);
	set_journal_stream(other);
	close(other);
	mlv_log_setup(c->fds[1], MLV_LOG_FORMAT_TEXT);
	assert_false(mlv_log_to_journal());
	setenv("JOURNAL_STREAM", "garbage", 1);
	mlv_log_setup(c->fds[1], MLV_LOG_FORMAT_TEXT);
	assert_false(mlv_log_to_journal());
	mlv_info("x");
	assert_matches(drain(c), "^[0-9]{4}-.*Z maglevd: info: x\n$");
}

static void test_json(void **state)
{
	struct cap *c = *state;

	mlv_log_setup(c->fds[1], MLV_LOG_FORMAT_JSON);
	mlv_info("say \"hi\"\\ and\tgo\n%c", 1);
	assert_matches(drain(c),
		       "^\\{\"time\":\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{3}Z\","
		       "\"level\":\"info\","
		       "\"message\":\"say \\\\\"hi\\\\\"\\\\\\\\ and\\\\tgo\\\\n\\\\u0001\"\\}\n$");
	mlv_log_source(MLV_LOG_WARNING, "dpdk", "x");
	assert_matches(drain(c), "\"level\":\"warning\",\"source\":\"dpdk\","
		       "\"message\":\"x\"\\}\n$");
	/* on the journal, the priority comes first all the same */
	set_journal_stream(c->fds[1]);
	mlv_log_setup(c->fds[1], MLV_LOG_FORMAT_JSON);
	mlv_err_log("e");
	assert_matches(drain(c), "^<3>\\{\"time\":.*\"message\":\"e\"\\}\n$");
}

static void test_level_filter_and_long_lines(void **state)
{
	struct cap *c = *state;
	char big[5000];

	mlv_log_setup(c->fds[1], MLV_LOG_FORMAT_JSON);
	mlv_log_set_level(MLV_LOG_WARNING);
	mlv_info("hidden");
	assert_string_equal(drain(c), "");
	memset(big, '"', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	mlv_warn("%s", big);
	/* cut, but still one closed object and one line: no escape cut in
	 * half, so the message is whole pairs \" and ends unescaped */
	assert_matches(drain(c), "^\\{.*\"message\":\"(\\\\\")+\"\\}\n$");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_text_has_utc_timestamp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_journal_gets_priorities, setup, teardown),
		cmocka_unit_test_setup_teardown(test_journal_stream_must_match, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_filter_and_long_lines, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
