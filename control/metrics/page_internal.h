/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to the metrics renderer (render.c, render_lb.c):
 * one page being written. Control thread only. */
#ifndef MLV_METRICS_PAGE_H
#define MLV_METRICS_PAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "control/generation/generation.h"
#include "control/metrics/expo.h"
#include "control/metrics/render.h"

/* Longest family name built at run time ("maglevd_" + an X-macro name +
 * "_total"); the X-macro names are checked to fit in
 * dataplane/packet/counters.c. */
#define MLV_METRICS_NAME_MAX 96
/* Longest HELP text built at run time. */
#define MLV_METRICS_HELP_MAX 256

struct mlv_metrics_page {
	FILE *f;
	const struct mlv_metrics_sources *src;
	const struct mlv_ctl_state *st;
	const struct mlv_generation *gen;   /* NULL before the first publish */
	/* Slots owned per backend of gen, [gen->n_all_backends]; from the
	 * renderer's cache. NULL if gen is NULL. */
	const uint32_t *slots;
	/* false: leave out every family with a backend label
	 * (control.metrics_backend_series) */
	bool backend_series;
};

/* The per-VIP and per-backend families (render_lb.c). Returns
 * MLV_OK or MLV_E_NOMEM. */
enum mlv_err mlv_metrics_page_lb(struct mlv_metrics_page *p);

#endif
