# SPDX-License-Identifier: MIT
# The Buildroot package: initramfs/pkg/buildroot/ is a br2-external tree
# (make BR2_EXTERNAL=.../initramfs/pkg/buildroot in Buildroot) whose
# package/drvbind builds this checkout. Held against Buildroot's own tools
# from BUILDROOT_SRC (a directory or a tarball; Buildroot is not packaged
# in Debian) by test/buildroot.bats:
#
#   make buildroot-check  utils/check-package -b on the tree's files
#   make buildroot-info   drvbind-show-info (show-info.json) and
#                         drvbind-legal-info (out/legal-info/)
#   make buildroot-build  make drvbind for aarch64: out/target/sbin/drvbind
#
# all under build/pkg/buildroot/. Buildroot reads drvbind from a copy of
# the working tree without build/ and .git, as from a fresh clone:
# legal-info archives all of a local package's source directory.

BUILDROOT_SRC ?= $(firstword $(wildcard ../shared/vendor/buildroot.tar.gz /work/shared/vendor/buildroot.tar.gz))
BUILDROOT_PKG = build/pkg/buildroot
# A tarball is unpacked here; a directory is used where it is.
BUILDROOT_TREE = $(abspath $(if $(wildcard $(BUILDROOT_SRC)/Makefile),$(BUILDROOT_SRC),$(BUILDROOT_PKG)/src))
BUILDROOT_OUT = $(CURDIR)/$(BUILDROOT_PKG)/out
BUILDROOT_EXT = $(CURDIR)/$(BUILDROOT_PKG)/drvbind/initramfs/pkg/buildroot
BUILDROOT_TC = $(CURDIR)/$(BUILDROOT_PKG)/toolchain

# Buildroot on its own, not as a sub-make of this Makefile (whose command
# line, ARCH= above all, would reach it through MAKEFLAGS). Then two
# settings that keep it offline on Debian 12, for these tests only: it
# wants tar >= 1.35 (1.34 here), for archives it can make again byte for
# byte, and would download and build one first (the system's tar only
# packs legal-info's source archive here); and with a musl toolchain it
# would download sys/queue.h (musl-compat-headers), which drvbind does
# not use.
BUILDROOT_MAKE = env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $(MAKE) -C $(BUILDROOT_TREE) \
	O=$(BUILDROOT_OUT) TAR=tar BR2_TAR_HOST_DEPENDENCY= \
	TOOLCHAIN_EXTERNAL_DEPENDENCIES=toolchain-external-custom

# check-package (python3-magic, python3-flake8); what Buildroot's
# dependency check asks of the host; the kernel headers for the aarch64
# test toolchain, beside the cross gcc and musl-dev:arm64 of the Makefile.
DEPS += python3-magic python3-flake8 rsync file wget unzip bc patch cpio \
	linux-libc-dev-arm64-cross

# Unpacked once per tarball; the output directory, made with one tree,
# goes when the tree changes.
buildroot-tree:
	@src='$(BUILDROOT_SRC)'; \
	if [ -z "$$src" ] || ! [ -e "$$src" ]; then \
		echo "make buildroot-tree: no Buildroot source: set BUILDROOT_SRC to its tree or tarball" >&2; exit 1; fi; \
	key=$$(if [ -d "$$src" ]; then echo "$(BUILDROOT_TREE)"; else sha256sum <"$$src" | cut -c1-16; fi); \
	[ "$$(cat $(BUILDROOT_PKG)/src.key 2>/dev/null)" = "$$key" ] && exit 0; \
	rm -rf $(BUILDROOT_PKG)/src $(BUILDROOT_OUT) && mkdir -p $(BUILDROOT_PKG) && \
	if ! [ -d "$$src" ]; then echo "make buildroot-tree: unpacking $$src"; mkdir $(BUILDROOT_PKG)/src && \
		tar -xzf "$$src" -C $(BUILDROOT_PKG)/src --strip-components=1; fi && \
	echo "$$key" >$(BUILDROOT_PKG)/src.key

# -vvv: it also names the files it has no checks for. A python3 earlier
# on PATH may lack Debian's python3-magic.
buildroot-check: buildroot-tree
	cd initramfs/pkg/buildroot && /usr/bin/python3 $(BUILDROOT_TREE)/utils/check-package -b -vvv \
		$$(find . -type f | LC_ALL=C sort)

# The Debian cross gcc made into an external musl toolchain: a sysroot of
# musl-dev:arm64 and the arm64 kernel headers, and a gcc that uses it.
# Buildroot refuses a gcc configured --with-sysroot=/ (a distribution's,
# which links the host's libraries); this one is always given its own
# sysroot, so it is shown with that. -B and -isystem put the sysroot
# ahead of /usr/aarch64-linux-gnu, which Debian's cross gcc searches
# before any sysroot and where its glibc goes.
$(BUILDROOT_TC)/bin/aarch64-linux-musl-gcc:
	rm -rf $(BUILDROOT_TC)
	mkdir -p $(BUILDROOT_TC)/bin $(BUILDROOT_TC)/sysroot/usr/include $(BUILDROOT_TC)/sysroot/usr/lib
	cp -R /usr/include/aarch64-linux-musl/. /usr/aarch64-linux-gnu/include/. $(BUILDROOT_TC)/sysroot/usr/include/
	cp /usr/lib/aarch64-linux-musl/*.o /usr/lib/aarch64-linux-musl/*.a $(BUILDROOT_TC)/sysroot/usr/lib/
	for t in addr2line ar as c++filt cpp elfedit gcc-ar gcc-nm gcc-ranlib gprof ld ld.bfd \
		nm objcopy objdump ranlib readelf size strings strip; do \
		ln -s /usr/bin/aarch64-linux-gnu-$$t $(BUILDROOT_TC)/bin/aarch64-linux-musl-$$t || exit 1; done
	printf '%s\n' '#!/bin/sh' 's=$${0%/bin/*}/sysroot' 'if [ "$$*" = -v ]; then' \
		'	aarch64-linux-gnu-gcc -v 2>&1 | sed "s| --with-sysroot=/ | --with-sysroot=$$s |" >&2' \
		'	exit' 'fi' \
		'exec aarch64-linux-gnu-gcc --sysroot="$$s" -B"$$s/usr/lib/" -isystem "$$s/usr/include" "$$@"' >$@.tmp
	chmod 755 $@.tmp && mv $@.tmp $@

# The copy of the working tree, and a configuration for aarch64 with the
# toolchain above (its gcc and headers versions, as Buildroot checks them),
# made again, with a new output directory as Buildroot wants, when it
# changes (Buildroot follows its Config.in files by itself).
# Static only: the sysroot has musl's libc.a, not its libc.so. No stack
# protector: the size budget is the Makefile's, and Buildroot's default
# -fstack-protector-strong adds about 1 KiB, an integrator's choice.
buildroot-config: buildroot-tree
	mkdir -p $(BUILDROOT_PKG)/drvbind
	rsync -a --delete --exclude=/build --exclude=/.git ./ $(BUILDROOT_PKG)/drvbind/
	h=/usr/aarch64-linux-gnu/include/linux/version.h; \
	hv=$$(sed -n 's/^#define LINUX_VERSION_MAJOR //p' $$h)_$$(sed -n 's/^#define LINUX_VERSION_PATCHLEVEL //p' $$h); \
	printf '%s\n' BR2_aarch64=y BR2_TOOLCHAIN_EXTERNAL=y BR2_TOOLCHAIN_EXTERNAL_CUSTOM=y \
		'BR2_TOOLCHAIN_EXTERNAL_PATH="$(BUILDROOT_TC)"' \
		'BR2_TOOLCHAIN_EXTERNAL_CUSTOM_PREFIX="aarch64-linux-musl"' \
		"BR2_TOOLCHAIN_EXTERNAL_GCC_$$(aarch64-linux-gnu-gcc -dumpversion | cut -d. -f1)=y" \
		"BR2_TOOLCHAIN_EXTERNAL_HEADERS_$$hv=y" BR2_TOOLCHAIN_EXTERNAL_CUSTOM_MUSL=y \
		BR2_STATIC_LIBS=y BR2_SSP_NONE=y 'BR2_DL_DIR="$(BUILDROOT_OUT)/dl"' BR2_DOWNLOAD_FORCE_CHECK_HASHES=y \
		BR2_PACKAGE_DRVBIND=y >$(BUILDROOT_PKG)/defconfig.new
	@d=$(BUILDROOT_PKG)/defconfig; if [ -f $(BUILDROOT_OUT)/.config ] && cmp -s $$d.new $$d; then rm $$d.new; \
	else rm -rf $(BUILDROOT_OUT) && mv $$d.new $$d && $(BUILDROOT_MAKE) -s BR2_EXTERNAL=$(BUILDROOT_EXT) BR2_DEFCONFIG=$(CURDIR)/$$d defconfig || \
		{ rm -f $$d; exit 1; }; fi
	@grep -qx BR2_PACKAGE_DRVBIND=y $(BUILDROOT_OUT)/.config || \
		{ echo "make buildroot-config: BR2_PACKAGE_DRVBIND did not stay set: see $(BUILDROOT_OUT)/.config" >&2; exit 1; }

# show-info's JSON is the one line of the output that starts with {.
buildroot-info: buildroot-config
	rm -rf $(BUILDROOT_OUT)/build/drvbind-$(VERSION) $(BUILDROOT_OUT)/legal-info $(BUILDROOT_PKG)/show-info.json
	$(BUILDROOT_MAKE) -s drvbind-show-info drvbind-legal-info >$(BUILDROOT_PKG)/info.log 2>&1 || \
		{ cat $(BUILDROOT_PKG)/info.log; exit 1; }
	sed -n '/^{/p' $(BUILDROOT_PKG)/info.log >$(BUILDROOT_PKG)/show-info.json
	@cat $(BUILDROOT_PKG)/show-info.json

buildroot-build: buildroot-config $(BUILDROOT_TC)/bin/aarch64-linux-musl-gcc
	rm -rf $(BUILDROOT_OUT)/build/drvbind-$(VERSION) $(BUILDROOT_OUT)/target/sbin/drvbind
	$(BUILDROOT_MAKE) drvbind >$(BUILDROOT_PKG)/build.log 2>&1 || \
		{ tail -n 40 $(BUILDROOT_PKG)/build.log; exit 1; }
	@echo "$(BUILDROOT_PKG)/out/target/sbin/drvbind: $$(wc -c <$(BUILDROOT_OUT)/target/sbin/drvbind) bytes (budget $(SIZE_MAX))"

.PHONY: buildroot-tree buildroot-check buildroot-config buildroot-info buildroot-build
