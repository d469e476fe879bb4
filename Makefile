# SPDX-License-Identifier: MIT
# drvbind: the program, its tests and its packages. This Makefile needs
# GNU make (conditionals, functions, include); drvbind itself needs musl
# alone. Every variable can be overridden: make CC=... PREFIX=/usr
#
#   make                 build/drvbind, and build/drvbind.syms, its link with symbols
#   make ARCH=arm64      a cross build into build/arm64/ (ARCH=armhf: build/armhf/)
#   make initramfs       build/drvbind.cpio, the image to put in front of any initramfs
#   make size            the bytes of every build against the budget, the largest symbols
#   make install         PREFIX and DESTDIR honoured; uninstall removes exactly that
#   make test            the fake-kernel suite, in parallel: the loop after every change
#   make check           every test, QEMU boots and packages too (test/README)
#   make deps            the Debian packages the tests use, installed as root
#   make deb, arch, rpm  the packages (initramfs/pkg/*.mk)
#   make autopkgtest     the .deb's debian/tests, booted under QEMU (as root)

VERSION   = 0.1

# ARCH builds for another CPU, into build/ARCH/, with Debian's cross gcc
# and musl for it (make deps installs both, adding the dpkg architecture).
# Empty: the host's musl-gcc, into build/. TRIPLET names the cross
# toolchain; its tools' prefix (CROSS_COMPILE) and musl's directory
# (aarch64-linux-gnu: /usr/lib/aarch64-linux-musl) follow from it, as the
# host's musl directory follows from HOSTCC's own triplet.
ARCH      =
CROSS     = arm64 armhf
TRIPLET_arm64 = aarch64-linux-gnu
TRIPLET_armhf = arm-linux-gnueabihf
TRIPLET   = $(TRIPLET_$(ARCH))
CROSS_COMPILE = $(TRIPLET:%=%-)
HOSTCC    = cc
MUSLDIR   = /usr/lib/$(subst -gnu,-musl,$(or $(TRIPLET),$(shell $(HOSTCC) -dumpmachine)))
MUSLCC    = musl-gcc
CC        = $(if $(TRIPLET),$(CROSS_COMPILE)gcc -specs $(MUSLDIR)/musl-gcc.specs,$(MUSLCC))
NM        = $(CROSS_COMPILE)nm
# musl's own start file: see TINY_LDFLAGS.
CRT1      = $(MUSLDIR)/crt1.o
O         = build$(ARCH:%=/%)
CFLAGS    = -Os -Wall -Wextra
LDFLAGS   =
SIZE_MAX  = 32768

PREFIX    = /usr/local
SBINDIR   = $(PREFIX)/sbin
MANDIR    = $(PREFIX)/share/man
DATADIR   = $(PREFIX)/share/drvbind
DESTDIR   =
# Where each initramfs builder and systemd read their files: fixed paths,
# whatever PREFIX.
ITOOLSDIR = /usr/share/initramfs-tools
DRACUTDIR = /usr/lib/dracut/modules.d/90drvbind
CPIODIR   = /usr/lib/initcpio
UNITDIR   = /usr/lib/systemd/system

# What keeps the static binary under its budget:
# - a section per function and per object, for --gc-sections to drop;
#   no unwind tables (nothing unwinds); LTO over the whole program; and
#   a few optimisations that trade size for speed turned off;
# - no PIE and no RELRO: nothing applies them in a static binary without
#   a loader (musl's start code does not, the kernel ignores
#   PT_GNU_RELRO), and they pad the file;
# - no page padding between code and data (common-page-size=64), and
#   every build linked for 4 KiB pages (max-page-size; arm64's default
#   of 64 KiB would pad the file to 64 KiB);
# - applet/tiny.ld, which the linker inserts into its default script: no
#   .eh_frame from libc, and libc's functions packed at 4 bytes;
# - the program starts from musl's crt1.o alone (-nostartfiles, CRT1):
#   gcc's crtbegin/crtend only register C++ constructors and unwind
#   tables, and would bring both along;
# - no build-id note.
TINY_CFLAGS  = -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables \
               -fno-expensive-optimizations -fno-if-conversion -fno-move-loop-invariants \
               -fno-ipa-cp -fno-ipa-modref -fno-pie -fno-jump-tables -flto $(TINY_CFLAGS_$(ARCH))
# arm64: the tiny code model (all of the program within 1 MiB) makes an
# address one instruction instead of two (832 bytes); no frame pointer,
# which gcc keeps there by default (256); conditional selects, which cost
# bytes on x86-64 and save them here; and neither guessed branch
# probabilities (which lay out the likely path at the cost of jumps) nor
# shrink-wrapping (prologues moved into branches), 64 bytes together.
TINY_CFLAGS_arm64 = -mcmodel=tiny -fomit-frame-pointer -fif-conversion \
                    -fno-guess-branch-probability -fno-shrink-wrap
TINY_LDFLAGS = -static -no-pie -nostartfiles -Wl,--gc-sections -Wl,--build-id=none \
               -Wl,-z,noseparate-code -Wl,-z,norelro -Wl,-z,common-page-size=64 \
               -Wl,-z,max-page-size=4096 -Wl,-T,applet/tiny.ld

# Bottom-up, as applet/drvbind.h lists them.
SRC  = applet/mem.c applet/parse.c applet/log.c applet/sysfs.c applet/trust.c applet/proc.c \
       applet/conf.c applet/device.c applet/move.c applet/rule.c applet/set.c applet/place.c applet/notify.c \
       applet/wait.c applet/list.c applet/pid1.c applet/main.c
HDR  = applet/drvbind.h applet/parse.h

all: $(O)/drvbind

# The packages' recipes (initramfs/pkg/): each .mk there adds its make
# targets (make deb, ...) and the Debian packages its tests need to DEPS.
include $(sort $(wildcard initramfs/pkg/*.mk))

# The one link, symbols kept: make size and the tests read them.
$(O)/drvbind.syms: $(SRC) $(HDR) applet/tiny.ld
	$(if $(ARCH),$(if $(TRIPLET),,$(error ARCH=$(ARCH): not one of: $(CROSS))))
	@mkdir -p $(O)
	$(CC) $(TINY_CFLAGS) $(CFLAGS) $(TINY_LDFLAGS) $(LDFLAGS) -o $@ $(CRT1) $(SRC)

# What ships: that link without its section headers, which the kernel
# does not read (it loads a program by its program headers).
# applet/elfcut.sh cuts the file at the end of its last loaded segment,
# which takes the symbol table with it: the bytes are those of a link
# with -s, with no strip(1) of the toolchain's to find.
$(O)/drvbind: $(O)/drvbind.syms applet/elfcut.sh
	cp $(O)/drvbind.syms $@.tmp
	sh applet/elfcut.sh $@.tmp
	mv $@.tmp $@

initramfs: $(O)/drvbind.cpio

# An uncompressed archive of /sbin/drvbind and its mount points, padded
# for concatenation: initramfs/prepend.sh.
$(O)/drvbind.cpio: $(O)/drvbind initramfs/prepend.sh
	sh initramfs/prepend.sh $(O)/drvbind $@

# Every architecture built so far, then the largest symbols of this one.
size: $(O)/drvbind
	@for f in build/drvbind $(CROSS:%=build/%/drvbind); do [ -f "$$f" ] || continue; \
	echo "$$f: $$(wc -c < $$f) bytes (budget $(SIZE_MAX))"; done
	@echo "largest symbols ($(O)/drvbind):"
	@$(NM) -S --size-sort $(O)/drvbind.syms | awk '$$3 !~ /[bB]/' | tail -12 | \
	while read a s t n; do printf '  %6d %s\n' $$((0x$$s)) $$n; done

# The compiler and nm for ARCH, for the tests.
print-cc:
	@echo $(CC)

print-nm:
	@echo $(NM)


# The tests. test/README describes each tier and test/helper.bash the
# verbs every bats file uses.

BATS      = bats
CLANG     = clang
# bats files side by side (bats --jobs, with GNU parallel): make test,
# and the fake-kernel tiers of make check. The cases of one file keep
# their order (some share what setup_file made).
TEST_JOBS = $(shell nproc)
PBATS     = $(BATS) --jobs $(TEST_JOBS) --no-parallelize-within-files
# Seconds of fuzzing per parser: make fuzz, and the short run in make check.
FUZZ_TIME = 300
CHECK_FUZZ_TIME = 15
FUZZ_TARGETS = cmdline rule uevent
# The sanitizer builds: the same sources, with every report fatal.
ASAN_CFLAGS  = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
UBSAN_CFLAGS = -Os -g -fsanitize=undefined -fsanitize-undefined-trap-on-error

# The fake kernel and the tools the tests run, all for the host.
TEST_BIN = build/test/fakesys build/test/uevent build/test/benchrun build/test/sysfsmagic.so build/test/knock
# The fake-kernel suite: the files that run the binary on the fake
# kernel, not the QEMU tiers nor the initramfs builders. make test runs
# them, and make check-asan and check-ubsan again on sanitizer builds.
# The longest first, so that make test's parallel runs end together.
FAKE_TESTS = test/follow.bats test/lockdown.bats test/notify.bats test/wait.bats test/analysis.bats test/trust.bats \
             test/sets.bats test/rules.bats test/bind.bats test/register.bats test/hostile.bats \
             test/fake.bats test/faults.bats test/kernel7.bats test/build.bats
# The files whose cases check the binary itself, run again on each cross
# build (make check-cross).
CROSS_TESTS = test/build.bats test/rules.bats test/bind.bats test/wait.bats test/register.bats \
              test/sets.bats
# make check's other tiers: the fake kernel's own orderings and the
# interleaving explorer; real kernels under QEMU (the images the
# initramfs builders make among them); the packages and builders; and
# whatever file no list names, so that none is left out.
SLOW_TESTS  = test/order.bats test/explore.bats
BOOT_TESTS  = test/qemu.bats test/board.bats test/systemd.bats test/builders.bats
PKG_TESTS   = test/hooks.bats test/debian.bats test/arch.bats test/rpm.bats test/buildroot.bats \
              test/yocto.bats
OTHER_TESTS = $(filter-out $(FAKE_TESTS) $(SLOW_TESTS) $(BOOT_TESTS) $(PKG_TESTS),$(sort $(wildcard test/*.bats)))
# Each tier's time and outcome, printed at the end (test/tier.sh).
CHECK_TIMES = build/check.times
TIER = sh test/tier.sh $(CHECK_TIMES)

build/test/fakesys: test/fake/fakesys.c test/fake/uevent.h
	@mkdir -p build/test
	$(HOSTCC) -O2 -Wall -Wextra -o $@ test/fake/fakesys.c $$(pkg-config --cflags --libs fuse3)

build/test/uevent: test/fake/uevent.c test/fake/uevent.h
	@mkdir -p build/test
	$(HOSTCC) -O2 -Wall -Wextra -o $@ test/fake/uevent.c

# Static, so that its own pages barely count in the peak RSS it measures;
# the uapi headers come after musl's own.
build/test/benchrun: test/bench/benchrun.c test/fake/uevent.h
	@mkdir -p build/test
	$(MUSLCC) -static -O2 -Wall -Wextra -idirafter /usr/include \
		-idirafter /usr/include/$$($(HOSTCC) -dumpmachine) -o $@ test/bench/benchrun.c

# Static: the lockdown boot's guest knocks with it (test/qemu/run.sh).
build/test/knock: test/fake/knock.c
	@mkdir -p build/test
	$(MUSLCC) -static -Os -Wall -Wextra -o $@ test/fake/knock.c

build/test/sysfsmagic.so: test/bench/sysfsmagic.c
	@mkdir -p build/test
	$(HOSTCC) -O2 -Wall -Wextra -shared -fPIC -o $@ test/bench/sysfsmagic.c -ldl

# clang against glibc, dynamic, AddressSanitizer and UBSan.
build/asan/drvbind: $(SRC) $(HDR)
	@mkdir -p build/asan
	$(CLANG) $(ASAN_CFLAGS) -Wall -Wextra -Werror -o $@ $(SRC)

# The musl static build, where UBSan traps (no runtime to print with).
build/ubsan/drvbind: $(SRC) $(HDR)
	@mkdir -p build/ubsan
	$(MUSLCC) $(UBSAN_CFLAGS) -Wall -Wextra -Werror -static -o $@ $(SRC)

# One libFuzzer binary per parser of applet/parse.c (str_len: applet/mem.c).
build/fuzz/cmdline build/fuzz/rule build/fuzz/uevent: test/fuzz/parse_fuzz.c applet/parse.c applet/mem.c $(HDR)
	@mkdir -p build/fuzz
	$(CLANG) $(ASAN_CFLAGS) -fsanitize=fuzzer -Wall -Wextra -Werror \
		-DTARGET_$$(basename $@ | tr a-z A-Z) -o $@ test/fuzz/parse_fuzz.c applet/parse.c applet/mem.c

# Each test makes its own namespace, mount and directories, so the files
# run side by side. The follower's endurance run goes 100 cycles, as on
# the sanitizer builds; make check runs its 1000.
test:
	$(MAKE) ARCH= all $(TEST_BIN)
	FOLLOW_CYCLES=100 $(PBATS) $(FAKE_TESTS)

# Every tier runs, a failed one too (a build that fails stops it all);
# the last line fails the run if one did.
check: deps
	@rm -f $(CHECK_TIMES)
	$(TIER) build sh -c '$(MAKE) ARCH= all initramfs $(TEST_BIN) && \
		for a in $(CROSS); do $(MAKE) ARCH=$$a all initramfs || exit 1; done'
	-$(TIER) fake $(PBATS) $(FAKE_TESTS) $(SLOW_TESTS)
	-$(TIER) boots $(BATS) $(BOOT_TESTS)
	-$(TIER) packages $(BATS) $(PKG_TESTS)
	-$(TIER) autopkgtest $(MAKE) autopkgtest
	-$(TIER) other $(BATS) $(OTHER_TESTS)
	-$(TIER) asan $(MAKE) check-asan
	-$(TIER) ubsan $(MAKE) check-ubsan
	-$(TIER) fuzz $(MAKE) fuzz FUZZ_TIME=$(CHECK_FUZZ_TIME)
	-for a in $(CROSS); do $(TIER) cross-$$a $(MAKE) ARCH=$$a check-cross; done
	@$(TIER)

# The binary's own cases once more, for a cross build run by qemu-user
# (aarch64-linux-gnu: qemu-aarch64-static).
RUN = qemu-$(firstword $(subst -, ,$(TRIPLET)))-static
check-cross: all $(TEST_BIN)
	DRVBIND=$(O)/drvbind DRVBIND_RUN=$(RUN) DRVBIND_ARCH=$(ARCH) $(PBATS) $(CROSS_TESTS)

# ASan and UBSan also report from background children into
# build/asan/log; any report there fails the run. No leak check: there
# is no heap to leak, and LeakSanitizer cannot run under strace. The
# follower's endurance run goes 100 cycles there, not 1000.
check-asan: deps
	$(MAKE) ARCH= all build/asan/drvbind $(TEST_BIN)
	@rm -rf build/asan/log && mkdir -p build/asan/log
	st=0; ASAN_OPTIONS=detect_leaks=0:log_path=$$PWD/build/asan/log/asan \
		UBSAN_OPTIONS=print_stacktrace=1:log_path=$$PWD/build/asan/log/ubsan \
		DRVBIND=$$PWD/build/asan/drvbind FOLLOW_CYCLES=100 $(PBATS) $(FAKE_TESTS) || st=$$?; \
	if [ -n "$$(ls build/asan/log)" ]; then cat build/asan/log/*; echo "check-asan: sanitizer reports above" >&2; st=1; fi; \
	exit $$st

check-ubsan: deps
	$(MAKE) ARCH= all build/ubsan/drvbind $(TEST_BIN)
	DRVBIND=$$PWD/build/ubsan/drvbind FOLLOW_CYCLES=100 $(PBATS) $(FAKE_TESTS)

# Replays the committed corpus (test/fuzz/corpus/TARGET, every past
# finding among it), then fuzzes each parser for FUZZ_TIME seconds.
fuzz: deps
	$(MAKE) $(FUZZ_TARGETS:%=build/fuzz/%)
	sh test/fuzz/run.sh $(FUZZ_TIME) $(FUZZ_TARGETS)

# drvbind against driverctl, dpdk-devbind.py, usbip and a boot script,
# and drvbind -f through replugs beside driverctl's load-override
# (test/bench/follow.sh): test/bench/RESULTS.md and its charts (slow:
# minutes, one QEMU boot).
bench: deps
	$(MAKE) ARCH= all initramfs $(TEST_BIN)
	test/bench/bench.sh

demo: demo-deps
	sh test/qemu/demo.sh

demo-fake: deps
	$(MAKE) ARCH= all $(TEST_BIN)
	bash test/demo.sh

# The Debian packages the tests use; drvbind itself needs musl alone.
# initramfs-tools and dracut-core (not dracut, which conflicts with
# initramfs-tools) are the real builders the initramfs tests run; udev
# and systemd go into their images; zstd unpacks them; runit's runsv
# runs the follower's service in follow.bats; parallel runs make test's
# files side by side. Each cross build needs its gcc and its
# architecture's musl-dev, which needs `dpkg --add-architecture`, done
# here. "+=": the packages' recipes, included above, have added theirs.
DEPS += musl-tools gcc make bats parallel fuse3 libfuse3-dev pkg-config binutils \
       qemu-system-x86 busybox-static cpio kmod \
       initramfs-tools dracut-core udev systemd zstd e2fsprogs shellcheck \
       clang libclang-rt-14-dev valgrind cppcheck clang-tidy strace \
       gnuplot-nox driverctl dpdk usbip runit socat \
       $(foreach a,$(CROSS),gcc-$(TRIPLET_$a) musl-dev:$a) qemu-user-static qemu-system-arm

# make demo's alone (test/qemu/demo.sh): the build and its prepend
# image (musl-tools, gcc, make, binutils' readelf, cpio), Debian's
# kernel with its modules resolved (kmod), the busybox test image and
# QEMU. No cross build, no test tool, no package builder.
DEMO_DEPS = musl-tools gcc make binutils cpio kmod busybox-static qemu-system-x86

# A mirror that fails one index (a security suite without armhf, say)
# fails apt-get update whole, though every other index came: the install
# goes on with what came, and fails itself where a package is missing.
APT_UPDATE = apt-get update || echo "make $@: apt-get update failed in part; installing from what it fetched" >&2

# install_deps ARCHS,PACKAGES: each foreign architecture of ARCHS added
# to dpkg, then the PACKAGES not installed yet; as a normal user, what
# root would run is said instead.
define install_deps
@have=$$(dpkg --print-foreign-architectures); for a in $1; do \
case " $$(echo $$have) " in *" $$a "*) continue ;; esac; \
if [ "$$(id -u)" != 0 ]; then echo "make $@: as root run: dpkg --add-architecture $$a" >&2; exit 1; fi; \
echo "make $@: dpkg --add-architecture $$a"; dpkg --add-architecture $$a || exit 1; $(APT_UPDATE); done
@missing=; for p in $2; do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
[ -z "$$missing" ] && exit 0; \
if [ "$$(id -u)" != 0 ]; then echo "make $@: missing Debian packages; as root run: apt-get install$$missing" >&2; exit 1; fi; \
echo "make $@: installing$$missing"; \
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing || \
{ $(APT_UPDATE); DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; }
endef

deps:
	$(call install_deps,$(CROSS),$(DEPS))

demo-deps:
	$(call install_deps,,$(DEMO_DEPS))


# What make install puts where: MODE:SOURCE:DESTINATION, one file a
# line. The text files go through SUBST, which fills in where the binary,
# modules.sh and the units were installed (the hooks and units name
# them); the binary is copied as it is.
INSTALLED = \
	755:$(O)/drvbind:$(SBINDIR)/drvbind \
	644:applet/drvbind.8:$(MANDIR)/man8/drvbind.8 \
	644:applet/drvbind.conf.5:$(MANDIR)/man5/drvbind.conf.5 \
	644:initramfs/modules.sh:$(DATADIR)/modules.sh \
	644:initramfs/inittab:$(DATADIR)/inittab \
	755:initramfs/runit/drvbind-follow/run:$(DATADIR)/runit/drvbind-follow/run \
	755:initramfs/initramfs-tools/hook:$(ITOOLSDIR)/hooks/drvbind \
	755:initramfs/initramfs-tools/init-top:$(ITOOLSDIR)/scripts/init-top/drvbind \
	755:initramfs/dracut/module-setup.sh:$(DRACUTDIR)/module-setup.sh \
	755:initramfs/dracut/drvbind.sh:$(DRACUTDIR)/drvbind.sh \
	644:initramfs/mkinitcpio/install:$(CPIODIR)/install/drvbind \
	644:initramfs/mkinitcpio/hook:$(CPIODIR)/hooks/drvbind \
	644:initramfs/drvbind.service:$(UNITDIR)/drvbind.service \
	644:initramfs/drvbind-follow.service:$(UNITDIR)/drvbind-follow.service
# The directories that are drvbind's alone, which uninstall removes.
INSTALLED_DIRS = $(DATADIR)/runit/drvbind-follow $(DATADIR)/runit $(DATADIR) $(DRACUTDIR)

SUBST = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' -e 's|@UNITDIR@|$(UNITDIR)|g'
field = $(word $1,$(subst :, ,$2))
define newline


endef

# install_file MODE SOURCE DESTINATION
install_file = mkdir -p $(dir $3) && \
	$(if $(filter $(O)/drvbind,$2),cp $2 $3,$(SUBST) $2 >$3) && chmod $1 $3

install: $(O)/drvbind
	$(foreach f,$(INSTALLED),$(call install_file,$(call field,1,$f),$(call field,2,$f),$(DESTDIR)$(call field,3,$f))$(newline))

uninstall:
	rm -f $(foreach f,$(INSTALLED),$(DESTDIR)$(call field,3,$f))
	rmdir $(INSTALLED_DIRS:%=$(DESTDIR)%) 2>/dev/null || true

clean:
	rm -rf build

.PHONY: all initramfs size print-cc print-nm test check check-cross check-asan check-ubsan fuzz \
	bench demo demo-fake deps demo-deps install uninstall clean
