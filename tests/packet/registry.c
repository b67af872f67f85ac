/* SPDX-License-Identifier: BSD-3-Clause */
/* The scenarios by name: each one's definition (scenario_*.c) run on a
 * fresh scenario with the port every scenario shares. */
#include "tests/packet/scenario.h"

#include <stdio.h>
#include <string.h>

struct sc_entry {
	const char *name;
	void (*def)(struct scenario *sc);
};

static const struct sc_entry registry[] = {
	{"basic4",    sc_def_basic4},
	{"basic6",    sc_def_basic6},
	{"fragments", sc_def_fragments},
	{"icmp",      sc_def_icmp},
	{"malformed", sc_def_malformed},
	{"flows",     sc_def_flows},
	{"storm",     sc_def_storm},
	{"tables",    sc_def_tables},
	{"quic",      sc_def_quic},
	{"ports",     sc_def_ports},
	{"affinity",  sc_def_affinity},
	{"mss",       sc_def_mss},
	{"ratelimit", sc_def_ratelimit},
	{"acl",       sc_def_acl},
	{"second_chance", sc_def_second_chance},
	{"vlan",      sc_def_vlan},
	{"vlan_trunk", sc_def_vlan_trunk},
};

#define N_SCENARIOS (sizeof(registry) / sizeof(registry[0]))

const char *const *sc_names(void)
{
	static const char *list[N_SCENARIOS + 1];

	for (size_t i = 0; i < N_SCENARIOS; i++)
		list[i] = registry[i].name;
	return list;
}

bool sc_build(const char *name, struct scenario *sc)
{
	const struct sc_entry *e = NULL;

	for (size_t i = 0; i < N_SCENARIOS; i++)
		if (strcmp(registry[i].name, name) == 0)
			e = &registry[i];
	if (!e)
		return false;

	memset(sc, 0, sizeof(*sc));
	snprintf(sc->name, sizeof(sc->name), "%s", name);
	/* DPDK's net_pcap gives its first port 02:70:63:61:70:00 ("\2pcap\0",
	 * last byte = the pcap port's creation index) and has no devarg to
	 * set it; every scenario runs exactly one pcap port. */
	sc_mac("02:70:63:61:70:00", sc->port.mac);
	sc_mac("02:00:00:99:00:01", sc->port.next_hop);
	{
		uint8_t a[16];

		sc_addr("10.99.0.1", a);
		memcpy(sc->port.addr4, a, 4);
	}
	sc_addr("fd00:99::1", sc->port.addr6);
	sc->port.mtu = 1500;
	sc->ct_entries = 4096;
	sc->rng = 0x9e3779b97f4a7c15ull;
	for (const char *p = name; *p; p++)
		sc->rng = (sc->rng ^ (uint8_t)*p) * 0x100000001b3ull;
	sc->next_id = 1;
	sc->next_group = 1;
	e->def(sc);
	return true;
}
