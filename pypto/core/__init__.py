"""The IR core: ``Program``, its printers and parser context, pass settings (no passes, no pipeline)."""
