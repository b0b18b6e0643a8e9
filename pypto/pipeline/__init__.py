"""The pass pipeline machinery: the PassManager, dumps, verification, checks and perf hints, ``lower_program``."""
