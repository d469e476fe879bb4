# SPDX-License-Identifier: MIT
SUMMARY = "Binds devices to the drivers named by rules on the kernel command line, early in boot"
DESCRIPTION = "drvbind applies rules such as drvbind=1-1:1.0:usb-storage from the \
kernel command line or /etc/drvbind.conf early in boot: it waits for the device \
and the driver on uevents, keeps the native driver away with driver_override \
while the wanted one loads, checks the result, and rolls back on failure. One \
small static program, with hooks for dracut and initramfs-tools, a systemd \
unit for initrds, and one that keeps the rules in the running system."
SECTION = "base"
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://LICENSE;md5=23f7087bb84323318819631905d91b9d"

# The sources are the checkout the layer sits in (DRVBIND_TOPDIR, set by
# conf/layer.conf): the files the Makefile builds and installs, and no
# more, so that neither a host build in its build/ nor the other package
# recipes under initramfs/pkg/ reach this one (test/yocto.bats checks
# that the list still covers make install). A copy of the recipe kept
# outside the tree (meta-oe) would fetch a release instead:
# SRC_URI = "git://...;protocol=https;branch=main" and SRCREV.
FILESEXTRAPATHS:prepend := "${DRVBIND_TOPDIR}:"
SRC_URI = "file://Makefile;subdir=${BP} \
           file://LICENSE;subdir=${BP} \
           file://applet;subdir=${BP} \
           file://initramfs/modules.sh;subdir=${BP} \
           file://initramfs/drvbind.service;subdir=${BP} \
           file://initramfs/drvbind-follow.service;subdir=${BP} \
           file://initramfs/inittab;subdir=${BP} \
           file://initramfs/runit;subdir=${BP} \
           file://initramfs/initramfs-tools;subdir=${BP} \
           file://initramfs/dracut;subdir=${BP} \
           file://initramfs/mkinitcpio;subdir=${BP} \
           "

# drvbind is written for musl: a static link of its libc is what keeps it
# under 32 KiB, and it starts from musl's crt1.o alone. With any other C
# library (TCLIBC = "glibc", oe-core's default) the recipe is skipped at
# parse time, and bitbake says why when anything asks for it: "drvbind
# was skipped: incompatible with host x86_64-oe-linux (not in
# COMPATIBLE_HOST)". Build with TCLIBC = "musl" (local.conf or distro).
COMPATIBLE_HOST = ".*-musl.*"

# The Makefile puts its size flags first (TINY_CFLAGS: a section per
# function, no unwind tables, no PIE, LTO; TINY_LDFLAGS: static, stripped,
# its linker script) and CFLAGS and LDFLAGS after them, so the distro's
# machine tuning and hardening (in CC), prefix maps and linker flags
# apply. -Os comes last: with the distro's -O2 the binary is 40% larger.
# CRT1 is musl's start file in the target sysroot, not the build
# host's. ARCH picks the Makefile's extra size flags for arm64 (the tiny
# code model, 1.4 KiB less); the compiler it would pick for that ARCH is
# overridden by CC. The binary goes to ${base_sbindir}: init=/sbin/drvbind
# runs it before anything has mounted /usr.
DRVBIND_ARCH = ""
DRVBIND_ARCH:aarch64 = "arm64"
DRACUT_MODDIR = "${nonarch_libdir}/dracut/modules.d/90drvbind"
ITOOLS_DIR = "${datadir}/initramfs-tools"
EXTRA_OEMAKE = "ARCH='${DRVBIND_ARCH}' CC='${CC}' CFLAGS='${CFLAGS} -Os' LDFLAGS='${LDFLAGS}' \
                CRT1='${STAGING_LIBDIR}/crt1.o' PREFIX='${prefix}' SBINDIR='${base_sbindir}' \
                MANDIR='${mandir}' DATADIR='${datadir}/${BPN}' ITOOLSDIR='${ITOOLS_DIR}' \
                DRACUTDIR='${DRACUT_MODDIR}' CPIODIR='${nonarch_libdir}/initcpio' \
                UNITDIR='${systemd_system_unitdir}'"

# RELRO and BIND_NOW protect nothing in a static non-PIE binary: no
# dynamic loader applies them (musl's start code does not, the kernel
# ignores PT_GNU_RELRO) and there is nothing to bind. They only pad the
# file, by 4 KiB on arm64. The stack protector stays: it works in a
# static binary, for about 1 KiB.
SECURITY_LDFLAGS = ""

do_compile() {
	oe_runmake
}

# Neither oe-core nor meta-openembedded has mkinitcpio, and its runtime
# hook is a script for the ash of mkinitcpio's own images (#!/usr/bin/ash),
# which no package here provides: its files are left out.
do_install() {
	oe_runmake install DESTDIR='${D}'
	rm -r ${D}${nonarch_libdir}/initcpio
}

# The Makefile strips the binary and drops its section headers (the
# kernel needs neither): there is nothing left to split or strip, and
# the already-stripped check would refuse it.
INHIBIT_PACKAGE_STRIP = "1"
INHIBIT_PACKAGE_DEBUG_SPLIT = "1"

# The binary alone is ${PN}: all an initramfs image needs, and all that
# runs drvbind as PID 1 (rdinit=/sbin/drvbind). Each initramfs builder's
# hook is its own package, for images that run that builder on the
# target; modules.sh, which both hooks run to find the modules the rules'
# drivers need, comes with either. ${PN}-systemd-initrd is the unit that
# starts drvbind in an initrd with systemd as init, which dracut's module
# installs from here when the image has systemd. No hook pulls its
# builder in: the builders live in other layers (dracut in
# meta-initramfs) and the image that uses one installs it.
PACKAGES =+ "${PN}-dracut ${PN}-initramfs-tools ${PN}-systemd-initrd ${PN}-follow ${PN}-common"
FILES:${PN}-dracut = "${DRACUT_MODDIR}"
FILES:${PN}-initramfs-tools = "${ITOOLS_DIR}/hooks/drvbind ${ITOOLS_DIR}/scripts/init-top/drvbind"
FILES:${PN}-systemd-initrd = "${systemd_system_unitdir}/drvbind.service"
FILES:${PN}-follow = "${systemd_system_unitdir}/drvbind-follow.service \
    ${datadir}/${BPN}/inittab ${datadir}/${BPN}/runit"
FILES:${PN}-common = "${datadir}/${BPN}"
RDEPENDS:${PN}-dracut = "${PN} ${PN}-common \
    ${@bb.utils.contains('DISTRO_FEATURES', 'systemd', '${PN}-systemd-initrd', '', d)}"
RDEPENDS:${PN}-initramfs-tools = "${PN} ${PN}-common"
RDEPENDS:${PN}-systemd-initrd = "${PN}"
RDEPENDS:${PN}-follow = "${PN}"

# The follower (drvbind -f) in the running system. make install leaves
# its unit disabled for an administrator to enable; an image has no
# administrator, so installing ${PN}-follow is what enables it.
inherit systemd
SYSTEMD_PACKAGES = "${PN}-follow"
SYSTEMD_SERVICE:${PN}-follow = "drvbind-follow.service"
SYSTEMD_AUTO_ENABLE:${PN}-follow = "enable"
