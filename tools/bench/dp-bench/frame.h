/* SPDX-License-Identifier: BSD-3-Clause */
/* One TCP segment of a dp-bench flow as an Ethernet frame, with correct
 * IPv4 and TCP checksums. Pure functions on caller buffers; any thread. */
#ifndef DPB_FRAME_H
#define DPB_FRAME_H

#include <stdint.h>

#include "tools/bench/dp-bench/flows.h"

/* Largest IP packet the generator writes (a jumbo frame's). */
#define DPB_MAX_IP_LEN 9000u
#define DPB_MAX_FRAME  (14u + DPB_MAX_IP_LEN)
/* Frames shorter than this are zero-padded, as on the wire (60 bytes +
 * the 4-byte FCS the capture does not hold = a 64-byte frame). */
#define DPB_MIN_FRAME  60u

/* Smallest IP packet of a TCP segment without options or payload. */
static inline uint32_t dpb_min_ip_len(uint8_t family)
{
	return family == 4 ? 20u + 20u : 40u + 20u;
}

/* Write the frame of one TCP segment of flow f: an IP packet of ip_len
 * bytes (0: the smallest, dpb_min_ip_len) with TCP flags tcp_flags and a
 * payload filling the rest. ip_len below the minimum is raised to it;
 * above DPB_MAX_IP_LEN it is lowered to that. Returns the frame length
 * (at least DPB_MIN_FRAME); out must hold DPB_MAX_FRAME bytes. */
uint32_t dpb_frame_build(uint8_t *out, const struct dpb_flow *f,
			 uint32_t ip_len, uint8_t tcp_flags);

#endif
