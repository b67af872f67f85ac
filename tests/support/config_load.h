/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading a config a test expects to be valid. Include after <cmocka.h>. */
#ifndef MLV_TEST_CONFIG_LOAD_H
#define MLV_TEST_CONFIG_LOAD_H

#include <stdio.h>

#include "control/config/config.h"
#include "control/config/diags.h"

/* The model of a config the test expects to be valid: any diagnostic is
 * printed, and the test fails unless the config loads. */
static inline struct mlv_config *config_load_ok(const char *text, size_t len)
{
	struct mlv_config *cfg = NULL;
	struct mlv_diags d;
	enum mlv_err err;

	mlv_diags_init(&d);
	err = mlv_config_load_buffer("t.yaml", text, len, &cfg, &d);
	if (err)
		mlv_diags_print(&d, stderr);
	mlv_diags_free(&d);
	assert_int_equal(err, MLV_OK);
	assert_non_null(cfg);
	return cfg;
}

#endif
