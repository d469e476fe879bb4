# SPDX-License-Identifier: MIT
include $(sort $(wildcard $(BR2_EXTERNAL_DRVBIND_PATH)/package/*/*.mk))
