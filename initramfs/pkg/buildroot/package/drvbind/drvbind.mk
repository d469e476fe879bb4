################################################################################
#
# drvbind
#
################################################################################

# SPDX-License-Identifier: MIT

DRVBIND_VERSION = 0.1
# This tree is initramfs/pkg/buildroot of a drvbind checkout: the source
# is that checkout, whatever its state, as with any local package.
DRVBIND_SITE = $(realpath $(BR2_EXTERNAL_DRVBIND_PATH)/../../..)
DRVBIND_SITE_METHOD = local
# What a build in the checkout left there. legal-info does not read this:
# its source archive holds all of the checkout, so run it from a clean one.
DRVBIND_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS = --exclude=/build
DRVBIND_LICENSE = MIT
DRVBIND_LICENSE_FILES = LICENSE

# The Makefile keeps its size flags (TINY_CFLAGS, TINY_LDFLAGS) apart
# from CFLAGS, but its -Os is in the CFLAGS these replace: it goes after
# Buildroot's level, which would otherwise win (-O2 takes the binary
# past its 32 KiB budget). Musl's crt1.o is its only start file. O=
# puts the binary in one place whatever ARCH is.
DRVBIND_MAKE_OPTS = \
	CC="$(TARGET_CC)" \
	CFLAGS="$(TARGET_CFLAGS) -Os" \
	LDFLAGS="$(TARGET_LDFLAGS)" \
	NM="$(TARGET_NM)" \
	CRT1=$(STAGING_DIR)/usr/lib/crt1.o \
	O=build

# The Makefile's name for the CPUs it has flags of its own for.
ifeq ($(BR2_aarch64)$(BR2_aarch64_be),y)
DRVBIND_MAKE_OPTS += ARCH=arm64
endif

define DRVBIND_BUILD_CMDS
	$(TARGET_MAKE_ENV) $(MAKE) -C $(@D) $(DRVBIND_MAKE_OPTS) all
endef

# Where the kernel's rdinit= and init= and the README name it.
define DRVBIND_INSTALL_TARGET_CMDS
	$(INSTALL) -D -m 0755 $(@D)/build/drvbind $(TARGET_DIR)/sbin/drvbind
endef

$(eval $(generic-package))
