# SPDX-License-Identifier: MIT
# Bad rules on the real command line beside one good rule (00:06.0).
load e1000 pci-stub
settle pci 0000:00:05.0
settle pci 0000:00:06.0
say "malformed.cmdline $(cat /proc/cmdline)"
run malformed
link malformed pci 0000:00:05.0
link malformed pci 0000:00:06.0
