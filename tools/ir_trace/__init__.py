"""pypto-ir-trace: the lowering pipeline as one self-contained HTML report."""
