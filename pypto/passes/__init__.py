"""The passes of the pl pipeline: one module per pass, plus the pass base, the registry and the pipeline order."""
