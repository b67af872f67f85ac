/* SPDX-License-Identifier: BSD-3-Clause */
/* mlv_xdp_steer_vdev_iface (control/steering/steering.c): recognising a
 * net_af_xdp device among EAL arguments. Pure string work: no root. */
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "control/steering/steering.h"

static void af_xdp_vdevs_are_recognised(void **state)
{
	char ifname[IF_NAMESIZE];
	int prog = -1;

	(void)state;
	assert_int_equal(mlv_xdp_steer_vdev_iface(
		"--vdev=net_af_xdp0,iface=lb0", ifname, sizeof(ifname), &prog),
		MLV_OK);
	assert_string_equal(ifname, "lb0");
	assert_int_equal(prog, 0);
	assert_int_equal(mlv_xdp_steer_vdev_iface(
		"net_af_xdp1,start_queue=0,iface=eth1,queue_count=2,"
		"xdp_prog=/run/x.o", ifname, sizeof(ifname), &prog), MLV_OK);
	assert_string_equal(ifname, "eth1");
	assert_int_equal(prog, 1);
}

static void other_arguments_are_not(void **state)
{
	char ifname[IF_NAMESIZE];
	int prog;

	(void)state;
	assert_int_equal(mlv_xdp_steer_vdev_iface("--vdev=net_pcap0,iface=lo",
		ifname, sizeof(ifname), &prog), MLV_E_NOT_FOUND);
	assert_int_equal(mlv_xdp_steer_vdev_iface("--in-memory", ifname,
		sizeof(ifname), &prog), MLV_E_NOT_FOUND);
	assert_int_equal(mlv_xdp_steer_vdev_iface("", ifname,
		sizeof(ifname), &prog), MLV_E_NOT_FOUND);
}

static void af_xdp_without_a_usable_iface_is_invalid(void **state)
{
	char ifname[IF_NAMESIZE], tiny[4];
	int prog;

	(void)state;
	assert_int_equal(mlv_xdp_steer_vdev_iface("--vdev=net_af_xdp0",
		ifname, sizeof(ifname), &prog), MLV_E_INVAL);
	assert_int_equal(mlv_xdp_steer_vdev_iface("net_af_xdp0,iface=",
		ifname, sizeof(ifname), &prog), MLV_E_INVAL);
	assert_int_equal(mlv_xdp_steer_vdev_iface(
		"net_af_xdp0,iface=abcdefghijklmnopq", ifname, sizeof(ifname),
		&prog), MLV_E_INVAL);
	assert_int_equal(mlv_xdp_steer_vdev_iface("net_af_xdp0,iface=eth0",
		tiny, sizeof(tiny), &prog), MLV_E_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(af_xdp_vdevs_are_recognised),
		cmocka_unit_test(other_arguments_are_not),
		cmocka_unit_test(af_xdp_without_a_usable_iface_is_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
