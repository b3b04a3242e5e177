"""User-facing tools over models and artefacts: write (atomic build + manifest), diff, products, test runner."""
