/* SPDX-License-Identifier: BSD-3-Clause */
/* Test fixture for the config loader: load YAML text, and find
 * diagnostics at the line:col of a token of the fixture text (expected
 * positions come from the text itself, never from the loader's output).
 * Include after <cmocka.h>. */
#ifndef MLV_TEST_CONFIG_FIXTURE_H
#define MLV_TEST_CONFIG_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "control/config/config.h"
#include "control/config/diags.h"
#include "tests/support/config_load.h"

struct load {
	enum mlv_err err;
	struct mlv_config *cfg;
	struct mlv_diags d;
};

static inline void load_len(struct load *l, const char *text, size_t len)
{
	mlv_diags_init(&l->d);
	l->err = mlv_config_load_buffer("t.yaml", text, len, &l->cfg, &l->d);
}

static inline void load(struct load *l, const char *text)
{
	load_len(l, text, strlen(text));
}

static inline void unload(struct load *l)
{
	mlv_config_free(l->cfg);
	mlv_diags_free(&l->d);
}

static inline void dump(const struct load *l)
{
	mlv_diags_print(&l->d, stderr);
}

/* line:col of the nth (0-based) occurrence of needle in text. */
static inline struct mlv_src_pos pos_of(const char *text, const char *needle, int nth)
{
	struct mlv_src_pos p = { 1, 1 };
	const char *hit = text, *c;

	for (;;) {
		hit = strstr(hit, needle);
		if (hit == NULL)
			fail_msg("fixture has no occurrence %d of '%s'", nth, needle);
		if (nth-- == 0)
			break;
		hit++;
	}
	for (c = text; c < hit; c++) {
		if (*c == '\n') {
			p.line++;
			p.col = 1;
		} else {
			p.col++;
		}
	}
	return p;
}

static inline const struct mlv_diag *find_diag(const struct load *l,
					enum mlv_diag_level level,
					struct mlv_src_pos pos, const char *msg)
{
	uint32_t i;

	for (i = 0; i < l->d.n; i++) {
		const struct mlv_diag *it = &l->d.items[i];

		if (it->level == level && it->pos.line == pos.line &&
		    it->pos.col == pos.col && strstr(it->message, msg) != NULL)
			return it;
	}
	return NULL;
}

/* Assert a diagnostic of this level at the nth occurrence of needle. */
static inline void expect_diag(const struct load *l, enum mlv_diag_level level,
			const char *text, const char *needle, int nth,
			const char *msg)
{
	struct mlv_src_pos p = pos_of(text, needle, nth);

	if (find_diag(l, level, p, msg) == NULL) {
		dump(l);
		fail_msg("no %s at %u:%u ('%s') containing \"%s\"",
			 level == MLV_DIAG_ERROR ? "error" : "warning",
			 p.line, p.col, needle, msg);
	}
}

#define expect_error(l, text, needle, msg) \
	expect_diag(l, MLV_DIAG_ERROR, text, needle, 0, msg)

static inline void expect_ok(const struct load *l)
{
	if (l->err != MLV_OK || l->d.n_errors != 0) {
		dump(l);
		fail_msg("expected the config to load, got %s", mlv_strerror(l->err));
	}
	assert_non_null(l->cfg);
}

static inline void expect_rejected(const struct load *l)
{
	assert_int_equal(l->err, MLV_E_CONFIG);
	assert_null(l->cfg);
	assert_true(l->d.n_errors > 0);
}

#endif
