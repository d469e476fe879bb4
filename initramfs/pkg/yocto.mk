# SPDX-License-Identifier: MIT
# The Yocto layer (initramfs/pkg/yocto/meta-drvbind), parsed by the real
# bitbake against openembedded-core, neither of which Debian packages:
#
#   make yocto-parse    the layer's recipe alone, then every recipe of
#                       oe-core with the layer, then bitbake -e drvbind
#                       into $(YOCTO_BUILD)/drvbind.env
#   make yocto-setup    the trees, the locale and the build directory,
#                       with $(YOCTO_BUILD)/bitbake to run bitbake in it
#
# BITBAKE_SRC and OECORE_SRC name the trees, each a directory or a
# tarball (unpacked once into $(YOCTO_OUT)/src, again when it changes).
# YOCTO_LAYER and YOCTO_BUILD name the layer and the build directory.
# Nothing is built (there is no cross toolchain here) and nothing is
# fetched: BB_NO_NETWORK is set.

# What oe-core's HOSTTOOLS require beyond make deps' own (bitbake refuses
# to start without every one), and the source of the en_US.UTF-8 locale
# bitbake insists on.
DEPS += chrpath diffstat gawk g++ rpcsvc-proto wget patch file bzip2 git xz-utils \
        cpio zstd python3 locales

YOCTO_OUT   = build/pkg/yocto
YOCTO_BUILD = $(YOCTO_OUT)/build
YOCTO_LAYER = $(CURDIR)/initramfs/pkg/yocto/meta-drvbind
BITBAKE_SRC ?= $(firstword $(wildcard ../shared/vendor/bitbake.tar.gz /work/shared/vendor/bitbake.tar.gz))
OECORE_SRC  ?= $(firstword $(wildcard ../shared/vendor/openembedded-core.tar.gz \
                                     /work/shared/vendor/openembedded-core.tar.gz))

# yocto_tree NAME SRC VAR: the directory SRC names; a tarball is unpacked
# into $(YOCTO_OUT)/src/NAME, keyed on its checksum.
yocto_tree = src='$(2)'; \
	if [ -z "$$src" ] || [ ! -e "$$src" ]; then \
		echo "yocto: no $(1) tree '$$src': set $(3)=DIR or $(3)=TARBALL" >&2; exit 1; fi; \
	if [ -d "$$src" ]; then echo "$$(cd "$$src" && pwd)"; exit 0; fi; \
	dir=$(CURDIR)/$(YOCTO_OUT)/src/$(1); sum=$$(sha256sum <"$$src"); \
	if [ ! -d "$$dir" ] || [ "$$(cat "$$dir.sum" 2>/dev/null)" != "$$sum" ]; then \
		rm -rf "$$dir" "$$dir.tmp" "$$dir.sum" && mkdir -p "$$dir.tmp" && \
		tar -xf "$$src" -C "$$dir.tmp" && mv "$$dir.tmp"/* "$$dir" && \
		rmdir "$$dir.tmp" && echo "$$sum" >"$$dir.sum" || exit 1; fi; \
	echo "$$dir"

yocto-setup:
	@bb=$$($(call yocto_tree,bitbake,$(BITBAKE_SRC),BITBAKE_SRC)) && \
	oe=$$($(call yocto_tree,openembedded-core,$(OECORE_SRC),OECORE_SRC)) || exit 1; \
	loc=$(CURDIR)/$(YOCTO_OUT)/locale; \
	[ -d "$$loc/en_US.UTF-8" ] || { mkdir -p "$$loc" && \
		localedef -i en_US -f UTF-8 "$$loc/en_US.UTF-8"; } || exit 1; \
	mkdir -p $(YOCTO_BUILD)/conf && cd $(YOCTO_BUILD) && \
	printf '%s\n' '# Written by initramfs/pkg/yocto.mk.' 'BBPATH = "$${TOPDIR}"' \
		'BBFILES ?= ""' "BBLAYERS = \"$$oe/meta $(YOCTO_LAYER)\"" >conf/bblayers.conf && \
	{ printf '%s\n' '# Written by initramfs/pkg/yocto.mk. drvbind needs musl.' \
		'MACHINE ?= "qemux86-64"' 'TCLIBC ?= "musl"' 'BB_NO_NETWORK = "1"'; \
	  [ "$$(id -u)" != 0 ] || printf '%s\n' \
		'# The sanity checks refuse root; CI runs as root.' 'INHERIT:remove = "sanity"'; \
	} >conf/local.conf && \
	printf '%s\n' '# Written by initramfs/pkg/yocto.mk: bitbake -R conf/layer-only.conf' \
		'# parses the layers'"'"' own recipes alone, against oe-core'"'"'s configuration.' \
		"BBMASK = \"^$$oe/meta/recipes-\"" 'BBFILE_PATTERN_IGNORE_EMPTY_core = "1"' \
		>conf/layer-only.conf && \
	printf '%s\n' '#!/bin/sh' '# Written by initramfs/pkg/yocto.mk: bitbake in this build directory.' \
		'# bitbake wants an en_US.UTF-8 locale: a private one, through LOCPATH.' \
		"cd '$$(pwd)' || exit 1" \
		"PATH='$$bb/bin':\$$PATH LOCPATH='$$loc' BB_ENV_PASSTHROUGH_ADDITIONS='LOCPATH TCLIBC MACHINE'" \
		'export PATH LOCPATH BB_ENV_PASSTHROUGH_ADDITIONS' 'exec bitbake "$$@"' >bitbake && \
	chmod +x bitbake

# The layer's recipe alone first: a broken recipe fails in seconds, and
# the run writes bitbake's code parser cache (cache/bb_codeparser.dat).
# Without it, the first parse of oe-core hashes the configuration unlike
# every later run (what the parser found in oe's library functions reads
# back from that cache differently; seen with the vendor bitbake 2.19),
# so the recipe cache it writes is never used and bitbake -e would parse
# all of oe-core again.
yocto-parse: yocto-setup
	cd $(YOCTO_BUILD) && ./bitbake -p -R conf/layer-only.conf
	cd $(YOCTO_BUILD) && ./bitbake -p
	cd $(YOCTO_BUILD) && ./bitbake -e drvbind >drvbind.env

.PHONY: yocto-setup yocto-parse
