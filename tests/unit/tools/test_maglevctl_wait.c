/* SPDX-License-Identifier: BSD-3-Clause */
/* maglevctl drain --wait (tools/bin/maglevctl/wait.h) against a scripted
 * daemon: the wait ends after two polls in a row find no open (active)
 * connection on the drained backend, whatever opening or closing
 * entries remain; a handshake that turns active between two polls
 * restarts the count; other backends' connections do not count; the
 * deadline gives exit 4 with what is left; a daemon that stops
 * answering gives exit 3. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "tools/bin/maglevctl/wait.h"

/* The script: the drained web/b2's (active, inactive) at each poll, and
 * b1's, which must not count. A poll past the script gets no reply. */
static const int (*script)[2];
static size_t script_len, polls;

static char *scripted(const char *path, int timeout_s, const json_t *req)
{
	json_t *r;
	char *line;

	(void)path;
	(void)timeout_s;
	assert_string_equal(json_string_value(json_object_get(req, "command")),
			    "backends");
	if (polls >= script_len)
		return NULL;
	r = json_pack("{s:b, s:[{s:s, s:s, s:i, s:i}, {s:s, s:s, s:i, s:i}]}",
		      "ok", 1, "backends",
		      "vip", "web", "name", "b1", "active_connections", 7,
		      "inactive_connections", 3,
		      "vip", "web", "name", "b2",
		      "active_connections", script[polls][0],
		      "inactive_connections", script[polls][1]);
	polls++;
	line = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	return line;
}

/* Run the wait on web/b2 with wait_s; the exit status, and its JSON
 * outcome in *outcome (NULL when it printed none). */
static int wait_on(const int (*s)[2], size_t n, int wait_s, json_t **outcome)
{
	json_t *drain = json_pack("{s:b, s:s, s:s}", "ok", 1, "vip", "web",
				  "backend", "b2");
	char buf[1024] = "";
	FILE *out = fmemopen(buf, sizeof(buf) - 1, "w");
	int rc;

	script = s;
	script_len = n;
	polls = 0;
	assert_non_null(out);
	rc = maglevctl_wait_drained(scripted, "sock", 1, wait_s, drain, true,
				    out);
	fclose(out);
	json_decref(drain);
	*outcome = buf[0] ? json_loads(buf, 0, NULL) : NULL;
	return rc;
}

static void test_closing_entries_do_not_hold(void **state)
{
	static const int s[][2] = { { 2, 0 }, { 1, 1 }, { 0, 2 }, { 0, 2 } };
	json_t *o;
	(void)state;

	assert_int_equal(wait_on(s, 4, 30, &o), 0);
	assert_int_equal(polls, 4);
	assert_non_null(o);
	assert_true(json_is_true(json_object_get(o, "drained")));
	assert_int_equal(json_integer_value(json_object_get(o, "remaining")), 0);
	assert_int_equal(json_integer_value(json_object_get(o, "inactive")), 2);
	json_decref(o);
}

static void test_handshake_restarts_the_count(void **state)
{
	/* an opening entry turns active between two quiet polls */
	static const int s[][2] = { { 0, 1 }, { 1, 0 }, { 0, 0 }, { 0, 0 } };
	json_t *o;
	(void)state;

	assert_int_equal(wait_on(s, 4, 30, &o), 0);
	assert_int_equal(polls, 4);
	json_decref(o);
}

static void test_deadline(void **state)
{
	static const int s[][2] = {
		{ 1, 0 }, { 1, 0 }, { 1, 0 }, { 1, 0 }, { 1, 0 }, { 1, 0 },
		{ 1, 0 }, { 1, 0 }, { 1, 0 }, { 1, 0 }, { 1, 0 }, { 1, 0 },
	};
	json_t *o;
	(void)state;

	assert_int_equal(wait_on(s, 12, 1, &o), MAGLEVCTL_EXIT_WAIT_TIMEOUT);
	assert_non_null(o);
	assert_true(json_is_false(json_object_get(o, "drained")));
	assert_int_equal(json_integer_value(json_object_get(o, "remaining")), 1);
	json_decref(o);
}

static void test_no_reply(void **state)
{
	static const int s[][2] = { { 1, 0 } };
	json_t *o;
	(void)state;

	assert_int_equal(wait_on(s, 1, 30, &o), MAGLEVCTL_EXIT_NO_REPLY);
	assert_int_equal(polls, 1);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_closing_entries_do_not_hold),
		cmocka_unit_test(test_handshake_restarts_the_count),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_no_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
