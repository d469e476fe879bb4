# A rule for a device that never comes (00:1f.0) beside one that can be
# applied at once (00:05.0), with drvbind.timeout=3.
load e1000 pci-stub
settle pci 0000:00:05.0
start missing
# the present device must not wait for the missing one
sleep 1
link missing.early pci 0000:00:05.0
finish
link missing pci 0000:00:05.0
