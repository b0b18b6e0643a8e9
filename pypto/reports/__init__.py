"""The one HTML report shell shared by every report (ir-trace, memory map, ...)."""
