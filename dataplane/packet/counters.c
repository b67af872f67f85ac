/* SPDX-License-Identifier: BSD-3-Clause */
/* Counter names and help texts, generated from the X-macros in counters.h;
 * and the per-pass cycles line of measurement builds (pass_cycles.h).
 *
 * The preprocessor cannot lower-case a token, so each name is spelled out
 * character by character from the stringified upper-case token at compile
 * time: the tables are constant data, there is no start-up code and no
 * hand-written list to drift from the enums.
 */
#include "dataplane/packet/counters.h"

#include <stdio.h>

#define CTR_NAME_MAX 32

/* The padding keeps every index below CTR_NAME_MAX inside the literal. */
#define CTR_PAD "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
#define CTR_LC(c) ((char)((c) >= 'A' && (c) <= 'Z' ? (c) - 'A' + 'a' : (c)))
#define CTR_CH(s, i) CTR_LC((s CTR_PAD)[i])
#define CTR_LOWER(s) {                                                       \
	CTR_CH(s, 0), CTR_CH(s, 1), CTR_CH(s, 2), CTR_CH(s, 3),              \
	CTR_CH(s, 4), CTR_CH(s, 5), CTR_CH(s, 6), CTR_CH(s, 7),              \
	CTR_CH(s, 8), CTR_CH(s, 9), CTR_CH(s, 10), CTR_CH(s, 11),            \
	CTR_CH(s, 12), CTR_CH(s, 13), CTR_CH(s, 14), CTR_CH(s, 15),          \
	CTR_CH(s, 16), CTR_CH(s, 17), CTR_CH(s, 18), CTR_CH(s, 19),          \
	CTR_CH(s, 20), CTR_CH(s, 21), CTR_CH(s, 22), CTR_CH(s, 23),          \
	CTR_CH(s, 24), CTR_CH(s, 25), CTR_CH(s, 26), CTR_CH(s, 27),          \
	CTR_CH(s, 28), CTR_CH(s, 29), CTR_CH(s, 30), CTR_CH(s, 31) }

struct ctr_name {
	char s[CTR_NAME_MAX];
};

/* A name that would not fit (with its NUL) fails the build. */
#define CTR_FITS(name, help) \
	_Static_assert(sizeof(#name) <= CTR_NAME_MAX, #name " too long");
MLV_WORKER_COUNTERS(CTR_FITS)
MLV_DROP_REASONS(CTR_FITS)
MLV_FLOW_COUNTERS(CTR_FITS)
#undef CTR_FITS

#define CTR_NAME(name, help) { CTR_LOWER(#name) },
#define CTR_HELP(name, help) help,

static const struct ctr_name worker_names[MLV_CTR__COUNT] = {
	MLV_WORKER_COUNTERS(CTR_NAME)
};
static const char *const worker_help[MLV_CTR__COUNT] = {
	MLV_WORKER_COUNTERS(CTR_HELP)
};
static const struct ctr_name drop_names[MLV_DROP__COUNT] = {
	MLV_DROP_REASONS(CTR_NAME)
};
static const char *const drop_help[MLV_DROP__COUNT] = {
	MLV_DROP_REASONS(CTR_HELP)
};
static const struct ctr_name flow_names[MLV_FLOW__COUNT] = {
	MLV_FLOW_COUNTERS(CTR_NAME)
};
static const char *const flow_help[MLV_FLOW__COUNT] = {
	MLV_FLOW_COUNTERS(CTR_HELP)
};

#undef CTR_NAME
#undef CTR_HELP

/* Out-of-range values (a corrupt or future enum) get a fixed string rather
 * than a crash, so callers can print whatever they hold. */
#define CTR_UNKNOWN "unknown"
#define CTR_NAME_OF(table, n, i) ((unsigned)(i) < (n) ? (table)[i].s : CTR_UNKNOWN)
#define CTR_HELP_OF(table, n, i) ((unsigned)(i) < (n) ? (table)[i] : CTR_UNKNOWN)

const char *mlv_worker_counter_name(enum mlv_worker_counter c)
{
	return CTR_NAME_OF(worker_names, MLV_CTR__COUNT, c);
}

const char *mlv_drop_reason_name(enum mlv_drop_reason r)
{
	return CTR_NAME_OF(drop_names, MLV_DROP__COUNT, r);
}

enum mlv_drop_reason mlv_vip_drop_reason(enum mlv_vip_drop d)
{
	static const enum mlv_drop_reason reason[MLV_VDROP__COUNT] = {
#define VDROP_REASON(name) [MLV_VDROP_##name] = MLV_DROP_##name,
		MLV_VIP_DROP_REASONS(VDROP_REASON)
#undef VDROP_REASON
	};

	return d < MLV_VDROP__COUNT ? reason[d] : MLV_DROP__COUNT;
}

const char *mlv_flow_counter_name(enum mlv_flow_counter c)
{
	return CTR_NAME_OF(flow_names, MLV_FLOW__COUNT, c);
}

const char *mlv_worker_counter_help(enum mlv_worker_counter c)
{
	return CTR_HELP_OF(worker_help, MLV_CTR__COUNT, c);
}

const char *mlv_drop_reason_help(enum mlv_drop_reason r)
{
	return CTR_HELP_OF(drop_help, MLV_DROP__COUNT, r);
}

const char *mlv_flow_counter_help(enum mlv_flow_counter c)
{
	return CTR_HELP_OF(flow_help, MLV_FLOW__COUNT, c);
}

/* Where the next piece of a line of len bytes goes once n characters
 * were wanted (in bounds when they did not fit), and the room there. */
static char *line_at(char *buf, size_t len, int n)
{
	return buf + ((size_t)n < len ? (size_t)n : len - 1);
}

static size_t line_room(size_t len, int n)
{
	return (size_t)n < len ? len - (size_t)n : 0;
}

int mlv_pass_cycles_format(const struct mlv_pass_cycles *pc, char *buf,
			   size_t len)
{
	static const char *const label[MLV_PASS__COUNT] = {
#define MLV_PASS_LABEL(name, label) label,
		MLV_PASSES(MLV_PASS_LABEL)
#undef MLV_PASS_LABEL
	};
	double per[MLV_PASS__COUNT], own = 0;
	int n = 0;

	if (len == 0)
		return 0;
	buf[0] = '\0';
	if (pc->packets == 0)
		return 0;
	for (int p = 0; p < MLV_PASS__COUNT; p++) {
		per[p] = (double)pc->cycles[p] / (double)pc->packets;
		if (p != MLV_PASS_FLUSH)
			own += per[p];
		n += snprintf(line_at(buf, len, n), line_room(len, n),
			      "%s %.1f ", label[p], per[p]);
	}
	return n + snprintf(line_at(buf, len, n), line_room(len, n),
			    "own %.1f own/flush %.2f", own,
			    per[MLV_PASS_FLUSH] > 0 ? own / per[MLV_PASS_FLUSH] : 0.0);
}

