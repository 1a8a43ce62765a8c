"""Machine checks of every theorem in docs/theory.md: ``python -m proofs_checks``."""
