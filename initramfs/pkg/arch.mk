# SPDX-License-Identifier: MIT
# make arch: build/pkg/arch/drvbind-VERSION-1-ARCH.pkg.tar.zst and its
# .SRCINFO, built by makepkg from initramfs/pkg/arch/PKGBUILD. The
# working tree is packed into drvbind-VERSION.tar.gz (what the Makefile
# builds and installs from; the other recipes stay out), and a copy of
# the PKGBUILD pins that tarball's sha256, so that makepkg checks the
# source it builds as it would a release's. makepkg refuses to run as
# root: as root, initramfs/pkg/asuser.sh runs it as the user nobody in a
# copy of build/pkg/arch under /tmp (nobody cannot enter a checkout
# under /root or in mktemp -d) and copies the results back, owned by
# nobody. HOME: the copy, where makepkg looks for ~/.makepkg.conf. -d:
# the makedepends are Arch's packages, which pacman here has no database
# of. PKGEXT: Arch's, where Debian's makepkg.conf says .pkg.tar.gz.

ARCH_PKG = build/pkg/arch
ARCH_TARBALL = drvbind-$(VERSION).tar.gz

# makepkg and pacman (Debian's names); bsdtar, which makepkg and the
# mkinitcpio that test/initramfs/run.sh runs both use.
DEPS += makepkg pacman-package-manager libarchive-tools

arch:
	rm -rf $(ARCH_PKG)
	mkdir -p $(ARCH_PKG)
	tar -cf - --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
		--exclude=initramfs/pkg --transform 's,^,drvbind-$(VERSION)/,' \
		Makefile LICENSE README applet initramfs | gzip -n >$(ARCH_PKG)/$(ARCH_TARBALL)
	sum=$$(sha256sum <$(ARCH_PKG)/$(ARCH_TARBALL)); \
	sed "s/^sha256sums=.*/sha256sums=('$${sum%% *}')/" initramfs/pkg/arch/PKGBUILD >$(ARCH_PKG)/PKGBUILD
	sh initramfs/pkg/asuser.sh $(ARCH_PKG) sh -c 'export HOME="$$PWD"; \
		PKGEXT=.pkg.tar.zst makepkg -d --nocolor && makepkg --printsrcinfo >.SRCINFO'

.PHONY: arch
