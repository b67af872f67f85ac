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

/* mnl_attr_parse over nlh's attributes after a fixed header of offset
 * bytes, ending exactly at nlh's nlmsg_len. libmnl 1.0.4's mnl_attr_parse
 * ends its walk at the message's aligned tail (nlmsg_len rounded up to
 * 4), so in a message whose length is not a multiple of 4 an attribute
 * may end up to 3 bytes past the message, and past what was received when
 * the message ends the buffer. A message too short for its fixed header
 * has no attributes. Returns what mnl_attr_parse_payload returns:
 * MNL_CB_OK, MNL_CB_STOP or MNL_CB_ERROR (from cb). */
static inline int mlv_nl_attr_parse(const struct nlmsghdr *nlh,
				    size_t offset, mnl_attr_cb_t cb,
				    void *data)
{
	size_t skip = MNL_ALIGN(offset);
	size_t len = mnl_nlmsg_get_payload_len(nlh);

	if (len < skip)
		return MNL_CB_OK;
	return mnl_attr_parse_payload((const char *)mnl_nlmsg_get_payload(nlh) +
				      skip, len - skip, cb, data);
}

/* Every walk of a message's attributes in this module goes through
 * mlv_nl_attr_parse: the compiler refuses libmnl's own from here on. */
#pragma GCC poison mnl_attr_parse

/* Whether nlh's payload holds a fixed header of size bytes (a message
 * cut short carries none, and its fields would be read past its end). */
static inline bool mlv_nl_has_header(const struct nlmsghdr *nlh, size_t size)
{
	return mnl_nlmsg_get_payload_len(nlh) >= size;
}

#endif
