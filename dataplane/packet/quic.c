/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/packet/quic.h"

#include "dataplane/packet/parse.h"

enum mlv_quic_verdict mlv_quic_server_id(const uint8_t *payload,
					 uint32_t len, uint32_t *server_id)
{
	const uint8_t *cid = payload + 1;
	uint32_t id;

	if (len == 0 || (payload[0] & MLV_QUIC_LONG_HEADER) ||
	    !(payload[0] & MLV_QUIC_FIXED_BIT))
		return MLV_QUIC_NOT_SHORT;
	if (len < 1 + MLV_QUIC_CID_MIN)
		return MLV_QUIC_NO_ID;
	switch (cid[0] >> 6) {
	case MLV_QUIC_CID_V1:
		/* bits 2..17 of the connection ID */
		id = (uint32_t)(cid[0] & 0x3F) << 10 | (uint32_t)cid[1] << 2 |
		     (uint32_t)cid[2] >> 6;
		break;
	case MLV_QUIC_CID_V2:
		/* bytes 1..3, big-endian */
		id = (uint32_t)cid[1] << 16 | (uint32_t)cid[2] << 8 | cid[3];
		break;
	default:
		return MLV_QUIC_NO_ID;
	}
	if (id == 0)
		return MLV_QUIC_NO_ID;
	*server_id = id;
	return MLV_QUIC_ID;
}

const uint8_t *mlv_quic_udp_payload(const uint8_t *frame,
				    const struct mlv_pkt *p, uint32_t *len)
{
	const uint8_t *udp = frame + p->l4_off;

	if (p->l4_proto != 17 ||
	    (p->flags & (MLV_PKT_F_FRAGMENT | MLV_PKT_F_ICMP_ERROR |
			 MLV_PKT_F_ICMP_ECHO)))
		return NULL;
	/* the parser checked 8 <= the UDP length <= the IP payload */
	*len = ((uint32_t)udp[4] << 8 | udp[5]) - 8;
	return udp + 8;
}

int mlv_quic_cid_encode(uint8_t *cid, unsigned version, uint32_t server_id)
{
	switch (version) {
	case MLV_QUIC_CID_V1:
		if (server_id == 0 || server_id > MLV_QUIC_SERVER_ID_MAX_V1)
			return -1;
		cid[0] = (uint8_t)(MLV_QUIC_CID_V1 << 6 | server_id >> 10);
		cid[1] = (uint8_t)(server_id >> 2);
		cid[2] = (uint8_t)((server_id & 3) << 6 | (cid[2] & 0x3F));
		return 0;
	case MLV_QUIC_CID_V2:
		if (server_id == 0 || server_id > MLV_QUIC_SERVER_ID_MAX)
			return -1;
		cid[0] = (uint8_t)(MLV_QUIC_CID_V2 << 6 | (cid[0] & 0x3F));
		cid[1] = (uint8_t)(server_id >> 16);
		cid[2] = (uint8_t)(server_id >> 8);
		cid[3] = (uint8_t)server_id;
		return 0;
	default:
		return -1;
	}
}
