# SPDX-License-Identifier: MIT
# make rpm: build/pkg/rpm/drvbind-VERSION-RELEASE.ARCH.rpm and its source
# RPM, built by rpmbuild from initramfs/pkg/rpm/drvbind.spec. The working
# tree is packed into drvbind-VERSION.tar.gz (what the Makefile builds and
# installs from; the other recipes stay out) as the spec's Source0.
# Where rpm's database does not know rpm itself (Debian, whose rpm
# package has an empty one), the BuildRequires name packages it cannot
# see: --nodeps; and brp-compress, which gzips the man pages, is run by
# bash: it uses bash's read -d under #!/bin/sh, which is bash on Fedora
# and dash on Debian. Where no systemd-rpm-macros defined %_unitdir (Debian
# again), initramfs/pkg/rpm/macros.systemd stands in for them.

RPM_PKG = build/pkg/rpm
RPM_TARBALL = drvbind-$(VERSION).tar.gz

# rpmbuild; rpm2cpio, with which test/initramfs/run.sh unpacks the
# payload for the dracut boot of test/rpm.bats; rpmlint.
DEPS += rpm rpm2cpio rpmlint

rpm:
	rm -rf $(RPM_PKG)
	mkdir -p $(RPM_PKG)/SOURCES
	tar -cf - --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
		--exclude=initramfs/pkg --transform 's,^,drvbind-$(VERSION)/,' \
		Makefile LICENSE README applet initramfs | gzip -n >$(RPM_PKG)/SOURCES/$(RPM_TARBALL)
	set -- -ba; rpm -q rpm >/dev/null 2>&1 || set -- "$$@" --nodeps \
		--define '__brp_compress bash %{_rpmconfigdir}/brp-compress %{_prefix}'; \
	[ -n "$$(rpm --eval '%{?_unitdir}')" ] || set -- "$$@" --load=initramfs/pkg/rpm/macros.systemd; \
	rpmbuild "$$@" --define '_topdir $(CURDIR)/$(RPM_PKG)' --define '_rpmdir $(CURDIR)/$(RPM_PKG)' \
		--define '_srcrpmdir $(CURDIR)/$(RPM_PKG)' \
		--define '_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm' \
		initramfs/pkg/rpm/drvbind.spec

.PHONY: rpm

# rpmlint on the package, the source package and the spec, with Fedora's
# settings (initramfs/pkg/rpm/rpmlint.toml) and drvbind's own filters.
rpm-lint:
	rpmlint -c initramfs/pkg/rpm/rpmlint.toml -r initramfs/pkg/rpm/drvbind.rpmlintrc \
		$(RPM_PKG)/drvbind-$(VERSION)-*.rpm initramfs/pkg/rpm/drvbind.spec

.PHONY: rpm-lint
