/* SPDX-License-Identifier: BSD-3-Clause */
/* maglevctl's human-readable output: one renderer per command turns a
 * successful reply into text, and the help screens come from the shared
 * command table (control/protocol/spec.h). */
#ifndef MAGLEVCTL_RENDER_H
#define MAGLEVCTL_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "control/protocol/spec.h"

/* Print reply (an "ok": true reply to cmd) for people. Returns false if
 * memory ran out. */
bool render_reply(const struct mlv_ctl_cmd_spec *cmd, const json_t *reply,
		  FILE *out);

/* Print an "ok": false reply: the error and any per-line errors. */
void render_error(const json_t *reply, FILE *out);

/* Every command with its synopsis and help. */
void render_command_list(FILE *out);

/* One command: synopsis, help, and each argument. */
void render_command_help(const struct mlv_ctl_cmd_spec *cmd, FILE *out);

#endif
