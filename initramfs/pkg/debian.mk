# SPDX-License-Identifier: MIT
# make deb: build/pkg/drvbind_VERSION_ARCH.deb, built by dpkg-buildpackage
# from a copy of the working tree with initramfs/pkg/debian/ as its
# debian/, so that uncommitted changes are packaged too. The copy holds
# what the Makefile builds and installs from; the other recipes stay out.
# dpkg-buildpackage checks the Build-Depends and names any missing.

DEB_TREE = build/pkg/deb/drvbind-$(VERSION)

# debhelper and musl-tools build it (build-essential: dpkg-buildpackage
# checks for it), lintian checks it: test/debian.bats.
DEPS += build-essential debhelper lintian

deb:
	rm -rf build/pkg/deb build/pkg/drvbind_*.deb
	mkdir -p $(DEB_TREE)
	cp -R Makefile LICENSE README applet initramfs $(DEB_TREE)/
	rm -rf $(DEB_TREE)/initramfs/pkg
	cp -R initramfs/pkg/debian $(DEB_TREE)/debian
	cd $(DEB_TREE) && dpkg-buildpackage -us -uc -b
	mv build/pkg/deb/drvbind_*.deb build/pkg/

.PHONY: deb
