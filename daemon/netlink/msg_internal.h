/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading netlink messages safely with libmnl 1.0.4 (Debian 12). Shared
 * by the netlink module's files. */
#ifndef MLV_NETLINK_MSG_INTERNAL_H
#define MLV_NETLINK_MSG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

/* mnl_cb_run over the messages of buf that lie whole inside it. libmnl
 * 1.0.4's mnl_nlmsg_ok compares a message's length as a signed int, so
 * a header claiming 2 GiB or more passes as fitting and the walk leaves
 * the buffer; here the walk ends before such a header, where mnl_cb_run
 * ends before any other message that does not fit. */
static inline int mlv_nl_cb_run(const void *buf, size_t len, uint32_t seq,
				uint32_t portid, mnl_cb_t cb, void *data)
{
	const uint8_t *p = buf;
	size_t whole = 0;

	while (len - whole >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *h = (const void *)(p + whole);
		size_t step = ((size_t)h->nlmsg_len + MNL_ALIGNTO - 1) &
			      ~(size_t)(MNL_ALIGNTO - 1);

		if (h->nlmsg_len < sizeof(*h) || h->nlmsg_len > len - whole)
			break;
		whole = step < len - whole ? whole + step : len;
	}
	return mnl_cb_run(buf, whole, seq, portid, cb, data);
}

/* Whether nlh's payload holds a fixed header of size bytes (a message
 * cut short carries none, and its fields would be read past its end). */
static inline bool mlv_nl_has_header(const struct nlmsghdr *nlh, size_t size)
{
	return mnl_nlmsg_get_payload_len(nlh) >= size;
}

#endif
