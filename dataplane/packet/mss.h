/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP MSS clamping: lowering the MSS option of a SYN (or SYN-ACK) so
 * that the segments the peer sends fit after encapsulation
 * (docs/forwarding.md, "MSS clamping"). Plain C, no DPDK types: used by
 * the workers, tests and tools. Pure functions on caller buffers; any
 * thread. */
#ifndef MLV_PACKET_MSS_H
#define MLV_PACKET_MSS_H

#include <stdbool.h>
#include <stdint.h>

/* The TCP option kinds and the MSS option's length (RFC 9293 3.2). */
#define MLV_TCPOPT_EOL     0
#define MLV_TCPOPT_NOP     1
#define MLV_TCPOPT_MSS     2
#define MLV_TCPOLEN_MSS    4

/* Most MSS options one header can hold: 40 option bytes / 4. */
#define MLV_MSS_MAX_OPTS   10

/* The TCP header at tcp, of which room bytes may be read and written
 * (the rest of the IP packet): every MSS option (kind 2, length 4) whose
 * value is above clamp gets clamp, and the checksum is updated
 * incrementally (RFC 1624), so it stays exactly as right or wrong as it
 * was. Options are walked within the header's data offset only; a
 * header or option list that is malformed (data offset below 20 or
 * beyond room, an option length below 2 or past the header) leaves the
 * packet untouched. An MSS option of another length is no MSS option
 * (receivers ignore it too). Returns the options lowered (0: the packet
 * is unchanged). */
unsigned mlv_mss_clamp(uint8_t *tcp, uint32_t room, uint16_t clamp);

/* Whether the TCP header at tcp has options (a data offset above 5
 * words): what mlv_mss_clamp could change. Inline, so that a SYN without
 * options (a SYN flood's, often) costs the worker one byte test instead
 * of a call. tcp[12] must be
 * readable: the parser checked the TCP header. Pure. */
static inline bool mlv_tcp_has_options(const uint8_t *tcp)
{
	return tcp[12] > 0x5f;
}

/* RFC 1624 eqn. 3: the checksum hc (as stored, host order of the
 * big-endian field) after a 16-bit word of the summed data changes from
 * old to new. A word at an odd offset from the start of the summed data
 * is passed byte-swapped. Pure. */
uint16_t mlv_csum_update16(uint16_t hc, uint16_t old, uint16_t now);

#endif
