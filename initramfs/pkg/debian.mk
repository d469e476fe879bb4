# SPDX-License-Identifier: MIT
# make deb: build/pkg/drvbind_VERSION_ARCH.deb, built by dpkg-buildpackage
# from a copy of the working tree with initramfs/pkg/debian/ as its
# debian/, so that uncommitted changes are packaged too. The copy holds
# what the Makefile builds and installs from; the other recipes stay out.
# dpkg-buildpackage checks the Build-Depends and names any missing.

DEB_TREE = build/pkg/deb/drvbind-$(VERSION)

# debhelper and musl-tools build it (build-essential: dpkg-buildpackage
# checks for it), lintian checks it: test/debian.bats; autopkgtest runs
# its debian/tests: make autopkgtest.
DEPS += build-essential debhelper lintian autopkgtest

deb:
	rm -rf build/pkg/deb build/pkg/drvbind_*.deb
	mkdir -p $(DEB_TREE)
	cp -R Makefile LICENSE README applet initramfs $(DEB_TREE)/
	rm -rf $(DEB_TREE)/initramfs/pkg
	cp -R initramfs/pkg/debian $(DEB_TREE)/debian
	cd $(DEB_TREE) && dpkg-buildpackage -us -uc -b
	mv build/pkg/deb/drvbind_*.deb build/pkg/

# make autopkgtest: the package's own tests (debian/tests: boots under
# QEMU of an initramfs built with the installed hook), run by autopkgtest
# on the .deb make deb built, here (the null runner). As root: the runner
# installs the tests' Depends (a Debian kernel, QEMU) on this machine, and
# the .deb, which is purged again afterwards unless drvbind was installed
# before. It passes only when every test passed: autopkgtest exits 2 when
# one was skipped, and its summary must name each test of the control
# file PASS. Logs and the guests' reports: build/pkg/autopkgtest/.
DEB_FILE = build/pkg/drvbind_$(VERSION)_$(shell dpkg --print-architecture).deb
AUTOPKGTEST_OUT = build/pkg/autopkgtest

autopkgtest: deb
	@[ "$$(id -u)" = 0 ] || { echo "make autopkgtest: run it as root (the null runner installs what the tests need)" >&2; exit 1; }
	rm -rf $(AUTOPKGTEST_OUT) $(AUTOPKGTEST_OUT).summary
	@had=$$(dpkg-query -W -f '$${Status}' drvbind 2>/dev/null); st=0; \
	autopkgtest --output-dir=$(AUTOPKGTEST_OUT) --summary=$(AUTOPKGTEST_OUT).summary \
		$(DEB_FILE) $(DEB_TREE)/ -- null || st=$$?; \
	[ "$$had" = "install ok installed" ] || dpkg --purge drvbind >/dev/null || st=1; \
	cat $(AUTOPKGTEST_OUT).summary; \
	want=$$(sed -n 's/^Tests://p' $(DEB_TREE)/debian/tests/control | tr ',' ' ' | wc -w); \
	passed=$$(grep -c '^[^ ]*  *PASS' $(AUTOPKGTEST_OUT).summary); \
	[ "$$passed" = "$$want" ] || { echo "make autopkgtest: $$passed of $$want tests passed" >&2; st=1; }; \
	exit $$st

.PHONY: deb autopkgtest
