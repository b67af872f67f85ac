/* SPDX-License-Identifier: BSD-3-Clause */
/* Every input frame's fate against its expectation: forwarded exactly as
 * often as it was fed, answered with exactly one ICMP reply per feed, or
 * never seen in the output. */
#include <inttypes.h>
#include <stdio.h>

#include "tests/packet/check.h"

void check_totals(struct check_ctx *c)
{
	for (uint32_t i = 0; i < c->sc->n_frames; i++) {
		const struct sc_expect *e = &c->sc->frames[i].exp;
		uint64_t fed = c->fed[i], fwd = c->forwarded[i],
			 icmp = c->icmp_replies[i];

		switch (e->outcome) {
		case SC_FORWARD:
			if (fwd != fed || icmp)
				check_fail(c, "input frame %u (%s): fed %" PRIu64
					   " times, forwarded %" PRIu64 " times, "
					   "%" PRIu64 " ICMP replies; want every "
					   "copy forwarded once", i, e->what, fed,
					   fwd, icmp);
			break;
		case SC_ICMP_TOO_BIG:
		case SC_ICMP_ECHO_REPLY:
			if (icmp != fed || fwd)
				check_fail(c, "input frame %u (%s): fed %" PRIu64
					   " times, %" PRIu64 " ICMP replies, "
					   "forwarded %" PRIu64 " times; want one "
					   "reply per copy", i, e->what, fed, icmp,
					   fwd);
			break;
		case SC_MAY_LIMIT:
			if ((fwd != fed && fwd != 0) || icmp)
				check_fail(c, "input frame %u (%s): fed %" PRIu64
					   " times, forwarded %" PRIu64 " times, "
					   "%" PRIu64 " ICMP replies; want it "
					   "forwarded once or limited", i, e->what,
					   fed, fwd, icmp);
			break;
		case SC_DROP:
			if (fwd || icmp)
				check_fail(c, "input frame %u (%s): must be dropped "
					   "as %s, but was forwarded %" PRIu64
					   " times / answered %" PRIu64 " times",
					   i, e->what,
					   mlv_drop_reason_name(e->drop), fwd, icmp);
			break;
		}
	}
}
